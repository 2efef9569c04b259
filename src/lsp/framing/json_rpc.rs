//! A framed body read as JSON-RPC 2.0: whether it is a message the service accepts, the id of a
//! request that is owed a reply, and the error replies owed (JSON-RPC 2.0, section 5.1).

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::{Request, Response};

use super::Frame;

/// JSON-RPC error codes (JSON-RPC 2.0, section 5.1).
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;

/// Turns a body into a message the service accepts, or into the replies its errors are owed.
pub(super) fn classify(body: Vec<u8>) -> Frame {
    let text = match std::str::from_utf8(&body) {
        Ok(text) => text,
        Err(error) => {
            let reason = format!("invalid UTF-8 at byte {} of the body", error.valid_up_to());
            let lossy = String::from_utf8_lossy(&body);
            let id = serde_json::from_str::<Value>(&lossy)
                .ok()
                .as_ref()
                .and_then(request_id);
            return rejected(reason, id, PARSE_ERROR);
        }
    };
    let (value, body) = match serde_json::from_str::<Value>(text) {
        Ok(value) => (value, body),
        Err(error) => {
            // A lone surrogate escape (`"\ud800"`, which an editor sends for half of an emoji) is
            // JSON no UTF-8 string can hold: it becomes U+FFFD, one UTF-16 code unit as the
            // surrogate was, so the positions of later edits stay right and the server's text
            // stays the client's, but for that character.
            let repaired = without_lone_surrogates(text);
            match serde_json::from_str::<Value>(&repaired) {
                Ok(value) => (value, repaired.into_bytes()),
                Err(_) => {
                    let reason = format!("malformed JSON: {error}");
                    return rejected(reason, top_level_id(text), PARSE_ERROR);
                }
            }
        }
    };
    match &value {
        Value::Array(items) => Frame::Rejected {
            reason: format!(
                "a batch of {} messages (JSON array); LSP has no batches",
                items.len()
            ),
            replies: items
                .iter()
                .filter_map(request_id)
                .map(|id| reply_error(id, INVALID_REQUEST, "LSP has no batches"))
                .collect(),
        },
        Value::Object(_)
            if Request::deserialize(&value).is_ok() || Response::deserialize(&value).is_ok() =>
        {
            Frame::Message {
                message: value,
                body,
            }
        }
        _ => {
            let id = request_id(&value);
            rejected(
                "not a JSON-RPC 2.0 request, notification or response".to_string(),
                id,
                INVALID_REQUEST,
            )
        }
    }
}

fn rejected(reason: String, id: Option<Value>, code: i64) -> Frame {
    Frame::Rejected {
        replies: id
            .map(|id| reply_error(id, code, &reason))
            .into_iter()
            .collect(),
        reason,
    }
}

/// The id of a message that expects a reply: a request's number or string. Responses (with a
/// `result` or an `error` and no `method`) are never answered.
pub fn request_id(message: &Value) -> Option<Value> {
    let object = message.as_object()?;
    if !object.contains_key("method")
        && (object.contains_key("result") || object.contains_key("error"))
    {
        return None;
    }
    match object.get("id")? {
        id @ Value::String(_) => Some(id.clone()),
        Value::Number(number) if number.is_i64() => Some(Value::Number(number.clone())),
        _ => None,
    }
}

/// An error response.
pub fn reply_error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The `method` of a message, read without building the message: `None` for a response or
/// a body that is not a JSON object.
pub fn method_of(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Head>(body)
        .ok()?
        .method
        .map(|method| method.into_owned())
}

/// `text` with every lone surrogate `\uXXXX` escape replaced by U+FFFD's; a high surrogate
/// followed by a low one (a character outside the BMP) is kept.
fn without_lone_surrogates(text: &str) -> String {
    let bytes = text.as_bytes();
    let escape_at = |at: usize| -> Option<u16> {
        if bytes.get(at) != Some(&b'\\') || bytes.get(at + 1) != Some(&b'u') {
            return None;
        }
        let hex = std::str::from_utf8(bytes.get(at + 2..at + 6)?).ok()?;
        u16::from_str_radix(hex, 16).ok()
    };
    let high = |code: u16| (0xd800..=0xdbff).contains(&code);
    let low = |code: u16| (0xdc00..=0xdfff).contains(&code);
    let mut repaired = String::with_capacity(text.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'\\' && bytes.get(at + 1) == Some(&b'\\') {
            // An escaped backslash: the `u` after it is no escape.
            repaired.push_str("\\\\");
            at += 2;
            continue;
        }
        if let Some(code) = escape_at(at) {
            if high(code) && escape_at(at + 6).is_some_and(low) {
                repaired.push_str(&text[at..at + 12]);
                at += 12;
            } else if high(code) || low(code) {
                repaired.push_str("\\ufffd");
                at += 6;
            } else {
                repaired.push_str(&text[at..at + 6]);
                at += 6;
            }
            continue;
        }
        let width = text[at..].chars().next().map_or(1, char::len_utf8);
        repaired.push_str(&text[at..at + width]);
        at += width;
    }
    repaired
}

/// The id of a request in a body that is not valid JSON, read leniently: the value of an `"id"`
/// key of the outermost object (a number or a string without escapes), as far as the body goes.
/// A reply to it lets the client give up waiting; an id inside `params` is never taken.
fn top_level_id(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = at + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end] != b'"' {
                    end += if bytes[end] == b'\\' { 2 } else { 1 };
                }
                let key = bytes.get(start..end)?;
                at = end + 1;
                let value = || {
                    let rest = text.get(at..)?.trim_start().strip_prefix(':')?.trim_start();
                    let value_end = rest
                        .find(|c: char| matches!(c, ',' | '}') || c.is_whitespace())
                        .unwrap_or(rest.len());
                    serde_json::from_str::<Value>(&rest[..value_end]).ok()
                };
                if depth == 1
                    && key == b"id"
                    && let Some(value) = value()
                {
                    return request_id(&json!({"method": "", "id": value}));
                }
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    None
}
