//! For people: a block per test, `file:line:col` first, the verdict, then each condition's runs
//! and failure messages; coloured only on a terminal.

use std::io::{self, Write};

use super::{Report, headline, summary_line};
use crate::category::Category;
use crate::confirm::verdict::{self, Tally, Verdict};
use crate::terminal::escape;

/// How many distinct failure messages are shown per condition.
const MESSAGES_SHOWN: usize = 2;

pub(super) fn paint(on: bool, style: &str, text: &str) -> String {
    if on {
        format!("\x1b[{style}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

pub(super) fn write(report: &Report, out: &mut dyn Write, colour: bool) -> io::Result<()> {
    for (position, (test, verdict, runner)) in report.entries().enumerate() {
        if let Some(comparison) = report.compare {
            super::compare::write_test(
                comparison,
                position,
                test,
                &report.settings.conditions,
                out,
                colour,
            )?;
            continue;
        }
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
            writeln!(
                out,
                "  {name} {} runs: {}{}",
                tally.runs,
                counts.join(", "),
                if verdict.verdict == Verdict::Flaky {
                    against_plain(tally, verdict.exposed_by.contains(&tally.condition))
                } else {
                    String::new()
                }
            )?;
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
        if let Some(hint) = verdict::hint(verdict, Some(test.test.language)) {
            writeln!(out, "  hint: {hint}")?;
        }
        writeln!(out)?;
    }
    for note in report.notes {
        writeln!(out, "note: {}", escape(note))?;
    }
    if let Some(comparison) = report.compare {
        writeln!(out, "{}", super::compare::before_summary(comparison))?;
        write!(out, "after, working tree: ")?;
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
        for (id, reason) in &recorded.not_recorded {
            writeln!(out, "not recorded: {}: {}", escape(id), escape(reason))?;
        }
    }
    Ok(())
}

/// How a condition's failures compare with plain runs': `(a cause: p = 0.003)` for a cause,
/// `(not shown to be a cause: p = 0.756)` for a condition that failed but is not one.
fn against_plain(tally: &Tally, cause: bool) -> String {
    let Some(p_value) = tally.p_value else {
        return String::new();
    };
    let shown = if p_value < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p_value:.3}")
    };
    if cause {
        format!(" (a cause: {shown})")
    } else if tally.failed > 0 {
        format!(" (not shown to be a cause: {shown})")
    } else {
        String::new()
    }
}
