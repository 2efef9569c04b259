//! The base protocol's framing (LSP specification, "Base Protocol"), read defensively:
//! `Content-Length` and other headers, a blank line, then one JSON-RPC message in UTF-8.
//!
//! tower-lsp-server's own decoder ends its input stream at the first message it cannot decode,
//! which ended the server. The server therefore reads its input through this decoder: a message
//! tower-lsp-server will accept is handed on, any other is rejected with the error replies owed
//! to the ids that can be recovered from it (JSON-RPC 2.0, section 5.1), and the decoder finds the
//! start of the next message. Only a stream it cannot follow any further ends the server.
//!
//! Ids: JSON-RPC asks for a reply with a `null` id when the id cannot be read, but an LSP client
//! matches replies to its requests by id and has nothing to match a `null` to, so a message
//! whose id is unknown is only logged.

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::{Request, Response};

/// The largest message accepted. The server skips source files over 2 MB; a `didOpen` carries a
/// file at most twice over (JSON escapes), so nothing legitimate comes near this.
pub const MAX_MESSAGE_LEN: usize = 64 << 20;
/// Headers longer than this are not headers: the bytes are resynchronised past.
const MAX_HEADER_LEN: usize = 4096;
const CONTENT_LENGTH: &[u8] = b"content-length:";
/// How far a JSON value without a header is followed before its bytes are skipped instead.
const MAX_UNFRAMED_VALUE: usize = 1 << 20;

/// JSON-RPC error codes (JSON-RPC 2.0, section 5.1).
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;

/// What the decoder made of the next bytes of the stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A JSON-RPC message the service accepts, and its body's bytes.
    Message { message: Value, body: Vec<u8> },
    /// Bytes that are not such a message: why, and the error replies owed to the ids found in
    /// them (none when no id could be read).
    Rejected { reason: String, replies: Vec<Value> },
}

/// The stream cannot be followed any further; the reason says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unrecoverable(pub String);

/// Splits a byte stream into frames. Feed it with [`Decoder::push`], take frames with
/// [`Decoder::next_frame`] until it has none, and call [`Decoder::finish`] at the end of input.
#[derive(Debug, Default)]
pub struct Decoder {
    buffer: Vec<u8>,
    /// While looking for the next header after bytes that were not a message: why, and how
    /// many bytes were discarded so far.
    skipping: Option<(String, usize)>,
}

impl Decoder {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next frame, or `None` when more bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, Unrecoverable> {
        Ok(self.next_raw()?.map(|raw| match raw {
            Raw::Body(body) => classify(body),
            Raw::Rejected(frame) => frame,
        }))
    }

    /// The next framed body, unread, or `None` when more bytes are needed; bytes that are not a
    /// framed message are skipped. For a stream whose messages need no checking: the service's
    /// own output, where reading each 150 KB publication whole only to relay it cost a keystroke
    /// about 4 ms (`cargo bench --bench lsp`).
    pub fn next_body(&mut self) -> Result<Option<Vec<u8>>, Unrecoverable> {
        loop {
            match self.next_raw()? {
                None => return Ok(None),
                Some(Raw::Body(body)) => return Ok(Some(body)),
                Some(Raw::Rejected(_)) => {}
            }
        }
    }

    fn next_raw(&mut self) -> Result<Option<Raw>, Unrecoverable> {
        if let Some((reason, discarded)) = self.skipping.take() {
            return self.skip_to_header(0, reason, discarded);
        }
        // Blank lines between messages are harmless; some clients end a body with one.
        let blank = self
            .buffer
            .iter()
            .take_while(|byte| matches!(byte, b'\r' | b'\n' | b' ' | b'\t'))
            .count();
        self.buffer.drain(..blank);
        if self.buffer.is_empty() {
            return Ok(None);
        }
        match parse_headers(&self.buffer) {
            Headers::Incomplete => Ok(None),
            Headers::Complete {
                length: Ok(length),
                end,
            } => {
                if length > MAX_MESSAGE_LEN {
                    return Err(Unrecoverable(format!(
                        "a message of {length} bytes is over the limit of {MAX_MESSAGE_LEN}: \
                         the stream cannot be followed past it"
                    )));
                }
                if self.buffer.len() < end + length {
                    return Ok(None);
                }
                let body: Vec<u8> = self.buffer[end..end + length].to_vec();
                self.buffer.drain(..end + length);
                Ok(Some(Raw::Body(body)))
            }
            Headers::Complete {
                length: Err(problem),
                end,
            } => self.unframed(end, problem),
            Headers::Malformed(problem) => self.unframed(0, problem),
        }
    }

