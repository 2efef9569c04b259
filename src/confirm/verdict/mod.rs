//! From outcomes to verdicts, and from verdicts to labels: pure functions over plain values.
//!
//! A test that passed and failed on the same code is flaky; one that failed every run is broken
//! (not flaky); one that never failed shows no flakiness in that many runs. The category of a
//! flaky test is what its exposing condition points to: no network points to the network,
//! passing once and failing when run again in the same process to order dependency; under noise
//! or on one CPU, the failure messages (categorised with the history module's hints) or the
//! static prediction decide among timing causes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::condition::Condition;
use crate::category::Category;

mod label;
mod tally;

pub use label::{Label, LabelKind, evidence, label_of};
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

/// The verdict on one test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestVerdict {
    pub verdict: Verdict,
    /// For a flaky test: the likely cause.
    pub category: Option<Category>,
    /// The conditions that made it fail more often than it fails plainly.
    pub exposed_by: Vec<Condition>,
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
pub fn judge(tallies: Vec<Tally>, suspected: &[Category]) -> TestVerdict {
    let passed: u32 = tallies.iter().map(|tally| tally.passed).sum();
    let failed: u32 = tallies.iter().map(|tally| tally.failed).sum();
    let verdict = match (passed > 0, failed > 0) {
        (true, true) => Verdict::Flaky,
        (false, true) => Verdict::Broken,
        (true, false) => Verdict::NoFlakinessSeen,
        (false, false) => Verdict::NotRun,
    };
    let (exposed_by, category) = if verdict == Verdict::Flaky {
        let exposed = exposing_conditions(&tallies);
        let category = category_of(&tallies, &exposed, suspected);
        (exposed, category)
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
        category,
        exposed_by,
        passed,
        failed,
        tallies,
        error,
    }
}

/// The conditions under which the test failed more often than plainly; when none did (it fails
/// as often alone), the conditions under which it failed at all.
fn exposing_conditions(tallies: &[Tally]) -> Vec<Condition> {
    let plain = tallies
        .iter()
        .find(|tally| tally.condition == Condition::Plain)
        .map_or(0.0, Tally::failure_rate);
    let mut exposed: Vec<&Tally> = tallies
        .iter()
        .filter(|tally| tally.condition != Condition::Plain && tally.failure_rate() > plain)
        .collect();
    if exposed.is_empty() {
        exposed = tallies.iter().filter(|tally| tally.failed > 0).collect();
    }
    // The strongest first.
    exposed.sort_by(|a, b| b.failure_rate().total_cmp(&a.failure_rate()));
    exposed.into_iter().map(|tally| tally.condition).collect()
}

fn category_of(
    tallies: &[Tally],
    exposed: &[Condition],
    suspected: &[Category],
) -> Option<Category> {
    let tally = |condition: Condition| tallies.iter().find(|tally| tally.condition == condition);
    if exposed.contains(&Condition::Twice)
        && tally(Condition::Twice).is_some_and(|tally| tally.non_idempotent > 0)
    {
        return Some(Category::OrderDependency);
    }
    if exposed.contains(&Condition::Offline) && offline_points_to_network(tallies, exposed) {
        return Some(Category::Network);
    }
    // What the failures under the exposing conditions name, most often first.
    let mut named: BTreeMap<Category, u32> = BTreeMap::new();
    for condition in exposed {
        for failure in tally(*condition).map_or(&[][..], |tally| &tally.failures) {
            for category in &failure.categories {
                *named.entry(*category).or_default() += failure.count;
            }
        }
    }
    if let Some((&category, _)) = named
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
    {
        return Some(category);
    }
    // The exposing conditions' causes in their order, the first the code shows a sign of;
    // else the likeliest; a plain failure points nowhere, and the code's own suspicion stands.
    let pointed: Vec<Category> = exposed
        .iter()
        .flat_map(|condition| condition.points_to().iter().copied())
        .collect();
    pointed
        .iter()
        .find(|category| suspected.contains(category))
        .or(pointed.first())
        .or(suspected.first())
        .copied()
}

