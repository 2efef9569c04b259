//! The verdict rules: each condition against plain runs, `twice` alone, the categories and hints
//! they give, and the labels a verdict may record.

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

/// `passed` passing runs and `failed` runs failing with `message`, under a condition.
fn runs(condition: Condition, passed: u32, failed: u32, message: &str) -> Tally {
    let mut tally = Tally::new(condition, None);
    for _ in 0..passed {
        tally.record(&[case("t", Outcome::Passed, "")], None);
    }
    for _ in 0..failed {
        tally.record(&[case("t", Outcome::Failed, message)], None);
    }
    tally
}

/// `twice` runs: `pass_fail` that passed then failed, `pass_pass` that passed both times.
fn twice(pass_fail: u32, pass_pass: u32, message: &str) -> Tally {
    let mut tally = Tally::new(Condition::Twice, None);
    for _ in 0..pass_fail {
        let results = [
            case("t", Outcome::Passed, ""),
            case("t", Outcome::Failed, message),
        ];
        tally.record(&results, None);
    }
    for _ in 0..pass_pass {
        let results = [
            case("t", Outcome::Passed, ""),
            case("t", Outcome::Passed, ""),
        ];
        tally.record(&results, None);
    }
    tally
}

const LATE: &str = "AssertionError: the cache was not refreshed in time";
const UNREACHABLE: &str = "OSError: [Errno 101] Network is unreachable";

#[test]
fn each_condition_is_a_cause_only_when_it_fails_more_often_than_plain_by_a_margin() {
    for condition in [Condition::Noise, Condition::Cpu1, Condition::Offline] {
        // Three of three against none of three: p = 0.05, a cause.
        let verdict = judge(
            vec![
                runs(Condition::Plain, 3, 0, ""),
                runs(condition, 0, 3, LATE),
            ],
            &[Category::AsyncWait],
        );
        assert_eq!(verdict.verdict, Verdict::Flaky);
        assert_eq!(verdict.exposed_by, [condition], "{condition}");
        assert_eq!(verdict.category_from, Some(CategoryFrom::Condition));
        // As often as plain: flaky, but not the condition's doing.
        let verdict = judge(
            vec![
                runs(Condition::Plain, 19, 1, LATE),
                runs(condition, 19, 1, LATE),
            ],
            &[Category::AsyncWait],
        );
        assert_eq!(verdict.verdict, Verdict::Flaky);
        assert!(verdict.exposed_by.is_empty(), "{condition}");
        assert!(verdict.tallies[1].p_value.unwrap() > 0.7);
        // Four of twenty against none of twenty is p = 0.053: not enough.
        let verdict = judge(
            vec![
                runs(Condition::Plain, 20, 0, ""),
                runs(condition, 16, 4, LATE),
            ],
            &[],
        );
        assert!(verdict.exposed_by.is_empty(), "{condition}");
        assert_eq!(verdict.category, None);
        assert_eq!(
            evidence(&verdict),
            format!(
                "failed 4 of 20 runs {}",
                match condition {
                    Condition::Offline => "offline".to_string(),
                    condition => format!("under {condition}"),
                }
            )
        );
    }
}

#[test]
fn a_race_failing_as_often_offline_as_plainly_is_not_a_network_test() {
    let verdict = judge(
        vec![
            runs(Condition::Plain, 19, 1, LATE),
            runs(Condition::Noise, 20, 0, ""),
            runs(Condition::Offline, 19, 1, UNREACHABLE),
        ],
        &[Category::Concurrency, Category::AsyncWait],
    );
    assert_eq!(verdict.verdict, Verdict::Flaky);
    assert!(verdict.exposed_by.is_empty());
    // Offline's message names the network, as any failure offline does; it is not a cause's.
    assert_eq!(verdict.category, Some(Category::Concurrency));
    assert_eq!(verdict.category_from, Some(CategoryFrom::Code));
    assert_eq!(
        evidence(&verdict),
        "failed 1 of 20 runs plainly, failed 1 of 20 runs offline"
    );
    // The code's suspicion is not recorded as the label's category.
    assert_eq!(
        label_of(&verdict),
        Ok(LabelKind::Flaky {
            category: None,
            evidence: "failed 1 of 20 runs plainly, failed 1 of 20 runs offline".to_string(),
        })
    );
    // A network test fails offline every time.
    let verdict = judge(
        vec![
            runs(Condition::Plain, 20, 0, ""),
            runs(Condition::Offline, 0, 20, UNREACHABLE),
        ],
        &[Category::AsyncWait],
    );
    assert_eq!(verdict.category, Some(Category::Network));
    assert_eq!(verdict.exposed_by, [Condition::Offline]);
    assert_eq!(evidence(&verdict), "failed 20 of 20 runs offline");
}

