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
//! whose id is unknown is only logged. The id of broken JSON is read as far as the body goes.
//! Two `Content-Length` headers that differ leave the body's end to its JSON.

mod headers;
pub mod json_rpc;

use serde_json::Value;

use headers::{CONTENT_LENGTH, Headers, find_header, parse_headers};
use json_rpc::{PARSE_ERROR, classify, reply_error, request_id};

/// The largest message accepted. The server skips source files over 2 MB; a `didOpen` carries a
/// file at most twice over (JSON escapes), so nothing legitimate comes near this.
pub const MAX_MESSAGE_LEN: usize = 64 << 20;
/// How far a JSON value without a header is followed before its bytes are skipped instead.
const MAX_UNFRAMED_VALUE: usize = 1 << 20;

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

/// The message framed for the wire.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

#[cfg(test)]
mod tests;