    /// At the end of the input: what was left unread, if anything.
    pub fn finish(&mut self) -> Option<String> {
        if let Some((reason, discarded)) = self.skipping.take() {
            return Some(format!(
                "{reason}; {discarded} bytes discarded up to the end of the input"
            ));
        }
        let left = self
            .buffer
            .iter()
            .filter(|byte| !byte.is_ascii_whitespace())
            .count();
        (left > 0).then(|| {
            format!(
                "the input ended inside a message ({} bytes unread)",
                self.buffer.len()
            )
        })
    }

    /// Bytes from `start` on whose extent no header gives: a JSON value there is one message
    /// without its header (answered if it has an id); anything else is discarded up to the next
    /// header.
    fn unframed(&mut self, start: usize, problem: String) -> Result<Option<Raw>, Unrecoverable> {
        let rest = &self.buffer[start..];
        let next_header = find_header(rest, 1);
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) if next_header.is_none_or(|at| values.byte_offset() <= at) => {
                let end = start + values.byte_offset();
                self.buffer.drain(..end);
                let replies = request_id(&value)
                    .map(|id| reply_error(id, PARSE_ERROR, &problem))
                    .into_iter()
                    .collect();
                Ok(Some(Raw::Rejected(Frame::Rejected {
                    reason: problem,
                    replies,
                })))
            }
            // Waiting for the rest of a value is bounded: past the limit the bytes are skipped.
            None if next_header.is_none() => Ok(None),
            Some(Err(error))
                if error.is_eof() && next_header.is_none() && rest.len() <= MAX_UNFRAMED_VALUE =>
            {
                Ok(None)
            }
            _ => self.skip_to_header(start.max(1), problem, 0),
        }
    }

    /// Discards bytes up to the next `Content-Length` header at or after `from`.
    fn skip_to_header(
        &mut self,
        from: usize,
        reason: String,
        discarded: usize,
    ) -> Result<Option<Raw>, Unrecoverable> {
        match find_header(&self.buffer, from) {
            Some(at) => {
                self.buffer.drain(..at);
                Ok(Some(Raw::Rejected(Frame::Rejected {
                    reason: format!("{reason}; {} bytes discarded", discarded + at),
                    replies: Vec::new(),
                })))
            }
            None => {
                // Keep a tail that may be the start of a header cut off by the read.
                let keep = CONTENT_LENGTH.len() - 1;
                let drop = self
                    .buffer
                    .len()
                    .saturating_sub(keep)
                    .max(from.min(self.buffer.len()));
                self.buffer.drain(..drop);
                let discarded = discarded + drop;
                if discarded > MAX_MESSAGE_LEN {
                    return Err(Unrecoverable(format!(
                        "{reason}, and no message header follows in {discarded} bytes"
                    )));
                }
                self.skipping = Some((reason, discarded));
                Ok(None)
            }
        }
    }
}

/// A framed body not yet read, or bytes rejected as a frame.
enum Raw {
    Body(Vec<u8>),
    Rejected(Frame),
}

enum Headers {
    /// The blank line that ends the headers has not arrived yet.
    Incomplete,
    /// The headers end at `end`; the body's length, or why it is unknown.
    Complete {
        length: Result<usize, String>,
        end: usize,
    },
    /// The bytes are not headers at all.
    Malformed(String),
}

/// Reads the header lines at the start of `bytes` (ASCII, `Name: value`, each ending in CRLF).
fn parse_headers(bytes: &[u8]) -> Headers {
    let mut length = None;
    let mut at = 0;
    loop {
        let Some(line_len) = bytes[at..].windows(2).position(|pair| pair == b"\r\n") else {
            let partial = &bytes[at..];
            if bytes.len() > MAX_HEADER_LEN {
                return Headers::Malformed(format!("headers longer than {MAX_HEADER_LEN} bytes"));
            }
            if let Some(problem) = header_line_problem(partial, true) {
                return Headers::Malformed(problem);
            }
            return Headers::Incomplete;
        };
        let line = &bytes[at..at + line_len];
        at += line_len + 2;
        if line.is_empty() {
            let length = length.unwrap_or_else(|| Err(no_content_length(bytes, at)));
            return Headers::Complete { length, end: at };
        }
        if at > MAX_HEADER_LEN {
            return Headers::Malformed(format!("headers longer than {MAX_HEADER_LEN} bytes"));
        }
        if let Some(problem) = header_line_problem(line, false) {
            return Headers::Malformed(problem);
        }
        let colon = line.iter().position(|&byte| byte == b':').unwrap_or(0);
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.eq_ignore_ascii_case(b"content-length") {
            let value = String::from_utf8_lossy(value);
            let value = value.trim();
            length = Some(
                value
                    .parse::<usize>()
                    .ok()
                    .filter(|_| value.bytes().all(|byte| byte.is_ascii_digit()))
                    .ok_or_else(|| format!("invalid Content-Length `{}`", value.escape_debug())),
            );
        }
    }
}

