//! Which conditions a test's failures are due to: a condition is a cause only when the test
//! failed more often under it than plainly, by a margin the counts support (Fisher's exact test,
//! one-sided, at 5%); `twice` compares a test's second execution in one process with its fresh
//! ones, and decides alone.

use super::Tally;
use super::fisher::{self, Counts};
use crate::confirm::condition::Condition;

/// The conditions that are causes of the test's failures, strongest (lowest p-value) first.
/// Writes each condition's p-value into its tally.
///
/// - `noise`, `cpu1`, `offline`: the condition's failed runs against plain's. Without plain runs,
///   against the other conditions of these three pooled; with nothing to compare, no cause.
/// - `twice`: the runs in which the test failed its second execution after passing its first,
///   against its fresh executions (the first of each `twice` run, and plain runs). A test that
///   passed then failed in every `twice` run whose first execution passed, and never failed a
///   fresh execution, is order-dependent however few the runs: that pattern is what
///   non-idempotence is, and chance would have to fail exactly every second execution.
pub fn exposing_conditions(tallies: &mut [Tally]) -> Vec<Condition> {
    let plain = tallies
        .iter()
        .find(|tally| tally.condition == Condition::Plain && tally.decided() > 0)
        .map(Tally::counts);
    let mut causes: Vec<(Condition, f64, f64)> = Vec::new();
    let baselines: Vec<Option<Counts>> = tallies
        .iter()
        .map(|tally| match tally.condition {
            Condition::Plain => None,
            Condition::Twice => Some(fresh_executions(tally, plain)),
            condition => plain.or_else(|| pooled_others(tallies, condition)),
        })
        .collect();
    for (tally, baseline) in tallies.iter_mut().zip(baselines) {
        let Some(baseline) = baseline.filter(|baseline| baseline.runs > 0) else {
            continue;
        };
        let (exposed, is_cause) = if tally.condition == Condition::Twice {
            let seconds = Counts::new(tally.non_idempotent, tally.first_passed);
            let p_value = fisher::p_value(seconds, baseline);
            let every_time = tally.non_idempotent > 0
                && tally.non_idempotent == tally.first_passed
                && baseline.failed == 0;
            (seconds, fisher::significant(p_value) || every_time)
        } else {
            let counts = tally.counts();
            (
                counts,
                fisher::significant(fisher::p_value(counts, baseline)),
            )
        };
        let p_value = fisher::p_value(exposed, baseline);
        tally.p_value = Some(p_value);
        if is_cause {
            let rate = f64::from(exposed.failed) / f64::from(exposed.runs.max(1));
            causes.push((tally.condition, p_value, rate));
        }
    }
    causes.sort_by(|a, b| {
        a.1.total_cmp(&b.1)
            .then_with(|| b.2.total_cmp(&a.2))
            .then_with(|| a.0.cmp(&b.0))
    });
    causes
        .into_iter()
        .map(|(condition, _, _)| condition)
        .collect()
}

/// What a `twice` run's second execution is compared with: executions in a fresh process.
fn fresh_executions(twice: &Tally, plain: Option<Counts>) -> Counts {
    let firsts = Counts::new(twice.first_failed, twice.first_failed + twice.first_passed);
    match plain {
        Some(plain) => firsts.pooled_with(plain),
        None => firsts,
    }
}

/// Without plain runs, a condition is compared with the other conditions that change the
/// machine (`noise`, `cpu1`, `offline`), pooled.
fn pooled_others(tallies: &[Tally], condition: Condition) -> Option<Counts> {
    tallies
        .iter()
        .filter(|tally| {
            !matches!(tally.condition, Condition::Plain | Condition::Twice)
                && tally.condition != condition
        })
        .map(Tally::counts)
        .reduce(Counts::pooled_with)
}
