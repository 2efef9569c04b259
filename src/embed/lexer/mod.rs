//! The code tokeniser: a small lexer per language that knows comments, string literals,
//! identifiers and qualified paths, so tokens mean the same thing across projects.
//!
//! A lexer rather than tree-sitter's leaves: labelled data holds single methods out of their
//! files, training tokenises tens of thousands of them in well under a second, and the same
//! function serves the editor, so one test is tokenised the same way wherever it comes from.

use crate::embed::tokenize::{flast_words, is_word_char};
use crate::language::Language;

/// Receivers that say nothing about the call: `self.client.get` is about `client.get`.
const RECEIVERS_WITHOUT_MEANING: [&str; 5] = ["self", "this", "super", "cls", "crate"];

/// Emits the tokens of `code`:
/// - each identifier lower-cased, and its parts when camelCase or snake_case splits it;
/// - `a.b` for each pair of identifiers joined by `.` or `::` (`Thread.sleep` gives `thread.sleep`);
/// - the words of string literals and comments, and `<url>` for a literal holding a URL;
/// - numbers of two or more characters as written.
pub(crate) fn code_tokens(language: Language, code: &str, emit: &mut dyn FnMut(&str)) {
    let bytes = code.as_bytes();
    let mut scratch = String::new();
    // The previous identifier, when only a `.` or `::` separates it from the current position.
    let mut path_left: Option<(usize, usize)> = None;
    let mut after_separator = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if let Some(end) = comment_end(language, bytes, i) {
            flast_words(&code[i..end], emit);
            path_left = None;
            i = end;
            continue;
        }
        if let Some((content, end)) = string_literal(language, bytes, i) {
            string_tokens(&code[content.0..content.1], emit);
            path_left = None;
            i = end;
            continue;
        }
        let c = code[i..].chars().next().unwrap_or(' ');
        if c.is_alphabetic() || c == '_' {
            let end = i + code[i..]
                .find(|c: char| !is_word_char(c))
                .unwrap_or(code.len() - i);
            let word = &code[i..end];
            identifier_tokens(word, &mut scratch, emit);
            if after_separator && let Some((left_start, left_end)) = path_left {
                let left = &code[left_start..left_end];
                if !RECEIVERS_WITHOUT_MEANING.contains(&left) {
                    scratch.clear();
                    scratch.extend(left.chars().flat_map(char::to_lowercase));
                    scratch.push('.');
                    scratch.extend(word.chars().flat_map(char::to_lowercase));
                    emit(&scratch);
                }
            }
            path_left = Some((i, end));
            after_separator = false;
            i = end;
            continue;
        }
        if c.is_ascii_digit() {
            let end = i + code[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(code.len() - i);
            let number = code[i..end].trim_end_matches('.');
            if number.len() >= 2 {
                scratch.clear();
                scratch.push_str(&number.to_ascii_lowercase());
                emit(&scratch);
            }
            path_left = None;
            i = end;
            continue;
        }
        if b == b'.' {
            after_separator = path_left.is_some();
            i += 1;
            continue;
        }
        if b == b':' && bytes.get(i + 1) == Some(&b':') {
            after_separator = path_left.is_some();
            i += 2;
            continue;
        }
        path_left = None;
        after_separator = false;
        i += c.len_utf8();
    }
}

/// Emits an identifier lower-cased and, when it has several parts, each part of two or more
/// characters: `countDownLatch` gives `countdownlatch`, `count`, `down`, `latch`.
fn identifier_tokens(word: &str, scratch: &mut String, emit: &mut dyn FnMut(&str)) {
    if word.chars().nth(1).is_none() {
        return;
    }
    scratch.clear();
    scratch.extend(word.chars().flat_map(char::to_lowercase));
    emit(scratch);
    let parts = identifier_parts(word);
    if parts.len() < 2 {
        return;
    }
    for part in parts
        .into_iter()
        .filter(|part| part.chars().nth(1).is_some())
    {
        scratch.clear();
        scratch.extend(part.chars().flat_map(char::to_lowercase));
        emit(scratch);
    }
}

/// Splits an identifier at underscores, at lower-to-upper case changes, between letters and
/// digits, and before the last capital of an acronym (`HTTPServer` is `HTTP`, `Server`).
fn identifier_parts(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut part_start = 0;
    for index in 0..chars.len() {
        let (offset, current) = chars[index];
        if current == '_' {
            if offset > part_start {
                parts.push(&word[part_start..offset]);
            }
            part_start = offset + 1;
            continue;
        }
        let Some(&(_, previous)) = index.checked_sub(1).and_then(|i| chars.get(i)) else {
            continue;
        };
        let next_is_lower = chars
            .get(index + 1)
            .is_some_and(|&(_, next)| next.is_lowercase());
        let boundary = (previous.is_lowercase() && current.is_uppercase())
            || (previous.is_alphabetic() && current.is_numeric())
            || (previous.is_numeric() && current.is_alphabetic())
            || (previous.is_uppercase() && current.is_uppercase() && next_is_lower);
        if boundary && offset > part_start {
            parts.push(&word[part_start..offset]);
            part_start = offset;
        }
    }
    if part_start < word.len() {
        parts.push(&word[part_start..]);
    }
    parts
}

