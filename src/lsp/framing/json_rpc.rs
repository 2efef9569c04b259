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
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(error) => {
            let reason = format!("malformed JSON: {error}");
            // A lone surrogate escape (`"\ud800"`) is the only error that leaves the rest of the
            // message readable: read the id of the message with the escapes replaced.
            let id = serde_json::from_str::<Value>(&without_surrogate_escapes(text))
                .ok()
                .as_ref()
                .and_then(request_id);
            return rejected(reason, id, PARSE_ERROR);
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

/// `text` with every surrogate `\uXXXX` escape replaced by U+FFFD's.
fn without_surrogate_escapes(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut repaired = String::with_capacity(text.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'\\' && bytes.get(at + 1) == Some(&b'u') && at + 6 <= bytes.len() {
            let code = std::str::from_utf8(&bytes[at + 2..at + 6])
                .ok()
                .and_then(|hex| u16::from_str_radix(hex, 16).ok());
            if code.is_some_and(|code| (0xd800..=0xdfff).contains(&code)) {
                repaired.push_str("\\ufffd");
                at += 6;
                continue;
            }
            repaired.push_str(&text[at..at + 2]);
            at += 2;
            continue;
        }
        let width = text[at..].chars().next().map_or(1, char::len_utf8);
        repaired.push_str(&text[at..at + width]);
        at += width;
    }
    repaired
}