#[test]
fn a_race_that_also_failed_offline_keeps_its_timing_cause() {
    let verdict = judge(
        vec![
            runs(Condition::Plain, 20, 0, ""),
            runs(Condition::Noise, 0, 20, LATE),
            runs(Condition::Offline, 14, 6, LATE),
        ],
        &[Category::AsyncWait],
    );
    assert_eq!(verdict.exposed_by, [Condition::Noise, Condition::Offline]);
    assert_eq!(verdict.category, Some(Category::AsyncWait));
}

#[test]
fn twice_alone_decides_order_dependency() {
    // `--conditions twice --runs 1`: passed, then failed in the same process.
    for pass_fail in [1, 3] {
        let verdict = judge(
            vec![twice(
                pass_fail,
                0,
                "AssertionError: assert ['ada', 'ada'] == ['ada']",
            )],
            &[],
        );
        assert_eq!(verdict.verdict, Verdict::Flaky, "{verdict:?}");
        assert_eq!(verdict.category, Some(Category::OrderDependency));
        assert_eq!(verdict.exposed_by, [Condition::Twice]);
        assert_eq!(
            evidence(&verdict),
            format!("passed then failed in one process in {pass_fail} of {pass_fail} runs")
        );
        assert_eq!(verdict.tallies[0].non_idempotent, pass_fail);
    }
    // With the other conditions it says the same.
    let verdict = judge(
        vec![runs(Condition::Plain, 20, 0, ""), twice(20, 0, "assert")],
        &[Category::Network],
    );
    assert_eq!(verdict.category, Some(Category::OrderDependency));
    assert!(verdict.tallies[1].p_value.unwrap() < 1e-9);
}

#[test]
fn a_race_that_once_passed_then_failed_in_one_process_is_not_order_dependent() {
    let verdict = judge(
        vec![runs(Condition::Plain, 19, 1, LATE), twice(1, 19, LATE)],
        &[Category::AsyncWait],
    );
    assert_eq!(verdict.verdict, Verdict::Flaky);
    assert!(verdict.exposed_by.is_empty());
    assert_eq!(verdict.category, Some(Category::AsyncWait));
    // A test failing its first execution too is no pattern: the counts must show it.
    let mut first_fails = twice(1, 0, LATE);
    first_fails.record(
        &[
            case("t", Outcome::Failed, LATE),
            case("t", Outcome::Failed, LATE),
        ],
        None,
    );
    let verdict = judge(vec![first_fails], &[]);
    assert!(verdict.exposed_by.is_empty(), "{verdict:?}");
}

#[test]
fn without_plain_runs_a_condition_is_compared_with_the_others() {
    let verdict = judge(
        vec![
            runs(Condition::Noise, 4, 0, ""),
            runs(Condition::Offline, 0, 4, UNREACHABLE),
        ],
        &[],
    );
    assert_eq!(verdict.exposed_by, [Condition::Offline]);
    assert_eq!(verdict.category, Some(Category::Network));
    // One condition alone has nothing to be compared with: the messages speak, but not those of
    // failures offline, which name the network whatever the cause.
    let verdict = judge(
        vec![runs(Condition::Noise, 3, 1, "Failed: Timeout >5.0s")],
        &[Category::Time],
    );
    assert!(verdict.exposed_by.is_empty());
    assert_eq!(verdict.category, Some(Category::Timeout));
    assert_eq!(verdict.category_from, Some(CategoryFrom::FailureMessages));
    let verdict = judge(
        vec![runs(Condition::Offline, 3, 1, UNREACHABLE)],
        &[Category::Time],
    );
    assert_eq!(verdict.category, Some(Category::Time));
    assert_eq!(verdict.category_from, Some(CategoryFrom::Code));
}