/// Emits the words of a string literal, and `<url>` when it holds a URL.
fn string_tokens(content: &str, emit: &mut dyn FnMut(&str)) {
    if content.contains("://") {
        emit("<url>");
    }
    flast_words(content, emit);
}

/// When a comment starts at `i`, returns the byte offset just past it.
fn comment_end(language: Language, bytes: &[u8], i: usize) -> Option<usize> {
    let rest = &bytes[i..];
    let line_end = || i + rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    match language {
        Language::Python => (rest[0] == b'#').then(line_end),
        Language::Java | Language::Rust => {
            if rest.starts_with(b"//") {
                Some(line_end())
            } else if rest.starts_with(b"/*") {
                // Rust block comments nest; Java's do not, and `/*` inside one is rare enough.
                let mut depth = 0usize;
                let mut j = i;
                while j + 1 < bytes.len() {
                    if bytes[j] == b'/' && bytes[j + 1] == b'*' {
                        depth += 1;
                        j += 2;
                    } else if bytes[j] == b'*' && bytes[j + 1] == b'/' {
                        depth -= 1;
                        j += 2;
                        if depth == 0 || language == Language::Java {
                            return Some(j);
                        }
                    } else {
                        j += 1;
                    }
                }
                Some(bytes.len())
            } else {
                None
            }
        }
    }
}

/// When a string literal starts at `i`, returns the byte range of its content and the offset
/// just past it. An unterminated literal runs to the end of its line (or of the code for
/// multi-line forms), so broken code still lexes.
fn string_literal(language: Language, bytes: &[u8], i: usize) -> Option<((usize, usize), usize)> {
    let rest = &bytes[i..];
    match language {
        Language::Java => {
            if rest.starts_with(b"\"\"\"") {
                return Some(delimited(bytes, i + 3, b"\"\"\"", true));
            }
            match rest[0] {
                b'"' => Some(delimited(bytes, i + 1, b"\"", false)),
                b'\'' => Some(delimited(bytes, i + 1, b"'", false)),
                _ => None,
            }
        }
        Language::Python => {
            // An optional prefix of up to two letters among r, b, u, f (in either case).
            let prefix = rest
                .iter()
                .take(2)
                .take_while(|b| b"rRbBuUfF".contains(b))
                .count();
            let quote_at = i + prefix;
            if prefix > 0 && i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')
            {
                return None;
            }
            let quote = *bytes.get(quote_at)?;
            if quote != b'"' && quote != b'\'' {
                return None;
            }
            let raw = rest[..prefix].iter().any(|b| b.eq_ignore_ascii_case(&b'r'));
            let triple = [quote; 3];
            if bytes[quote_at..].starts_with(&triple) {
                return Some(delimited_with(bytes, quote_at + 3, &triple, true, !raw));
            }
            Some(delimited_with(bytes, quote_at + 1, &[quote], false, !raw))
        }
        Language::Rust => {
            // Raw strings: r"..", r#".."#, br#".."#.
            let after_b = if rest[0] == b'b' || rest[0] == b'c' {
                1
            } else {
                0
            };
            if rest.get(after_b) == Some(&b'r') && (i == 0 || !is_ident_byte(bytes[i - 1])) {
                let hashes = rest[after_b + 1..]
                    .iter()
                    .take_while(|&&b| b == b'#')
                    .count();
                if rest.get(after_b + 1 + hashes) == Some(&b'"') {
                    let mut closing = vec![b'"'];
                    closing.extend(std::iter::repeat_n(b'#', hashes));
                    return Some(delimited_with(
                        bytes,
                        i + after_b + 2 + hashes,
                        &closing,
                        true,
                        false,
                    ));
                }
            }
            if after_b == 1
                && rest.get(1) == Some(&b'"')
                && (i == 0 || !is_ident_byte(bytes[i - 1]))
            {
                return Some(delimited(bytes, i + 2, b"\"", true));
            }
            match rest[0] {
                b'"' => Some(delimited(bytes, i + 1, b"\"", true)),
                // A char literal is 'x' or '\n'; a lifetime 'a has no closing quote.
                b'\'' => {
                    let (content, end) = delimited(bytes, i + 1, b"'", false);
                    let is_char = end <= bytes.len()
                        && bytes[end - 1] == b'\''
                        && end - i <= 12
                        && (content.1 - content.0 <= 4 || bytes[content.0] == b'\\');
                    is_char.then_some((content, end))
                }
                _ => None,
            }
        }
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn delimited(
    bytes: &[u8],
    start: usize,
    closing: &[u8],
    multi_line: bool,
) -> ((usize, usize), usize) {
    delimited_with(bytes, start, closing, multi_line, true)
}

/// Scans from `start` to `closing`, honouring backslash escapes when `escapes` is set.
fn delimited_with(
    bytes: &[u8],
    start: usize,
    closing: &[u8],
    multi_line: bool,
    escapes: bool,
) -> ((usize, usize), usize) {
    let mut j = start;
    while j < bytes.len() {
        if escapes && bytes[j] == b'\\' {
            j += 2;
            continue;
        }
        if bytes[j..].starts_with(closing) {
            return ((start, j), j + closing.len());
        }
        if bytes[j] == b'\n' && !multi_line {
            return ((start, j), j);
        }
        j += 1;
    }
    let end = bytes.len();
    ((start, end.max(start)), end.max(start))
}

#[cfg(test)]
mod tests;
