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
        "{} is {}, score {:.2}.",
        finding.id,
        verdict(finding.category),
        finding.score
    )];
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
fn hint(finding: &Finding) -> &'static str {
    crate::analysis::hint(finding.language, finding.category, &finding.signals)
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
mod tests {
    use super::*;
    use crate::analysis::Severity;
    use crate::check::report::Position;
    use crate::index::Origin;
    use crate::language::Language;

    fn neighbor(id: &str, flaky: bool, category: Category, distance: f64) -> Neighbor {
        Neighbor {
            model: 0,
            // Neighbours at different distances are different entries.
            entry: (distance * 100.0) as usize,
            id: id.to_string(),
            project: "p".to_string(),
            flaky,
            label: if flaky {
                crate::index::Label::Flaky
            } else {
                crate::index::Label::Stable
            },
            categories: vec![category],
            origin: Origin::Dataset,
            path: None,
            distance,
            shared_tokens: Vec::new(),
        }
    }

    fn finding(neighbors: Vec<Neighbor>, examples: Vec<Neighbor>) -> Finding {
        let at = Position {
            line: 1,
            column: 1,
            column_utf16: 1,
        };
        Finding {
            path: "t.py".to_string(),
            display_path: "t.py".to_string(),
            language: Language::Python,
            id: "t.py::test_a".to_string(),
            name: "test_a".to_string(),
            start: at,
            end: at,
            score: 0.99,
            severity: Severity::Warning,
            category: Some(Category::Network),
            signals: Vec::new(),
            shared_tokens: Vec::new(),
            neighbors,
            examples,
        }
    }

    fn report(scores: &[f64], sigma: f64) -> Report {
        let findings: Vec<Finding> = scores
            .iter()
            .map(|&score| Finding {
                score,
                ..finding(Vec::new(), Vec::new())
            })
            .collect();
        Report {
            settings: crate::check::report::Settings {
                sigma,
                k: 7,
                warning: 0.95,
                changes: Changes::All,
            },
            summary: crate::check::report::Summary {
                files: 1,
                tests: 100,
                unchanged_tests: 0,
                flagged: findings.len(),
                skipped: Vec::new(),
            },
            findings,
        }
    }

    #[test]
    fn a_long_list_says_how_to_see_its_likeliest_findings_alone() {
        let mut scores = vec![0.96; 9];
        scores.extend([0.995, 0.999, 0.97]);
        assert_eq!(
            likeliest_line(&report(&scores, 0.95)).as_deref(),
            Some(
                "2 of the 12 flagged tests score above 0.99, the likeliest to be flaky; \
                 `--sigma 0.99` lists only those"
            )
        );
        assert_eq!(
            likeliest_line(&report(&scores[2..], 0.95)),
            None,
            "ten findings are read at once"
        );
        assert_eq!(
            likeliest_line(&report(&scores, 0.99)),
            None,
            "already the likeliest alone"
        );
        assert_eq!(
            likeliest_line(&report(&[0.96; 12], 0.5)),
            None,
            "none above 0.99"
        );
        assert_eq!(
            likeliest_line(&report(&[0.995; 12], 0.95)),
            None,
            "all above 0.99: the list is what --sigma 0.99 gives"
        );
    }

    #[test]
    fn the_human_format_ends_a_long_list_with_its_likeliest_findings_after_the_summary() {
        let mut scores = vec![0.96; 9];
        scores.extend([0.995, 0.999, 0.97]);
        let mut out = Vec::new();
        human::write(&report(&scores, 0.95), &mut out, false).unwrap();
        let text = String::from_utf8(out).unwrap();
        let last: Vec<&str> = text.lines().rev().take(2).collect();
        assert_eq!(
            last[0],
            "2 of the 12 flagged tests score above 0.99, the likeliest to be flaky; \
             `--sigma 0.99` lists only those"
        );
        assert!(
            last[1].starts_with("flagged 12 of 100 tests"),
            "the summary comes first: {}",
            last[1]
        );
        let mut short = Vec::new();
        human::write(&report(&scores[2..], 0.95), &mut short, false).unwrap();
        assert!(!String::from_utf8(short).unwrap().contains("likeliest"));
    }

    fn shown(finding: &Finding) -> Vec<&str> {
        flaky_neighbors(finding)
            .into_iter()
            .map(|neighbor| neighbor.id.as_str())
            .collect()
    }

    #[test]
    fn the_flaky_neighbours_of_the_findings_category_are_shown_first() {
        let finding = finding(
            vec![
                neighbor("near-io", true, Category::Io, 0.3),
                neighbor("stable", false, Category::Network, 0.35),
                neighbor("far-network", true, Category::Network, 0.5),
                neighbor("farther-io", true, Category::Io, 0.6),
                neighbor("farthest-network", true, Category::Network, 0.7),
            ],
            Vec::new(),
        );
        assert_eq!(
            shown(&finding),
            ["far-network", "farthest-network", "near-io"]
        );
    }

    #[test]
    fn the_tests_with_the_same_risk_leave_room_for_a_nearest_flaky_neighbour() {
        let examples = vec![
            neighbor("risk-1", true, Category::Network, 0.5),
            neighbor("risk-2", true, Category::Network, 0.6),
            neighbor("risk-3", true, Category::Network, 0.7),
        ];
        let with_neighbour = finding(
            vec![neighbor("near-network", true, Category::Network, 0.3)],
            examples.clone(),
        );
        assert_eq!(shown(&with_neighbour), ["risk-1", "risk-2", "near-network"]);
        let sentences = message(&with_neighbour, "\n");
        assert!(
            sentences.contains("\nKnown flaky tests with the same risk: risk-1 (")
                && sentences.contains("\nNearest known flaky tests: near-network ("),
            "each group under its own heading: {sentences}"
        );
        let alone = finding(Vec::new(), examples);
        assert_eq!(
            shown(&alone),
            ["risk-1", "risk-2", "risk-3"],
            "without flaky neighbours the examples fill the list"
        );
    }

    #[test]
    fn flaky_tests_with_the_same_risk_come_before_the_nearest_by_tokens_and_once() {
        let with_risk = neighbor("with-risk", true, Category::Network, 0.5);
        let finding = finding(
            vec![
                neighbor("near-network", true, Category::Network, 0.3),
                with_risk.clone(),
            ],
            vec![
                with_risk,
                neighbor("far-with-risk", true, Category::Network, 0.8),
            ],
        );
        assert_eq!(
            shown(&finding),
            ["with-risk", "far-with-risk", "near-network"]
        );
    }
}
