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
use super::outcome::{CaseResult, Outcome};
use crate::category::Category;
use crate::history::category_hints;

/// The longest failure message kept per distinct failure.
const MESSAGE_CHARS: usize = 200;

/// A failure message and how often it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// Its telling line: the exception and its message, or the panic's message.
    pub message: String,
    pub count: u32,
    /// What the whole failure text names (the history module's hints).
    pub categories: Vec<Category>,
}

/// What the runs of one test under one condition gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub condition: Condition,
    /// Why the condition did not run for this test.
    pub unavailable: Option<String>,
    pub runs: u32,
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
    /// Runs whose reports held nothing for the test: the runner did not get to it.
    pub no_result: u32,
    /// Failed runs that ran past the timeout without a result for the test.
    pub timed_out: u32,
    /// `twice`: runs in which the test passed and then failed.
    pub non_idempotent: u32,
    pub failures: Vec<Failure>,
}

impl Tally {
    pub fn new(condition: Condition, unavailable: Option<String>) -> Tally {
        Tally {
            condition,
            unavailable,
            runs: 0,
            passed: 0,
            failed: 0,
            skipped: 0,
            no_result: 0,
            timed_out: 0,
            non_idempotent: 0,
            failures: Vec::new(),
        }
    }

    /// Counts one run from the test's results in it (two per case under `twice`, in order).
    /// A run that timed out without a result for the test failed it.
    pub fn record(&mut self, results: &[CaseResult], timed_out_after: Option<u64>) {
        self.runs += 1;
        if results.is_empty() {
            match timed_out_after {
                Some(seconds) => {
                    self.failed += 1;
                    self.timed_out += 1;
                    self.add_failure(&format!("the run timed out after {seconds} s"));
                }
                None => self.no_result += 1,
            }
            return;
        }
        let failed: Vec<&CaseResult> = results
            .iter()
            .filter(|result| result.outcome == Outcome::Failed)
            .collect();
        if let Some(first) = failed.first() {
            self.failed += 1;
            let text = first.messages.join("\n");
            self.add_failure(if text.trim().is_empty() {
                "failed without a message"
            } else {
                &text
            });
        } else if results
            .iter()
            .all(|result| result.outcome == Outcome::Skipped)
        {
            self.skipped += 1;
        } else {
            self.passed += 1;
        }
        // Under `twice` each case runs two times in a row: passed, then failed, is state left
        // behind.
        let mut by_case: BTreeMap<&str, Vec<Outcome>> = BTreeMap::new();
        for result in results {
            by_case
                .entry(&result.name)
                .or_default()
                .push(result.outcome);
        }
        if by_case.values().any(|outcomes| {
            outcomes
                .windows(2)
                .any(|pair| pair == [Outcome::Passed, Outcome::Failed])
        }) {
            self.non_idempotent += 1;
        }
    }

    fn add_failure(&mut self, text: &str) {
        let message = telling_line(text);
        match self
            .failures
            .iter_mut()
            .find(|failure| failure.message == message)
        {
            Some(failure) => failure.count += 1,
            None => self.failures.push(Failure {
                message,
                count: 1,
                categories: category_hints::in_failure(text),
            }),
        }
    }

    /// Failed runs over runs with an outcome.
    fn failure_rate(&self) -> f64 {
        let decided = self.passed + self.failed;
        if decided == 0 {
            0.0
        } else {
            f64::from(self.failed) / f64::from(decided)
        }
    }
}

/// The line of a failure that says what went wrong: a panic's message rather than the line
/// naming the thread, an exception's type joined to its message.
fn telling_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .filter(|line| !(line.starts_with("thread '") && line.contains("panicked at")))
        .filter(|line| !line.starts_with("note: run with `RUST_BACKTRACE"))
        .collect();
    let line = match lines.as_slice() {
        [] => String::new(),
        [kind, message, ..]
            if !kind.contains(char::is_whitespace) && !message.starts_with(kind) =>
        {
            format!("{kind}: {message}")
        }
        [first, ..] => first.to_string(),
    };
    if line.chars().count() > MESSAGE_CHARS {
        let cut: String = line.chars().take(MESSAGE_CHARS).collect();
        format!("{cut}...")
    } else {
        line
    }
}

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

