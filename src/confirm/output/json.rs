//! The JSON report, version 1: fields are only added within a version.

use std::io::Write;

use serde_json::json;

use super::Report;
use crate::check::Changes;
use crate::confirm::verdict::Verdict;

pub(super) fn write(report: &Report, out: &mut dyn Write) -> anyhow::Result<()> {
    let (changes, diff_base, merge_base) = match report.changes {
        Changes::All => ("all", None, None),
        Changes::Staged => ("staged", None, None),
        Changes::DiffBase {
            reference,
            merge_base,
        } => ("diff-base", Some(reference), Some(merge_base)),
    };
    let tests: Vec<serde_json::Value> = report
        .entries()
        .zip(report.commands())
        .map(|((test, verdict, runner), command)| {
            json!({
                "path": test.path,
                "line": test.line,
                "column": test.column,
                "language": test.test.language,
                "id": test.test.id,
                "name": test.test.name,
                "score": test.score,
                "predicted_category": test.predicted,
                "runner": runner,
                "command": command.map(|(command, _)| command),
                "command_from": command.map(|(_, origin)| origin),
                "verdict": verdict.verdict,
                "category": verdict.category,
                "category_from": verdict.category_from,
                "exposed_by": verdict.exposed_by,
                "passed": verdict.passed,
                "failed": verdict.failed,
                "error": verdict.error,
                "conditions": verdict.tallies,
            })
        })
        .collect();
    let value = json!({
        "version": 1,
        "tool": { "name": "flakesense", "version": env!("CARGO_PKG_VERSION") },
        "settings": {
            "runs": report.settings.runs,
            "conditions": report.settings.conditions,
            "timeout_seconds": report.settings.timeout.as_secs(),
            "changes": changes,
            "diff_base": diff_base,
            "merge_base": merge_base,
        },
        "tests": tests,
        "notes": report.notes,
        "compare": report.compare.map(|comparison| super::compare::json(report.tests, comparison)),
        "summary": {
            "tests": report.tests.len(),
            "flaky": report.count(Verdict::Flaky),
            "broken": report.count(Verdict::Broken),
            "no_flakiness_seen": report.count(Verdict::NoFlakinessSeen),
            "not_run": report.count(Verdict::NotRun),
            "recorded": report.recorded.map(|recorded| json!({
                "index": recorded.index.display().to_string(),
                "flaky": recorded.flaky,
                "stable": recorded.stable,
                "not_recorded": recorded.not_recorded.iter().map(|(id, reason)| json!({
                    "id": id,
                    "reason": reason,
                })).collect::<Vec<_>>(),
            })),
        },
    });
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)?;
    Ok(())
}
