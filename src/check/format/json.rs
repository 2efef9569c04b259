//! For programs: one JSON document whose schema is documented in the README ("Check mode") and
//! versioned by its `version` field. Fields are only ever added within a version.

use std::io::Write;

use serde::Serialize;

use super::super::{Changes, Finding, Report, SkipKind};
use super::hint;
use crate::analysis::{Severity, similarity};
use crate::category::Category;
use crate::language::Language;
use crate::predict::Neighbor;
use crate::signals::SignalContext;

/// Raised when a field is removed or changes meaning.
const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    tool: Tool,
    settings: SettingsView<'a>,
    findings: Vec<FindingView<'a>>,
    summary: SummaryView<'a>,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct SettingsView<'a> {
    sigma: f64,
    k: usize,
    /// `all`, `staged` or `diff-base`.
    changes: &'static str,
    diff_base: Option<&'a str>,
    merge_base: Option<&'a str>,
}

#[derive(Serialize)]
struct FindingView<'a> {
    path: &'a str,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    language: Language,
    id: &'a str,
    name: &'a str,
    score: f64,
    severity: Severity,
    category: Option<Category>,
    hint: &'a str,
    /// The whole mechanisms a warning rests on (added in 0.1.0's second round; older readers
    /// ignore it).
    mechanisms: Vec<MechanismView<'a>>,
    signals: Vec<SignalView<'a>>,
    shared_tokens: &'a [String],
    neighbors: Vec<NeighborView<'a>>,
    /// The nearest known flaky tests with the strongest signal's risk, the ones shown first.
    examples: Vec<NeighborView<'a>>,
}

#[derive(Serialize)]
struct SignalView<'a> {
    id: &'a str,
    name: &'a str,
    category: Category,
    text: &'a str,
    line: u32,
    context: Option<SignalContext<'a>>,
}

#[derive(Serialize)]
struct NeighborView<'a> {
    id: &'a str,
    project: &'a str,
    flaky: bool,
    categories: &'a [Category],
    /// 1 - the cosine distance.
    similarity: f64,
    shared_tokens: &'a [String],
}

impl<'a> NeighborView<'a> {
    fn new(neighbor: &'a Neighbor) -> NeighborView<'a> {
        NeighborView {
            id: &neighbor.id,
            project: &neighbor.project,
            flaky: neighbor.flaky,
            categories: &neighbor.categories,
            similarity: similarity(neighbor),
            shared_tokens: &neighbor.shared_tokens,
        }
    }
}

#[derive(Serialize)]
struct SummaryView<'a> {
    files: usize,
    tests: usize,
    unchanged_tests: usize,
    flagged: usize,
    skipped: Vec<SkippedView<'a>>,
}

#[derive(Serialize)]
struct SkippedView<'a> {
    path: &'a str,
    kind: SkipKind,
    reason: &'a str,
}

pub(super) fn write(report: &Report, out: &mut dyn Write) -> anyhow::Result<()> {
    let (changes, diff_base, merge_base) = match &report.settings.changes {
        Changes::All => ("all", None, None),
        Changes::Staged => ("staged", None, None),
        Changes::DiffBase {
            reference,
            merge_base,
        } => (
            "diff-base",
            Some(reference.as_str()),
            Some(merge_base.as_str()),
        ),
    };
    let document = Document {
        version: SCHEMA_VERSION,
        tool: Tool {
            name: "flakesense",
            version: env!("CARGO_PKG_VERSION"),
        },
        settings: SettingsView {
            sigma: report.settings.sigma,
            k: report.settings.k,
            changes,
            diff_base,
            merge_base,
        },
        findings: report.findings.iter().map(finding_view).collect(),
        summary: SummaryView {
            files: report.summary.files,
            tests: report.summary.tests,
            unchanged_tests: report.summary.unchanged_tests,
            flagged: report.summary.flagged,
            skipped: report
                .summary
                .skipped
                .iter()
                .map(|skipped| SkippedView {
                    path: &skipped.path,
                    kind: skipped.kind,
                    reason: &skipped.reason,
                })
                .collect(),
        },
    };
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)?;
    Ok(())
}

/// A mechanism: what it is, the sentence that tells it, and its parts with their lines.
#[derive(Serialize)]
struct MechanismView<'a> {
    id: &'a str,
    category: Category,
    message: &'a str,
    evidence: String,
    parts: Vec<PartView<'a>>,
}

#[derive(Serialize)]
struct PartView<'a> {
    /// `start`, `wait`, `check`, `write`.
    role: &'a str,
    id: &'a str,
    text: &'a str,
    line: u32,
    /// Where in what the test runs, when not in the test's own code.
    context: Option<SignalContext<'a>>,
}

fn finding_view(finding: &Finding) -> FindingView<'_> {
    FindingView {
        path: &finding.path,
        line: finding.start.line,
        column: finding.start.column,
        end_line: finding.end.line,
        end_column: finding.end.column,
        language: finding.language,
        id: &finding.id,
        name: &finding.name,
        score: finding.score,
        severity: finding.severity,
        category: finding.category,
        hint: hint(finding),
        mechanisms: finding
            .mechanisms
            .iter()
            .map(|mechanism| MechanismView {
                id: mechanism.id,
                category: mechanism.category,
                message: mechanism.message,
                evidence: mechanism.evidence(),
                parts: mechanism
                    .parts
                    .iter()
                    .map(|part| PartView {
                        role: part.role,
                        id: part.id,
                        text: &part.text,
                        line: part.line,
                        context: part.place.context(),
                    })
                    .collect(),
            })
            .collect(),
        signals: finding
            .signals
            .iter()
            .map(|hit| SignalView {
                id: hit.id,
                name: hit.message,
                category: hit.category,
                text: &hit.text,
                line: hit.line,
                context: hit.context(),
            })
            .collect(),
        shared_tokens: &finding.shared_tokens,
        neighbors: finding.neighbors.iter().map(NeighborView::new).collect(),
        examples: finding.examples.iter().map(NeighborView::new).collect(),
    }
}