/// A label a verdict gives a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelKind {
    /// Confirmed flaky, with its category and what showed it (`failed 7 of 20 runs under noise`).
    Flaky {
        category: Option<Category>,
        evidence: String,
    },
    /// No failure in `runs` runs.
    Stable { runs: u32 },
}

/// What `--record` writes for one test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The test as extraction found it: the label store tokenises it as `train --repo` does.
    pub test: crate::extract::TestMethod,
    /// The file, relative to the workspace root, `/`-separated.
    pub path: String,
    pub kind: LabelKind,
}

impl LabelKind {
    /// The `source` an index entry keeps: where the label comes from, in words.
    pub fn source(&self) -> String {
        match self {
            LabelKind::Flaky { evidence, .. } => format!("confirm: {evidence}"),
            LabelKind::Stable { runs } => format!("confirm: not flaky after {runs} runs"),
        }
    }
}

/// The label of a verdict: a confirmed flaky test is flaky with its category, a test with no
/// failure in its runs is stable ("not flaky after N runs"); a broken or unrun test gets none.
pub fn label_of(verdict: &TestVerdict) -> Option<LabelKind> {
    match verdict.verdict {
        Verdict::Flaky => Some(LabelKind::Flaky {
            category: verdict.category,
            evidence: evidence(verdict),
        }),
        Verdict::NoFlakinessSeen => Some(LabelKind::Stable {
            runs: verdict.passed,
        }),
        Verdict::Broken | Verdict::NotRun => None,
    }
}

/// `failed 7 of 20 runs under noise, 20 of 20 offline`: the exposing conditions' counts.
pub fn evidence(verdict: &TestVerdict) -> String {
    let parts: Vec<String> = verdict
        .exposed_by
        .iter()
        .filter_map(|condition| {
            verdict
                .tallies
                .iter()
                .find(|tally| tally.condition == *condition)
        })
        .map(|tally| {
            let decided = tally.passed + tally.failed;
            match tally.condition {
                Condition::Plain => format!("{} of {decided} runs plainly", tally.failed),
                Condition::Twice => {
                    format!("{} of {decided} runs twice in one process", tally.failed)
                }
                Condition::Offline => format!("{} of {decided} runs offline", tally.failed),
                condition => format!("{} of {decided} runs under {condition}", tally.failed),
            }
        })
        .collect();
    format!("failed {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str, outcome: Outcome, message: &str) -> CaseResult {
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

    fn tally(condition: Condition, runs: &[&[CaseResult]]) -> Tally {
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

    #[test]
    fn runs_without_results_are_not_outcomes_unless_they_timed_out() {
        let mut tally = Tally::new(Condition::Offline, None);
        tally.record(&[], None);
        tally.record(&[], Some(30));
        assert_eq!((tally.runs, tally.no_result, tally.failed), (2, 1, 1));
        assert_eq!(tally.failures[0].categories, [Category::Timeout]);
        let verdict = judge(vec![Tally::new(Condition::Plain, None)], &[]);
        assert_eq!(verdict.verdict, Verdict::NotRun);
    }

    #[test]
    fn a_flaky_label_carries_its_category_and_evidence() {
        let pass = [case("t", Outcome::Passed, "")];
        let fail = [case("t", Outcome::Failed, "Connection refused")];
        let verdict = judge(
            vec![
                tally(Condition::Plain, &[&pass, &pass]),
                tally(Condition::Noise, &[&fail, &pass]),
            ],
            &[],
        );
        let Some(LabelKind::Flaky { category, evidence }) = label_of(&verdict) else {
            panic!("flaky");
        };
        assert_eq!(category, Some(Category::Network));
        assert_eq!(evidence, "failed 1 of 2 runs under noise");
    }
}
