//! For GitHub Actions: an `::error` workflow command per confirmed flaky test and a `::warning`
//! per broken or unrun one, shown as annotations on the pull request.

use std::io::{self, Write};

use super::{Report, headline, summary_line};
use crate::confirm::verdict::{self, Verdict};
use crate::terminal::{escape_data, escape_property};

pub(super) fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    for (test, verdict, _) in report.entries() {
        let command = match verdict.verdict {
            Verdict::Flaky => "error",
            Verdict::Broken | Verdict::NotRun => "warning",
            Verdict::NoFlakinessSeen => continue,
        };
        let mut message = format!("{}: {}", test.test.id, headline(verdict));
        if let Some(hint) = verdict::hint(verdict, Some(test.test.language)) {
            message.push('\n');
            message.push_str(hint);
        }
        writeln!(
            out,
            "::{command} file={},line={},col={},title={}::{}",
            escape_property(&test.path),
            test.line,
            test.column,
            escape_property("flakesense confirm"),
            escape_data(&message)
        )?;
    }
    writeln!(out, "{}", escape_data(&summary_line(report)))
}
