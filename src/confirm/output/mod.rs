//! The report formats of `flakesense confirm`, those of `check`: human, JSON, SARIF and GitHub
//! workflow commands, one file each, and the wording they share.

mod compare;
mod github;
mod human;
mod json;
mod sarif;

use std::io::Write;

use anyhow::Result;

use super::choose::ChosenTest;
use super::compare::Comparison;
use super::engine::{Confirmation, Settings};
use super::record::Recorded;
use super::runner::CommandOrigin;
use super::verdict::{self, CategoryFrom, TestVerdict, Verdict};
use crate::check::{Changes, Format};

/// Everything a format needs.
#[derive(Debug, Clone, Copy)]
pub struct Report<'a> {
    pub settings: &'a Settings,
    pub changes: &'a Changes,
    pub tests: &'a [ChosenTest],
    pub confirmation: &'a Confirmation,
    /// Remarks on the choice of tests.
    pub notes: &'a [String],
    pub recorded: Option<&'a Recorded>,
    /// With `--compare`: the runs at the revision beside the working tree's (`confirmation`).
    pub compare: Option<&'a Comparison>,
}

impl Report<'_> {
    /// Each test with its verdict and runner.
    fn entries(&self) -> impl Iterator<Item = (&ChosenTest, &TestVerdict, Option<&'static str>)> {
        self.tests
            .iter()
            .zip(&self.confirmation.verdicts)
            .zip(&self.confirmation.runners)
            .map(|((test, verdict), runner)| (test, verdict, *runner))
    }

    /// The command each test of [`Report::entries`] was run with, and where it came from.
    fn commands(&self) -> impl Iterator<Item = Option<&(String, CommandOrigin)>> {
        self.confirmation.commands.iter().map(Option::as_ref)
    }

    pub fn count(&self, wanted: Verdict) -> usize {
        self.confirmation
            .verdicts
            .iter()
            .filter(|verdict| verdict.verdict == wanted)
            .count()
    }
}

pub fn write(format: Format, report: &Report, out: &mut dyn Write, colour: bool) -> Result<()> {
    match format {
        Format::Human => human::write(report, out, colour)?,
        Format::Json => json::write(report, out)?,
        Format::Sarif => sarif::write(report, out)?,
        Format::Github => github::write(report, out)?,
    }
    Ok(())
}

/// "flaky (network): failed 3 of 3 runs offline", "no flakiness seen in 12 runs", ...
pub fn headline(verdict: &TestVerdict) -> String {
    match verdict.verdict {
        Verdict::Flaky => format!(
            "flaky ({}): {}{}",
            cause(verdict),
            verdict::evidence(verdict),
            if verdict.exposed_by.is_empty() {
                "; no condition made it fail more often than plain runs by a margin the counts support"
            } else {
                ""
            }
        ),
        Verdict::Broken => format!("broken, not flaky: failed all {} runs", verdict.failed),
        Verdict::NoFlakinessSeen => format!("no flakiness seen in {} runs", verdict.passed),
        Verdict::NotRun => format!(
            "not run: {}",
            verdict.error.as_deref().unwrap_or("no result")
        ),
    }
}

/// The category and what it rests on: `network`, `concurrency, as its code suggests`.
fn cause(verdict: &TestVerdict) -> String {
    match (verdict.category, verdict.category_from) {
        (None, _) => "cause unknown".to_string(),
        (Some(category), Some(CategoryFrom::FailureMessages)) => {
            format!("{category}, as its failure messages say")
        }
        (Some(category), Some(CategoryFrom::Code)) => format!("{category}, as its code suggests"),
        (Some(category), _) => category.to_string(),
    }
}

/// One line for people, shared by the human and GitHub formats.
fn summary_line(report: &Report) -> String {
    let tests = report.tests.len();
    let conditions: Vec<&str> = report
        .settings
        .conditions
        .iter()
        .map(|condition| condition.name())
        .collect();
    let mut line = format!(
        "{} of {tests} test{} confirmed flaky ({} run{} under each of {})",
        report.count(Verdict::Flaky),
        if tests == 1 { "" } else { "s" },
        report.settings.runs,
        if report.settings.runs == 1 { "" } else { "s" },
        conditions.join(", ")
    );
    for (verdict, words) in [
        (Verdict::Broken, "broken"),
        (Verdict::NoFlakinessSeen, "with no flakiness seen"),
        (Verdict::NotRun, "not run"),
    ] {
        let count = report.count(verdict);
        if count > 0 {
            line.push_str(&format!("; {count} {words}"));
        }
    }
    line
}