/// Why a header line (or the start of one, when `partial`) cannot be a header, if it cannot.
fn header_line_problem(line: &[u8], partial: bool) -> Option<String> {
    // A trailing CR may be the first half of a CRLF cut off by the read.
    let line = match line {
        [start @ .., b'\r'] if partial => start,
        _ => line,
    };
    let printable = |byte: &u8| byte.is_ascii_graphic() || *byte == b' ' || *byte == b'\t';
    let shown = || {
        String::from_utf8_lossy(&line[..line.len().min(40)])
            .escape_debug()
            .to_string()
    };
    if line.iter().any(|byte| !printable(byte)) {
        return Some(format!("not a message header: `{}`", shown()));
    }
    let name_end = line.iter().position(|&byte| byte == b':');
    let name = &line[..name_end.unwrap_or(line.len())];
    if name.is_empty() && name_end.is_some()
        || name
            .iter()
            .any(|&byte| !(byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'))
        || (!partial && name_end.is_none())
    {
        return Some(format!("not a message header: `{}`", shown()));
    }
    None
}

fn no_content_length(bytes: &[u8], end: usize) -> String {
    let names: Vec<String> = bytes[..end]
        .split(|&byte| byte == b'\n')
        .filter_map(|line| {
            let colon = line.iter().position(|&byte| byte == b':')?;
            Some(
                String::from_utf8_lossy(&line[..colon])
                    .escape_debug()
                    .to_string(),
            )
        })
        .collect();
    format!(
        "no Content-Length header (headers: {})",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )
}

/// The position of the next `Content-Length:` header (any case) at or after `from`.
fn find_header(bytes: &[u8], from: usize) -> Option<usize> {
    if bytes.len() < CONTENT_LENGTH.len() {
        return None;
    }
    (from..=bytes.len() - CONTENT_LENGTH.len())
        .find(|&at| bytes[at..at + CONTENT_LENGTH.len()].eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// Turns a body into a message the service accepts, or into the replies its errors are owed.
fn classify(body: Vec<u8>) -> Frame {
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

/// The message framed for the wire.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
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

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &str) -> Vec<u8> {
        frame(body.as_bytes())
    }

    fn decode_all(bytes: &[u8]) -> (Vec<Frame>, Option<String>) {
        let mut decoder = Decoder::default();
        let mut frames = Vec::new();
        // One byte at a time: every state must survive a read cut anywhere.
        for byte in bytes {
            decoder.push(std::slice::from_ref(byte));
            while let Some(frame) = decoder.next_frame().expect("recoverable") {
                frames.push(frame);
            }
        }
        (frames, decoder.finish())
    }

    const SHUTDOWN: &str = r#"{"jsonrpc":"2.0","id":9,"method":"shutdown"}"#;

    fn is_shutdown(frame: &Frame) -> bool {
        matches!(frame, Frame::Message { message, .. } if message["id"] == 9)
    }

    fn replies(frame: &Frame) -> Vec<(Value, i64)> {
        match frame {
            Frame::Rejected { replies, .. } => replies
                .iter()
                .map(|reply| {
                    (
                        reply["id"].clone(),
                        reply["error"]["code"].as_i64().unwrap(),
                    )
                })
                .collect(),
            Frame::Message { .. } => panic!("not rejected: {frame:?}"),
        }
    }

    #[test]
    fn the_service_output_is_relayed_body_by_body_with_its_method() {
        let publication = r#"{"jsonrpc":"2.0","method":"textDocument\/publishDiagnostics","params":{"uri":"file:///a.java","diagnostics":[]}}"#;
        let response =
            r#"{"jsonrpc":"2.0","result":{"method":"textDocument/publishDiagnostics"},"id":3}"#;
        let mut bytes = b"garbage before".to_vec();
        bytes.extend(framed(publication));
        bytes.extend(framed(response));
        let mut decoder = Decoder::default();
        let mut bodies = Vec::new();
        for byte in &bytes {
            decoder.push(std::slice::from_ref(byte));
            while let Some(body) = decoder.next_body().expect("recoverable") {
                bodies.push(body);
            }
        }
        assert_eq!(bodies, [publication.as_bytes(), response.as_bytes()]);
        // An escaped slash is still the method; a response has none, whatever its result holds.
        assert_eq!(
            method_of(&bodies[0]).as_deref(),
            Some("textDocument/publishDiagnostics")
        );
        assert_eq!(method_of(&bodies[1]), None);
        assert_eq!(method_of(b"[1, 2]"), None);
    }

    #[test]
    fn good_messages_pass_whole_whatever_the_reads() {
        let mut bytes = framed(SHUTDOWN);
        bytes.extend(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
        bytes.extend(framed(r#"{"jsonrpc":"2.0","method":"exit"}"#));
        let (frames, left) = decode_all(&bytes);
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert!(is_shutdown(&frames[0]));
        assert_eq!(left, None);
    }

    #[test]
    fn each_malformed_body_is_answered_when_its_id_is_known() {
        // A body, and the (id, code) of each error reply it is owed.
        type Case<'a> = (&'a [u8], Vec<(Value, i64)>);
        let cases: [Case; 7] = [
            (br#"{"jsonrpc":"2.0","id":1,"method":"#, vec![]),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\xff\"}",
                vec![(json!(2), PARSE_ERROR)],
            ),
            (
                br#"{"jsonrpc":"2.0","id":3,"method":"hover","params":{"a":"\ud800"}}"#,
                vec![(json!(3), PARSE_ERROR)],
            ),
            (
                br#"[{"jsonrpc":"2.0","id":4,"method":"a"},{"jsonrpc":"2.0","method":"b"}]"#,
                vec![(json!(4), INVALID_REQUEST)],
            ),
            (br#"{"jsonrpc":"2.0","id":1.5,"method":"a"}"#, vec![]),
            (
                br#"{"jsonrpc":"1.0","id":"six","method":"a"}"#,
                vec![(json!("six"), INVALID_REQUEST)],
            ),
            (b"17", vec![]),
        ];
        for (body, expected) in cases {
            let mut bytes = frame(body);
            bytes.extend(framed(SHUTDOWN));
            let (frames, left) = decode_all(&bytes);
            assert_eq!(frames.len(), 2, "{frames:?}");
            assert_eq!(replies(&frames[0]), expected, "{frames:?}");
            assert!(is_shutdown(&frames[1]), "{frames:?}");
            assert_eq!(left, None);
        }
    }

    #[test]
    fn a_misspelt_content_length_is_answered_and_passed() {
        let body = r#"{"jsonrpc":"2.0","id":5,"method":"hover"}"#;
        let mut bytes = format!("Content-Lenght: {}\r\n\r\n{body}", body.len()).into_bytes();
        bytes.extend(framed(SHUTDOWN));
        let (frames, _) = decode_all(&bytes);
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!(
            replies(&frames[0]),
            vec![(json!(5), PARSE_ERROR)],
            "{frames:?}"
        );
        assert!(is_shutdown(&frames[1]));
    }

    #[test]
    fn garbage_is_skipped_up_to_the_next_header() {
        for garbage in [
            &b"hello world\r\n\r\n"[..],
            b"Content-Length: abc\r\n\r\n{{{{",
            b"\x00\x01\x02\xff",
            b"{\"unterminated",
        ] {
            let mut bytes = garbage.to_vec();
            bytes.extend(framed(SHUTDOWN));
            let (frames, left) = decode_all(&bytes);
            assert!(
                frames.last().is_some_and(is_shutdown),
                "{garbage:?}: {frames:?}"
            );
            assert_eq!(left, None);
        }
    }

    #[test]
    fn a_huge_length_cannot_be_followed() {
        let mut decoder = Decoder::default();
        decoder.push(b"Content-Length: 99999999999\r\n\r\n{}");
        assert!(decoder.next_frame().is_err());
    }

    #[test]
    fn endless_garbage_ends_the_stream() {
        let mut decoder = Decoder::default();
        let chunk = vec![b'x'; 1 << 20];
        let mut ended = false;
        for _ in 0..80 {
            decoder.push(&chunk);
            match decoder.next_frame() {
                Err(_) => {
                    ended = true;
                    break;
                }
                Ok(frame) => assert!(matches!(frame, None | Some(Frame::Rejected { .. }))),
            }
            assert!(decoder.buffer.len() < 1 << 21, "garbage is not kept");
        }
        assert!(ended);
    }

    #[test]
    fn a_truncated_message_is_reported_at_the_end() {
        let bytes = framed(SHUTDOWN);
        let (frames, left) = decode_all(&bytes[..bytes.len() - 3]);
        assert!(frames.is_empty());
        assert!(left.unwrap().contains("inside a message"));
    }
}
