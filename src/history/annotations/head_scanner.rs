//! The head of a test, the text before its name, read into the markers (annotations, decorators,
//! attributes) and comments it holds, and the string literals of a marker's arguments. Strings are
//! skipped whole, so that a `#` or `//` inside one is not a comment and a bracket inside one does
//! not end a marker.

use std::ops::Range;

use crate::language::Language;

/// A piece of a test's head: the text before its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    /// `@Name(args)` in Java and Python, `#[name args]` in Rust; `range` covers all of it, `args`
    /// what follows the name (inside the parentheses, or the rest of the attribute).
    Marker {
        range: Range<usize>,
        name: String,
        args: Option<Range<usize>>,
    },
    Comment {
        range: Range<usize>,
    },
}

/// Finds the markers and comments of a test's head. Strings are skipped whole, so a `#` or `//`
/// inside one is not a comment, and brackets inside one do not end a marker.
pub(super) fn scan_head(language: Language, head: &str) -> Vec<Piece> {
    let bytes = head.as_bytes();
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        match (language, rest) {
            (_, [b'"' | b'\'', ..]) => at = skip_string(language, bytes, at),
            (Language::Java | Language::Rust, [b'/', b'/', ..])
            | (Language::Python, [b'#', ..]) => {
                let end = find_from(bytes, at, b"\n").unwrap_or(bytes.len());
                pieces.push(Piece::Comment { range: at..end });
                at = end;
            }
            (Language::Java | Language::Rust, [b'/', b'*', ..]) => {
                let end = find_from(bytes, at + 2, b"*/").map_or(bytes.len(), |end| end + 2);
                pieces.push(Piece::Comment { range: at..end });
                at = end;
            }
            (Language::Rust, [b'#', b'[', ..]) => {
                let end = matching_close(language, bytes, at + 1).unwrap_or(bytes.len());
                let inner = at + 2..end.saturating_sub(1).max(at + 2);
                let name_end = inner.start
                    + head[inner.clone()]
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                        .unwrap_or(inner.len());
                pieces.push(Piece::Marker {
                    range: at..end,
                    name: head[inner.start..name_end].to_string(),
                    args: Some(name_end..inner.end),
                });
                at = end;
            }
            (Language::Java | Language::Python, [b'@', ..]) => {
                let name_end = at
                    + 1
                    + head[at + 1..]
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                        .unwrap_or(head.len() - at - 1);
                let open = name_end
                    + head[name_end..]
                        .find(|c: char| c != ' ' && c != '\t')
                        .unwrap_or(head.len() - name_end);
                let (end, args) = if bytes.get(open) == Some(&b'(') {
                    let end = matching_close(language, bytes, open).unwrap_or(bytes.len());
                    (end, Some(open + 1..end.saturating_sub(1).max(open + 1)))
                } else {
                    (name_end, None)
                };
                pieces.push(Piece::Marker {
                    range: at..end,
                    name: head[at + 1..name_end].to_string(),
                    args,
                });
                at = end.max(at + 1);
            }
            _ => at += 1,
        }
    }
    pieces
}

/// The position after the bracket closing the one at `open` (`(` or `[`), skipping strings.
fn matching_close(language: Language, bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                at = skip_string(language, bytes, at);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// The position after the string literal starting at `at`: `"..."` in every language, `'...'`
/// and triple quotes in Python, text blocks in Java. A `'` outside Python is a character literal
/// or a lifetime; it is stepped over alone.
fn skip_string(language: Language, bytes: &[u8], at: usize) -> usize {
    let quote = bytes[at];
    if quote == b'\'' && language != Language::Python {
        return at + 1;
    }
    let triple = bytes.get(at..at + 3) == Some(&[quote, quote, quote][..]);
    if triple && language != Language::Rust {
        let closing = [quote, quote, quote];
        return find_from(bytes, at + 3, &closing).map_or(bytes.len(), |end| end + 3);
    }
    let mut position = at + 1;
    while position < bytes.len() {
        match bytes[position] {
            b'\\' => position += 2,
            byte if byte == quote => return position + 1,
            b'\n' if language == Language::Python => return position,
            _ => position += 1,
        }
    }
    bytes.len()
}

fn find_from(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|position| from + position)
}

/// The contents of the string literals in a marker's arguments.
pub(super) fn string_literals(language: Language, text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut literals = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'"' || (bytes[at] == b'\'' && language == Language::Python) {
            let end = skip_string(language, bytes, at);
            let quote_len = if bytes.get(at..at + 3).is_some_and(|start| {
                start.iter().all(|&byte| byte == bytes[at]) && language != Language::Rust
            }) && end >= at + 6
            {
                3
            } else {
                1
            };
            if let Some(content) = text.get(at + quote_len..end.saturating_sub(quote_len)) {
                literals.push(content.to_string());
            }
            at = end.max(at + 1);
        } else {
            at += 1;
        }
    }
    literals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_hide_comment_markers_and_brackets() {
        let pieces = scan_head(Language::Python, "@skip(\"a # b)\") # real\n");
        assert_eq!(pieces.len(), 2);
        assert!(matches!(&pieces[0], Piece::Marker { name, .. } if name == "skip"));
        assert_eq!(
            string_literals(Language::Python, "reason='x', other=\"\"\"y\"\"\""),
            ["x", "y"]
        );
    }
}
