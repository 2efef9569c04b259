//! For people: a block per test, `file:line:col` first, the verdict, then each condition's runs
//! and failure messages; coloured only on a terminal.

use std::io::{self, Write};

use super::{Report, headline, summary_line};
use crate::category::Category;
use crate::confirm::verdict::Verdict;
use crate::terminal::escape;

/// How many distinct failure messages are shown per condition.
const MESSAGES_SHOWN: usize = 2;

fn paint(on: bool, style: &str, text: &str) -> String {
    if on {
        format!("\x1b[{style}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

pub(super) fn write(report: &Report, out: &mut dyn Write, colour: bool) -> io::Result<()> {
    for (test, verdict, runner) in report.entries() {
        let style = match verdict.verdict {
            Verdict::Flaky => "1;31",
            Verdict::Broken | Verdict::NotRun => "1;33",
            Verdict::NoFlakinessSeen => "1;32",
        };
        writeln!(
            out,
            "{}:{}:{}: {} {}",
            escape(&test.path),
            test.line,
            test.column,
            paint(colour, "1", &escape(&test.test.id)),
            paint(colour, style, &headline(verdict))
        )?;
        let mut about = Vec::new();
        if let Some(runner) = runner {
            about.push(format!("runner {runner}"));
        }
        if let Some(score) = test.score {
            about.push(format!("score {}", crate::analysis::score_text(score)));
        }
        if !about.is_empty() {
            writeln!(out, "  {}", paint(colour, "2", &about.join(", ")))?;
        }
        for tally in &verdict.tallies {
            let name = format!("{:<8}", tally.condition.name());
            if let Some(reason) = &tally.unavailable {
                writeln!(out, "  {name} unavailable: {reason}")?;
                continue;
            }
            let mut counts = vec![format!("{} passed", tally.passed)];
            if tally.failed > 0 {
                counts.push(format!("{} failed", tally.failed));
            }
            if tally.non_idempotent > 0 {
                counts.push(format!("{} passed then failed", tally.non_idempotent));
            }
            if tally.skipped > 0 {
                counts.push(format!("{} skipped", tally.skipped));
            }
            if tally.no_result > 0 {
                counts.push(format!("{} without a result", tally.no_result));
            }
            writeln!(out, "  {name} {} runs: {}", tally.runs, counts.join(", "))?;
            for failure in tally.failures.iter().take(MESSAGES_SHOWN) {
                writeln!(
                    out,
                    "           {}x {}{}",
                    failure.count,
                    escape(&failure.message),
                    Category::bracketed(&failure.categories)
                )?;
            }
        }
        if verdict.verdict == Verdict::Flaky
            && let Some(category) = verdict.category
        {
            writeln!(
                out,
                "  hint: {}",
                category.fix_hint(Some(test.test.language))
            )?;
        }
        writeln!(out)?;
    }
    for note in report.notes {
        writeln!(out, "note: {}", escape(note))?;
    }
    writeln!(out, "{}", summary_line(report))?;
    if let Some(recorded) = report.recorded {
        writeln!(
            out,
            "recorded {} flaky and {} stable label{} in {}",
            recorded.flaky,
            recorded.stable,
            if recorded.stable == 1 { "" } else { "s" },
            recorded.index.display()
        )?;
    }
    Ok(())
}
