//! What the command line writes for a terminal, a pipe or a CI log: text made safe to print,
//! the escapes of GitHub Actions' workflow commands, and the reader that went away.

/// True when `error` comes from writing to a reader that went away (`| head`): the command
/// then ends quietly, with the exit code its work earned.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        let kind = match cause.downcast_ref::<serde_json::Error>() {
            Some(error) => error.io_error_kind(),
            None => cause
                .downcast_ref::<std::io::Error>()
                .map(std::io::Error::kind),
        };
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}

/// `text` as it may be printed on a terminal or in a CI log: control characters (escape
/// sequences, carriage returns, newlines: a file named `t\n::error::x_test.py` must not start a
/// line GitHub Actions reads as a workflow command) and the bidirectional overrides that
/// reorder what a reader sees are shown as Rust escapes (`\n`, `\u{1b}`); the rest is unchanged.
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    std::borrow::Cow::Owned(escaped)
}

/// A control character or a bidirectional override or isolate.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The escapes of a workflow command's message (the runner's `escapeData`: `%`, carriage return
/// and line feed), and [`escape`]'s visible escapes of the other control characters and the
/// bidirectional overrides, which the runner would pass to the log and the annotation as they are.
pub fn escape_data(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '%' => escaped.push_str("%25"),
            '\r' => escaped.push_str("%0D"),
            '\n' => escaped.push_str("%0A"),
            c if unsafe_char(c) => escaped.extend(c.escape_default()),
            c => escaped.push(c),
        }
    }
    escaped
}

/// The escapes of a property value, which also must not hold `:` or `,` (`escapeProperty`).
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_bidi_overrides_are_escaped() {
        assert_eq!(escape("src/a_test.py"), "src/a_test.py");
        assert_eq!(escape("héllo wörld"), "héllo wörld");
        assert_eq!(
            escape("t\n::error title=pwned::injected\n_test.py"),
            "t\\n::error title=pwned::injected\\n_test.py"
        );
        assert_eq!(escape("\u{1b}]8;;x\u{7}a"), "\\u{1b}]8;;x\\u{7}a");
        assert_eq!(escape("a\u{202e}b\r\t"), "a\\u{202e}b\\r\\t");
        assert_eq!(escape("\u{9b}31m"), "\\u{9b}31m");
    }
}
