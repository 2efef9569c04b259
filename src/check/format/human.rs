//! For people: a block per flagged test, `file:line:col` first so terminals and editors can jump
//! to it, coloured only on a terminal. Names, paths and code come from files anyone may have
//! written: they are escaped (see [`escape`]), so none can move the cursor or start a line.

use std::io::{self, Write};

use super::{Report, SIGNALS_SHOWN, ShownEvidence, hint, likeliest_line, summary_line, verdict};
use crate::analysis::{Severity, similarity};
use crate::category::Category;
use crate::terminal::escape;

/// ANSI styles, or nothing when colour is off.
struct Palette {
    on: bool,
}

impl Palette {
    fn paint(&self, style: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{style}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }
    fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
    fn severity(&self, severity: Severity) -> String {
        match severity {
            Severity::Warning => self.paint("1;33", "warning"),
            Severity::Information => self.paint("1;36", "note"),
        }
    }
}

pub(super) fn write(report: &Report, out: &mut dyn Write, colour: bool) -> io::Result<()> {
    let palette = Palette { on: colour };
    for finding in &report.findings {
        writeln!(
            out,
            "{}: {}: {} is {}, score {}",
            palette.bold(&format!(
                "{}:{}:{}",
                escape(&finding.display_path),
                finding.start.line,
                finding.start.column
            )),
            palette.severity(finding.severity),
            palette.bold(&escape(&finding.id)),
            verdict(finding.category),
            palette.bold(&crate::analysis::score_text(finding.score)),
        )?;
        for mechanism in &finding.mechanisms {
            writeln!(
                out,
                "  how it can fail: it {}",
                escape(&mechanism.evidence())
            )?;
        }
        for hit in finding.signals.iter().take(SIGNALS_SHOWN) {
            writeln!(out, "  signal: {}", escape(&hit.evidence()))?;
        }
        let shown = ShownEvidence::of(finding);
        for (heading, neighbors) in [
            (
                format!("known flaky tests with the same risk{}", shown.risk_named()),
                &shown.same_risk,
            ),
            ("nearest known flaky tests".to_string(), &shown.nearest),
        ] {
            if neighbors.is_empty() {
                continue;
            }
            writeln!(out, "  {heading}:")?;
            for neighbor in neighbors {
                writeln!(
                    out,
                    "    {} {} ({}){}",
                    palette.dim(&format!("similarity {:.2}", similarity(neighbor))),
                    escape(&neighbor.id),
                    escape(&neighbor.project),
                    Category::bracketed(&neighbor.categories)
                )?;
            }
        }
        if !finding.shared_tokens.is_empty() {
            writeln!(
                out,
                "  shared tokens: {}",
                escape(&finding.shared_tokens.join(", "))
            )?;
        }
        writeln!(out, "  hint: {}", hint(finding))?;
        writeln!(out)?;
    }
    writeln!(out, "{}", summary_line(report))?;
    if let Some(line) = likeliest_line(report) {
        writeln!(out, "{}", palette.dim(&line))?;
    }
    Ok(())
}
