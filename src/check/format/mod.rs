//! The report formats of `flakesense check`, one file each, and the wording they share.

mod github;
mod human;
mod json;
mod sarif;

use std::io::Write;

use anyhow::Result;

use super::{Changes, Finding, Format, Report};
use crate::analysis::similarity;
use crate::category::Category;
use crate::predict::{Neighbor, flaky_besides};
use crate::signals::SignalHit;

/// How many flaky neighbours the human, SARIF and GitHub formats name as evidence; JSON lists
/// all k neighbours.
const EVIDENCE_SHOWN: usize = 3;

pub(super) fn write(
    format: Format,
    report: &Report,
    out: &mut dyn Write,
    colour: bool,
) -> Result<()> {
    match format {
        Format::Human => human::write(report, out, colour)?,
        Format::Json => json::write(report, out)?,
        Format::Sarif => sarif::write(report, out)?,
        Format::Github => github::write(report, out)?,
    }
    Ok(())
}

/// "likely flaky (async-wait)": a static prediction is an estimate, never a certainty.
fn verdict(category: Option<Category>) -> String {
    match category {
        Some(category) => format!("likely flaky ({category})"),
        None => "likely flaky (cause unknown)".to_string(),
    }
}

/// The known flaky tests a finding shows as evidence, in two groups that the human, SARIF and
/// GitHub formats head apart, so that a test shown for its risk is never read as a near one.
struct ShownEvidence<'a> {
    /// The message of the strongest signal, whose risk the first group shares: "fixed sleep".
    risk: Option<&'static str>,
    /// The nearest known flaky tests with that risk (the finding's examples).
    same_risk: Vec<&'a Neighbor>,
    /// Its other flaky neighbours, those flaky for the finding's category first, as across
    /// projects the nearest by tokens alone are often unrelated.
    nearest: Vec<&'a Neighbor>,
}

