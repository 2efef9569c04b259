//! From outcomes to verdicts, and from verdicts to labels: pure functions over plain values.
//!
//! A test that passed and failed on the same code (in separate runs, or passing then failing in
//! one process) is flaky; one that failed every run is broken (not flaky); one that never failed
//! shows no flakiness in that many runs. A condition is a cause of a flaky test's failures only
//! when the counts support it ([`cause`]: Fisher's exact test against plain runs; `twice`
//! against the test's fresh executions). The category is what a causing condition points to: no
//! network to the network, passing then failing in one process to order dependency; under noise
//! or on one CPU, the failure messages (categorised with the history module's hints) or the
//! static prediction decide among timing causes. When no condition is a cause, the failure
//! messages, then the code, suggest one, and the verdict says so.

use std::collections::BTreeMap;

use serde::Serialize;

use super::condition::Condition;
use crate::category::Category;

mod cause;
pub mod fisher;
mod hint;
mod label;
mod tally;

pub use hint::hint;
pub use label::{Label, LabelKind, NoLabel, STABLE_RUNS, evidence, label_of};
pub use tally::{Failure, Tally};

/// What the runs say about a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// It passed and failed on the same code.
    Flaky,
    /// It failed every run: broken, not flaky.
    Broken,
    /// It passed every run: no flakiness seen in that many runs.
    NoFlakinessSeen,
    /// No run gave it an outcome (or every run skipped it).
    NotRun,
}

/// What a flaky test's category rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CategoryFrom {
    /// A condition made it fail more often than plain runs, by a margin the counts support.
    Condition,
    /// No condition did; its failure messages name the cause.
    FailureMessages,
    /// No condition did, and the messages name nothing: the cause its code suggests.
    Code,
}

/// The verdict on one test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestVerdict {
    pub verdict: Verdict,
    /// For a flaky test: the likely cause.
    pub category: Option<Category>,
    /// What the category rests on.
    pub category_from: Option<CategoryFrom>,
    /// The conditions that made it fail more often than it fails plainly, by a margin the counts
    /// support (strongest first); empty when none did.
    pub exposed_by: Vec<Condition>,
    /// Runs in which it passed (every execution of a `twice` run) and runs in which it failed.
    pub passed: u32,
    pub failed: u32,
    pub tallies: Vec<Tally>,
    /// Why it was not run at all (no runner, the build failed).
    pub error: Option<String>,
}

impl TestVerdict {
    /// A test none of whose runs could start.
    pub fn not_run(error: String) -> TestVerdict {
        TestVerdict {
            verdict: Verdict::NotRun,
            category: None,
            category_from: None,
            exposed_by: Vec::new(),
            passed: 0,
            failed: 0,
            tallies: Vec::new(),
            error: Some(error),
        }
    }
}

/// The verdict on a test from its tallies and the causes its code suggests (its signals'
/// categories and the prediction's, strongest first).
pub fn judge(mut tallies: Vec<Tally>, suspected: &[Category]) -> TestVerdict {
    let passed: u32 = tallies.iter().map(|tally| tally.passed).sum();
    let failed: u32 = tallies.iter().map(|tally| tally.failed).sum();
    // Passing then failing in one process is passing and failing on the same code.
    let passed_once = passed > 0 || tallies.iter().any(|tally| tally.non_idempotent > 0);
    let verdict = match (passed_once, failed > 0) {
        (true, true) => Verdict::Flaky,
        (false, true) => Verdict::Broken,
        (true, false) => Verdict::NoFlakinessSeen,
        (false, false) => Verdict::NotRun,
    };
    let causes = cause::exposing_conditions(&mut tallies);
    let (exposed_by, category) = if verdict == Verdict::Flaky {
        let category = category_of(&tallies, &causes, suspected);
        (causes, category)
    } else {
        (Vec::new(), None)
    };
    let error = match verdict {
        Verdict::NotRun if tallies.iter().any(|tally| tally.skipped > 0) => {
            Some("skipped in every run".to_string())
        }
        Verdict::NotRun => Some("no run gave a result for it".to_string()),
        _ => None,
    };
    TestVerdict {
        verdict,
        category: category.map(|(category, _)| category),
        category_from: category.map(|(_, from)| from),
        exposed_by,
        passed,
        failed,
        tallies,
        error,
    }
}

fn category_of(
    tallies: &[Tally],
    exposed: &[Condition],
    suspected: &[Category],
) -> Option<(Category, CategoryFrom)> {
    if exposed.contains(&Condition::Twice) {
        return Some((Category::OrderDependency, CategoryFrom::Condition));
    }
    if exposed.contains(&Condition::Offline) && offline_points_to_network(tallies, exposed) {
        return Some((Category::Network, CategoryFrom::Condition));
    }
    if exposed.is_empty() {
        // Failing offline names the network whatever the test's cause: only a cause's messages
        // may speak for it.
        let named = named_by_failures(tallies, |condition| condition != Condition::Offline);
        return named
            .map(|category| (category, CategoryFrom::FailureMessages))
            .or_else(|| {
                suspected
                    .first()
                    .map(|&category| (category, CategoryFrom::Code))
            });
    }
    if let Some(category) = named_by_failures(tallies, |condition| exposed.contains(&condition)) {
        return Some((category, CategoryFrom::Condition));
    }
    // The exposing conditions' causes in their order, the first the code shows a sign of;
    // else the likeliest.
    let pointed: Vec<Category> = exposed
        .iter()
        .flat_map(|condition| condition.points_to().iter().copied())
        .collect();
    pointed
        .iter()
        .find(|category| suspected.contains(category))
        .or(pointed.first())
        .map(|&category| (category, CategoryFrom::Condition))
}

/// What the failures under some conditions name, most often first.
fn named_by_failures(tallies: &[Tally], under: impl Fn(Condition) -> bool) -> Option<Category> {
    let mut named: BTreeMap<Category, u32> = BTreeMap::new();
    for tally in tallies.iter().filter(|tally| under(tally.condition)) {
        for failure in &tally.failures {
            for category in &failure.categories {
                *named.entry(*category).or_default() += failure.count;
            }
        }
    }
    named
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(&category, _)| category)
}

/// Whether failing offline (a cause) shows a network dependence: the failures offline name the
/// network (connection refused, network unreachable, ...), or offline is the strongest cause. A
/// timing race that failed offline as it fails under noise, and whose message names no network,
/// is not a network test.
fn offline_points_to_network(tallies: &[Tally], exposed: &[Condition]) -> bool {
    let Some(offline) = tallies
        .iter()
        .find(|tally| tally.condition == Condition::Offline)
    else {
        return false;
    };
    let named = offline
        .failures
        .iter()
        .any(|failure| failure.categories.contains(&Category::Network));
    named || exposed.first() == Some(&Condition::Offline)
}

#[cfg(test)]
mod tests;