/// Whether failing offline shows a network dependence: the failures offline name the network
/// (connection refused, network unreachable, ...), or the test failed offline more often than
/// under any other exposing condition. A timing race that happened to fail once offline, as it
/// fails under noise, and whose message names no network, is not a network test.
fn offline_points_to_network(tallies: &[Tally], exposed: &[Condition]) -> bool {
    let tally = |condition: Condition| tallies.iter().find(|tally| tally.condition == condition);
    let Some(offline) = tally(Condition::Offline) else {
        return false;
    };
    let named = offline
        .failures
        .iter()
        .any(|failure| failure.categories.contains(&Category::Network));
    let strongest = exposed
        .iter()
        .filter(|&&condition| condition != Condition::Offline)
        .filter_map(|&condition| tally(condition))
        .all(|other| offline.failure_rate() > other.failure_rate());
    named || strongest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confirm::outcome::{CaseResult, Outcome};

    pub(super) fn case(name: &str, outcome: Outcome, message: &str) -> CaseResult {
        CaseResult {
            classname: "c".to_string(),
            name: name.to_string(),
            outcome,
            failed_attempts: 0,
            messages: if message.is_empty() {
                Vec::new()
            } else {
                vec![message.to_string()]
            },
        }
    }

    pub(super) fn tally(condition: Condition, runs: &[&[CaseResult]]) -> Tally {
        let mut tally = Tally::new(condition, None);
        for results in runs {
            tally.record(results, None);
        }
        tally
    }

    #[test]
    fn failing_offline_only_is_flaky_with_the_network_as_cause() {
        let pass = [case("t", Outcome::Passed, "")];
        let refused = [case(
            "t",
            Outcome::Failed,
            "java.net.ConnectException\nNetwork is unreachable",
        )];
        let verdict = judge(
            vec![
                tally(Condition::Plain, &[&pass, &pass]),
                tally(Condition::Offline, &[&refused, &refused]),
            ],
            &[Category::AsyncWait],
        );
        assert_eq!(verdict.verdict, Verdict::Flaky);
        assert_eq!(verdict.category, Some(Category::Network));
        assert_eq!(verdict.exposed_by, [Condition::Offline]);
        assert_eq!(
            verdict.tallies[1].failures[0].message,
            "java.net.ConnectException: Network is unreachable"
        );
        assert_eq!(evidence(&verdict), "failed 2 of 2 runs offline");
    }

    #[test]
    fn a_race_that_also_failed_offline_keeps_its_timing_cause() {
        let pass = [case("t", Outcome::Passed, "")];
        let late = [case(
            "t",
            Outcome::Failed,
            "org.opentest4j.AssertionFailedError: the cache was not refreshed in time",
        )];
        let verdict = judge(
            vec![
                tally(Condition::Plain, &[&pass]),
                tally(Condition::Noise, &[&late]),
                tally(Condition::Offline, &[&late]),
            ],
            &[Category::AsyncWait],
        );
        assert_eq!(verdict.verdict, Verdict::Flaky);
        assert_eq!(verdict.category, Some(Category::AsyncWait));
        // Failing offline more often than under noise, it is the network's, whatever it says.
        let verdict = judge(
            vec![
                tally(Condition::Plain, &[&pass, &pass]),
                tally(Condition::Noise, &[&late, &pass]),
                tally(Condition::Offline, &[&late, &late]),
            ],
            &[Category::AsyncWait],
        );
        assert_eq!(verdict.category, Some(Category::Network));
    }

    #[test]
    fn passing_then_failing_in_one_process_is_order_dependency() {
        let pass = [case("t", Outcome::Passed, "")];
        let twice = [
            case("t", Outcome::Passed, ""),
            case(
                "t",
                Outcome::Failed,
                "AssertionError: assert ['ada', 'ada'] == ['ada']",
            ),
        ];
        let verdict = judge(
            vec![
                tally(Condition::Plain, &[&pass]),
                tally(Condition::Twice, &[&twice]),
            ],
            &[],
        );
        assert_eq!(verdict.verdict, Verdict::Flaky);
        assert_eq!(verdict.category, Some(Category::OrderDependency));
        assert_eq!(verdict.tallies[1].non_idempotent, 1);
    }

    #[test]
    fn timing_failures_take_the_first_cause_of_the_condition_the_code_shows() {
        let pass = [case("t", Outcome::Passed, "")];
        let late = [case(
            "t",
            Outcome::Failed,
            "thread 'tests::t' (123) panicked at src/lib.rs:9:9:\nthe cache was not refreshed in time",
        )];
        let tallies = || {
            vec![
                tally(Condition::Plain, &[&pass, &pass]),
                tally(Condition::Noise, &[&late, &pass]),
            ]
        };
        let verdict = judge(tallies(), &[Category::Concurrency]);
        assert_eq!(verdict.category, Some(Category::Concurrency));
        // Noise points to a fixed wait before threads.
        assert_eq!(
            judge(tallies(), &[Category::Concurrency, Category::AsyncWait]).category,
            Some(Category::AsyncWait)
        );
        assert_eq!(
            verdict.tallies[1].failures[0].message,
            "the cache was not refreshed in time"
        );
        // A suspicion the condition does not point to gives way to the condition.
        assert_eq!(
            judge(tallies(), &[Category::Network]).category,
            Some(Category::AsyncWait)
        );
    }

    #[test]
    fn failure_messages_name_the_cause_first() {
        let pass = [case("t", Outcome::Passed, "")];
        let timeout = [case("t", Outcome::Failed, "Failed: Timeout >5.0s")];
        let verdict = judge(
            vec![
                tally(Condition::Plain, &[&pass]),
                tally(Condition::Cpu1, &[&timeout]),
            ],
            &[Category::AsyncWait],
        );
        assert_eq!(verdict.category, Some(Category::Timeout));
    }

    #[test]
    fn always_failing_is_broken_and_never_failing_shows_nothing() {
        let fail = [case("t", Outcome::Failed, "boom")];
        let pass = [case("t", Outcome::Passed, "")];
        let broken = judge(vec![tally(Condition::Plain, &[&fail, &fail])], &[]);
        assert_eq!(broken.verdict, Verdict::Broken);
        assert_eq!(label_of(&broken), None);
        let stable = judge(
            vec![
                tally(Condition::Plain, &[&pass, &pass]),
                tally(Condition::Noise, &[&pass]),
            ],
            &[],
        );
        assert_eq!(stable.verdict, Verdict::NoFlakinessSeen);
        assert_eq!(label_of(&stable), Some(LabelKind::Stable { runs: 3 }));
        assert_eq!(
            LabelKind::Stable { runs: 3 }.source(),
            "confirm: not flaky after 3 runs"
        );
    }
}