impl<'a> ShownEvidence<'a> {
    /// At most [`EVIDENCE_SHOWN`] tests, nearest first within each group. The examples leave
    /// room for one flaky neighbour: the tests the score and the shared tokens come from.
    fn of(finding: &'a Finding) -> ShownEvidence<'a> {
        let mut nearest: Vec<&Neighbor> =
            flaky_besides(&finding.neighbors, &finding.examples).collect();
        if let Some(category) = finding.category {
            nearest.sort_by_key(|neighbor| !neighbor.categories.contains(&category));
        }
        let room = if nearest.is_empty() {
            EVIDENCE_SHOWN
        } else {
            EVIDENCE_SHOWN - 1
        };
        let same_risk: Vec<&Neighbor> = finding.examples.iter().take(room).collect();
        nearest.truncate(EVIDENCE_SHOWN - same_risk.len());
        ShownEvidence {
            risk: finding.signals.first().map(|hit| hit.message),
            same_risk,
            nearest,
        }
    }

    /// The risk in parentheses, " (fixed sleep)", for the first group's heading.
    fn risk_named(&self) -> String {
        self.risk.map_or(String::new(), |risk| format!(" ({risk})"))
    }
}

/// Both groups of [`ShownEvidence`] in one list, as SARIF's `nearestFlakyTests` gives them.
fn flaky_neighbors(finding: &Finding) -> Vec<&Neighbor> {
    let shown = ShownEvidence::of(finding);
    shown.same_risk.into_iter().chain(shown.nearest).collect()
}

/// How many signals the human, SARIF and GitHub formats name; JSON lists them all.
const SIGNALS_SHOWN: usize = 3;

/// A finding as sentences, joined by `separator`: what it is, then the evidence behind it (its
/// signals, the known flaky tests with its risk and its nearest flaky neighbours, and the tokens
/// it shares with them). SARIF and GitHub annotations say the same things.
fn message(finding: &Finding, separator: &str) -> String {
    let mut sentences = vec![format!(
        "{} is {}, score {}.",
        finding.id,
        verdict(finding.category),
        crate::analysis::score_text(finding.score)
    )];
    for mechanism in &finding.mechanisms {
        sentences.push(format!("It {}.", mechanism.evidence()));
    }
    let signals: Vec<String> = finding
        .signals
        .iter()
        .take(SIGNALS_SHOWN)
        .map(SignalHit::evidence)
        .collect();
    if !signals.is_empty() {
        sentences.push(format!("Signals: {}.", signals.join(", ")));
    }
    let listed = |neighbors: &[&Neighbor]| {
        let listed: Vec<String> = neighbors
            .iter()
            .map(|neighbor| {
                format!(
                    "{} ({}, similarity {:.2})",
                    neighbor.id,
                    neighbor.project,
                    similarity(neighbor)
                )
            })
            .collect();
        listed.join(", ")
    };
    let shown = ShownEvidence::of(finding);
    if !shown.same_risk.is_empty() {
        sentences.push(format!(
            "Known flaky tests with the same risk{}: {}.",
            shown.risk_named(),
            listed(&shown.same_risk)
        ));
    }
    if !shown.nearest.is_empty() {
        sentences.push(format!(
            "Nearest known flaky tests: {}.",
            listed(&shown.nearest)
        ));
    }
    if !finding.shared_tokens.is_empty() {
        sentences.push(format!(
            "Shared tokens: {}.",
            finding.shared_tokens.join(", ")
        ));
    }
    sentences.join(separator)
}

/// The hint at a fix for a finding, as every output words it.
fn hint(finding: &Finding) -> &str {
    &finding.hint
}

/// "flagged 2 of 41 tests in 12 files ...": one line for people, shared by the human and GitHub
/// formats.
fn summary_line(report: &Report) -> String {
    let summary = &report.summary;
    let tests = plural(summary.tests, "test", "tests");
    let files = plural(summary.files, "file", "files");
    let what = match &report.settings.changes {
        Changes::All => String::new(),
        Changes::Staged => " added or modified by the staged change".to_string(),
        Changes::DiffBase { reference, .. } => {
            format!(" added or modified since the branch point of {reference}")
        }
    };
    let mut line = if summary.tests == 0 {
        match report.settings.changes {
            Changes::All => format!("no tests found in {files}"),
            _ => format!("no tests{what}"),
        }
    } else if summary.flagged == 0 {
        format!(
            "no likely flaky test among {tests}{what} in {files} (flagged above {})",
            report.settings.sigma
        )
    } else {
        format!(
            "flagged {} of {tests}{what} in {files} as likely flaky (score above {})",
            summary.flagged, report.settings.sigma
        )
    };
    if summary.unchanged_tests > 0 {
        line.push_str(&format!(
            "; {}",
            plural(summary.unchanged_tests, "unchanged test", "unchanged tests")
        ));
    }
    if !summary.skipped.is_empty() {
        line.push_str(&format!(
            "; skipped {}",
            plural(summary.skipped.len(), "path", "paths")
        ));
    }
    line
}

/// Past this many findings a list is longer than a reader takes in at once.
const LONG_LIST: usize = 10;

/// The score above which findings are the likeliest: on repositories held out of training,
/// warnings scored 0.99 or more were later fixed for flakiness two to four times as often as
/// those just over the warning threshold (`models/README.md`, "What to expect").
const LIKELIEST: f64 = 0.99;

/// For a long list, how to see its likeliest findings alone: "31 of the 205 flagged tests score
/// above 0.99, ...; `--sigma 0.99` lists only those". None for a short list, for one flagged above
/// 0.99 already, and where no finding or every finding is among the likeliest.
fn likeliest_line(report: &Report) -> Option<String> {
    let flagged = report.findings.len();
    let likeliest = report
        .findings
        .iter()
        .filter(|finding| finding.score > LIKELIEST)
        .count();
    (flagged > LONG_LIST && report.settings.sigma < LIKELIEST && (1..flagged).contains(&likeliest))
        .then(|| {
            format!(
                "{likeliest} of the {flagged} flagged tests score above {LIKELIEST}, the likeliest \
                 to be flaky; `--sigma {LIKELIEST}` lists only those"
            )
        })
}

fn plural(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// The rule of a finding, stable across releases: GitHub code scanning matches alerts by it.
fn rule_id(category: Option<Category>) -> String {
    match category {
        Some(category) => format!("flakesense/{category}"),
        None => "flakesense/flaky".to_string(),
    }
}

#[cfg(test)]
mod tests;
