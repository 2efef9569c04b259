//! For GitHub Actions: one `::warning` or `::notice` workflow command per flagged test, which
//! the runner shows as an annotation on the pull request's diff. Paths are relative to the
//! repository root, as the runner resolves them against the checkout.

use std::io::{self, Write};

use super::{Report, hint, message, summary_line, verdict};
use crate::analysis::Severity;
use crate::terminal::{escape_data, escape_property};

pub(super) fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    for finding in &report.findings {
        let command = match finding.severity {
            Severity::Warning => "warning",
            Severity::Information => "notice",
        };
        let title = format!("Test {}", verdict(finding.category));
        let mut message = message(finding, "\n");
        message.push('\n');
        message.push_str(hint(finding));
        writeln!(
            out,
            "::{command} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            escape_property(&finding.path),
            finding.start.line,
            finding.start.column,
            finding.end.line,
            finding.end.column,
            escape_property(&title),
            escape_data(&message)
        )?;
    }
    writeln!(out, "{}", escape_data(&summary_line(report)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_escape_their_separators() {
        assert_eq!(escape_data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(escape_property("a/b,c::d\r"), "a/b%2Cc%3A%3Ad%0D");
        // Control characters and bidirectional overrides are shown, never passed on.
        assert_eq!(
            escape_data("red \u{1b}[31m bell \u{7} \u{202e}gnp.exe"),
            "red \\u{1b}[31m bell \\u{7} \\u{202e}gnp.exe"
        );
        assert_eq!(escape_property("a\u{1b}b"), "a\\u{1b}b");
    }
}