#[test]
fn timing_failures_take_the_first_cause_of_the_condition_the_code_shows() {
    let late =
        "thread 'tests::t' (123) panicked at src/lib.rs:9:9:\nthe cache was not refreshed in time";
    let tallies = || {
        vec![
            runs(Condition::Plain, 4, 0, ""),
            runs(Condition::Noise, 0, 4, late),
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
    // Failure messages name the cause first.
    let verdict = judge(
        vec![
            runs(Condition::Plain, 4, 0, ""),
            runs(Condition::Cpu1, 0, 4, "Failed: Timeout >5.0s"),
        ],
        &[Category::AsyncWait],
    );
    assert_eq!(verdict.category, Some(Category::Timeout));
}

#[test]
fn hints_fit_the_cause_the_runs_showed() {
    let elapsed = judge(
        vec![
            runs(Condition::Plain, 20, 0, ""),
            runs(
                Condition::Noise,
                0,
                20,
                "AssertionError: assert 0.31 < 0.25",
            ),
        ],
        &[Category::Time],
    );
    assert_eq!(elapsed.category, Some(Category::Time));
    let said = hint(&elapsed, None).unwrap();
    assert!(said.contains("elapsed time"), "{said}");
    assert!(
        !said.contains("time-zone") && !said.contains("day"),
        "{said}"
    );
    let one_cpu = judge(
        vec![
            runs(Condition::Plain, 4, 0, ""),
            runs(Condition::Cpu1, 0, 4, "AssertionError: two workers needed"),
        ],
        &[Category::Concurrency],
    );
    assert!(hint(&one_cpu, None).unwrap().contains("one CPU"));
    let network = judge(
        vec![
            runs(Condition::Plain, 4, 0, ""),
            runs(Condition::Offline, 0, 4, UNREACHABLE),
        ],
        &[],
    );
    assert_eq!(hint(&network, None), Some(Category::Network.fix_hint(None)));
}

#[test]
fn a_stable_label_needs_59_passing_runs_across_conditions() {
    let verdict = judge(
        vec![
            runs(Condition::Plain, 20, 0, ""),
            runs(Condition::Noise, 20, 0, ""),
            runs(Condition::Offline, 10, 0, ""),
        ],
        &[],
    );
    assert_eq!(verdict.verdict, Verdict::NoFlakinessSeen);
    let refused = label_of(&verdict).unwrap_err();
    assert_eq!(refused, NoLabel::TooFewRuns { passed: 50 });
    assert!(
        refused.reason().contains("needs 59"),
        "{}",
        refused.reason()
    );
    let verdict = judge(
        vec![
            runs(Condition::Plain, 20, 0, ""),
            runs(Condition::Noise, 20, 0, ""),
            runs(Condition::Offline, 10, 0, ""),
            twice(0, 9, ""),
        ],
        &[],
    );
    assert_eq!(label_of(&verdict), Ok(LabelKind::Stable { runs: 59 }));
    assert_eq!(
        LabelKind::Stable { runs: 59 }.source(),
        "confirm: not flaky after 59 runs"
    );
}

#[test]
fn always_failing_is_broken_and_gives_no_label() {
    let broken = judge(vec![runs(Condition::Plain, 0, 2, "boom")], &[]);
    assert_eq!(broken.verdict, Verdict::Broken);
    assert_eq!(label_of(&broken), Err(NoLabel::Broken));
    assert_eq!(hint(&broken, None), None);
}
