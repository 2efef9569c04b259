//! The headers of a frame (LSP specification, "Base Protocol"): ASCII lines of `Name: value`,
//! each ending in CRLF, then a blank line; read defensively, with the length of the body, or why
//! it is unknown, and the place of the next `Content-Length` header to resynchronise at.

/// Headers longer than this are not headers: the bytes are resynchronised past.
const MAX_HEADER_LEN: usize = 4096;
pub(super) const CONTENT_LENGTH: &[u8] = b"content-length:";

pub(super) enum Headers {
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
pub(super) fn parse_headers(bytes: &[u8]) -> Headers {
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
            let parsed = value
                .parse::<usize>()
                .ok()
                .filter(|_| value.bytes().all(|byte| byte.is_ascii_digit()))
                .ok_or_else(|| format!("invalid Content-Length `{}`", value.escape_debug()));
            // Two lengths that differ leave the body's end unknown: the body is then read as far
            // as its JSON goes, so the message after it is not swallowed.
            length = Some(match (length, parsed) {
                (None, parsed) => parsed,
                (Some(Ok(first)), Ok(second)) if first == second => Ok(first),
                (Some(Ok(first)), Ok(second)) => Err(format!(
                    "two Content-Length headers that differ ({first} and {second})"
                )),
                (Some(Err(problem)), _) | (Some(Ok(_)), Err(problem)) => Err(problem),
            });
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
pub(super) fn find_header(bytes: &[u8], from: usize) -> Option<usize> {
    if bytes.len() < CONTENT_LENGTH.len() {
        return None;
    }
    (from..=bytes.len() - CONTENT_LENGTH.len())
        .find(|&at| bytes[at..at + CONTENT_LENGTH.len()].eq_ignore_ascii_case(CONTENT_LENGTH))
}
