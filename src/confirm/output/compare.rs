//! `confirm --compare REF` in the human and JSON formats: per test, its verdict before (at REF)
//! and after (in the working tree), and per condition how many runs failed on each side.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::headline;
use super::human::paint;
use crate::confirm::choose::ChosenTest;
use crate::confirm::compare::{Before, Comparison};
use crate::confirm::condition::Condition;
use crate::confirm::verdict::{Tally, TestVerdict, Verdict};
use crate::terminal::escape;

/// How a side's verdict is named in a test's first line.
fn word(verdict: &TestVerdict) -> &'static str {
    match verdict.verdict {
        Verdict::Flaky => "flaky",
        Verdict::Broken => "broken",
        Verdict::NoFlakinessSeen => "no flakiness seen",
        Verdict::NotRun => "not run",
    }
}

/// One side's runs under a condition: `failed 3 of 20 runs`, `unavailable`, `-` (no runs).
fn runs(tally: Option<&Tally>) -> String {
    let Some(tally) = tally else {
        return "-".to_string();
    };
    if tally.unavailable.is_some() {
        return "unavailable".to_string();
    }
    let mut text = format!("failed {} of {} runs", tally.failed, tally.decided());
    if tally.no_result > 0 {
        text.push_str(&format!(", {} without a result", tally.no_result));
    }
    text
}

fn tally(verdict: Option<&TestVerdict>, condition: Condition) -> Option<&Tally> {
    verdict?
        .tallies
        .iter()
        .find(|tally| tally.condition == condition)
}

/// A test's block: its first line, each side's verdict, and per condition both sides' runs.
pub(super) fn write_test(
    comparison: &Comparison,
    position: usize,
    test: &ChosenTest,
    conditions: &[Condition],
    out: &mut dyn Write,
    colour: bool,
) -> io::Result<()> {
    let after = &comparison.after.verdicts[position];
    let before = match &comparison.before[position] {
        Before::Ran { verdict, .. } => Ok(verdict),
        Before::Missing(reason) => Err(reason),
    };
    let status = match before {
        Ok(before) => format!("{} before, {} after", word(before), word(after)),
        Err(_) => format!("{} (not at {})", word(after), comparison.revision.name),
    };
    let style = match after.verdict {
        Verdict::Flaky => "1;31",
        Verdict::Broken | Verdict::NotRun => "1;33",
        Verdict::NoFlakinessSeen => "1;32",
    };
    writeln!(
        out,
        "{}:{}:{}: {}: {}",
        escape(&test.path),
        test.line,
        test.column,
        paint(colour, "1", &escape(&test.test.id)),
        paint(colour, style, &status)
    )?;
    let label = comparison.revision.label();
    match before {
        Ok(before) => writeln!(out, "  before, {label}: {}", headline(before))?,
        Err(reason) => writeln!(out, "  before, {label}: not there: {}", escape(reason))?,
    }
    writeln!(out, "  after, working tree: {}", headline(after))?;
    let before = before.ok();
    for &condition in conditions {
        let sides = [tally(before, condition), tally(Some(after), condition)];
        writeln!(
            out,
            "  {:<8} before: {:<21} after: {}",
            condition.name(),
            runs(sides[0]),
            runs(sides[1])
        )?;
        if let Some(reason) = sides
            .iter()
            .flatten()
            .find_map(|tally| tally.unavailable.as_ref())
        {
            writeln!(out, "           unavailable: {}", escape(reason))?;
        }
        for (side, tally) in ["before", "after"].iter().zip(sides) {
            if let Some(failure) = tally.and_then(|tally| tally.failures.first()) {
                writeln!(
                    out,
                    "           {side}: {}x {}",
                    failure.count,
                    escape(&failure.message)
                )?;
            }
        }
    }
    writeln!(out)
}

/// The summary of the revision's side: `before, HEAD (3f2c1d0): 1 of 2 tests confirmed flaky;
/// 1 not at HEAD`.
pub(super) fn before_summary(comparison: &Comparison) -> String {
    let tests = comparison.before.len();
    let verdicts: Vec<&TestVerdict> = comparison
        .before
        .iter()
        .filter_map(|before| match before {
            Before::Ran { verdict, .. } => Some(verdict),
            Before::Missing(_) => None,
        })
        .collect();
    let count = |wanted: Verdict| {
        verdicts
            .iter()
            .filter(|verdict| verdict.verdict == wanted)
            .count()
    };
    let mut line = format!(
        "before, {}: {} of {tests} test{} confirmed flaky",
        comparison.revision.label(),
        count(Verdict::Flaky),
        if tests == 1 { "" } else { "s" }
    );
    for (verdict, words) in [
        (Verdict::Broken, "broken"),
        (Verdict::NoFlakinessSeen, "with no flakiness seen"),
        (Verdict::NotRun, "not run"),
    ] {
        if count(verdict) > 0 {
            line.push_str(&format!("; {} {words}", count(verdict)));
        }
    }
    let missing = tests - verdicts.len();
    if missing > 0 {
        line.push_str(&format!("; {missing} not at {}", comparison.revision.name));
    }
    line
}

/// One side's verdict in JSON, the fields of a test of the report.
fn side(verdict: &TestVerdict, runner: Option<&'static str>) -> Value {
    json!({
        "runner": runner,
        "verdict": verdict.verdict,
        "category": verdict.category,
        "category_from": verdict.category_from,
        "exposed_by": verdict.exposed_by,
        "passed": verdict.passed,
        "failed": verdict.failed,
        "error": verdict.error,
        "conditions": verdict.tallies,
    })
}

/// The `compare` object of the JSON report: the revision, and per test `before` (`null` when the
/// revision does not have the test, `missing_at_reference` saying why) and `after`.
pub(super) fn json(tests: &[ChosenTest], comparison: &Comparison) -> Value {
    let entries: Vec<Value> = tests
        .iter()
        .enumerate()
        .map(|(position, test)| {
            let (before, missing) = match &comparison.before[position] {
                Before::Ran { verdict, runner } => (side(verdict, *runner), None),
                Before::Missing(reason) => (Value::Null, Some(reason)),
            };
            json!({
                "id": test.test.id,
                "path": test.path,
                "line": test.line,
                "column": test.column,
                "before": before,
                "missing_at_reference": missing,
                "after": side(
                    &comparison.after.verdicts[position],
                    comparison.after.runners[position],
                ),
            })
        })
        .collect();
    json!({
        "reference": {
            "name": comparison.revision.name,
            "commit": comparison.revision.commit,
        },
        "tests": entries,
    })
}
