//! The prior's fit, calibration and solver on small made-up data.

use super::fit::Aggregated;
use super::regression::*;
use super::*;

fn example(hits: &[&'static str], flaky: bool, project: &'static str) -> Example<'static> {
    Example {
        hits: hits.to_vec(),
        flaky,
        categories: &[],
        project,
        whole_repository: false,
    }
}

#[test]
fn a_signal_seen_mostly_on_flaky_tests_gets_a_positive_weight() {
    let mut examples = Vec::new();
    for project in ["a", "b", "c", "d"] {
        for i in 0..50 {
            examples.push(example(&["fixed-sleep"], i % 2 == 0, project));
            examples.push(example(&[], i % 10 == 0, project));
            examples.push(example(&["unordered-iteration"], i % 10 == 0, project));
        }
    }
    let (prior, _) = SignalPrior::fit(Language::Java, &examples);
    let unknown = Prevalence::default();
    assert!(prior.weight("fixed-sleep", &unknown) > 1.0, "{prior:?}");
    assert!(
        prior.weight("unordered-iteration", &unknown).abs() < 0.3,
        "{prior:?}"
    );
    let sleep = prior.probability_of(&["fixed-sleep"], &unknown);
    let nothing = prior.probability_of(&[], &unknown);
    assert!(sleep > 0.5 && nothing < 0.5, "{sleep} {nothing}");
    assert!(prior.warning_probability > 0.5 && prior.warning_probability < 1.0);
}

#[test]
fn a_mitigation_never_counts_for_flakiness() {
    // Waiting on a condition, seen mostly on flaky tests here, as in asynchronous code it is:
    // still a cure, so it weighs nothing rather than something for flakiness; mocks, seen mostly
    // on stable tests, keep their negative weight.
    let mut examples = Vec::new();
    for project in ["a", "b", "c", "d"] {
        for i in 0..50 {
            examples.push(example(&["fixed-sleep"], i % 2 == 0, project));
            examples.push(example(&["condition-wait"], i % 2 == 0, project));
            examples.push(example(&["mocks"], i % 20 == 0, project));
            examples.push(example(&[], i % 10 == 0, project));
        }
    }
    let (prior, _) = SignalPrior::fit(Language::Java, &examples);
    let unknown = Prevalence::default();
    assert_eq!(prior.weight("condition-wait", &unknown), 0.0, "{prior:?}");
    assert!(prior.weight("mocks", &unknown) < -0.3, "{prior:?}");
    assert!(prior.weight("fixed-sleep", &unknown) > 0.5, "{prior:?}");
}

/// Three projects where one test in ten sleeps (one of those in `rare_flaky_every / 10` flaky,
/// one other test in 29) and three where every test sleeps (one in `common_flaky_every` flaky),
/// 6,000 tests each: enough that the strongest candidate penalty does not hide the effect.
fn sleepers(rare_flaky_every: usize, common_flaky_every: usize) -> Vec<Example<'static>> {
    let mut examples = Vec::new();
    for project in ["rare-1", "rare-2", "rare-3"] {
        for i in 0..6000 {
            let sleeps = i % 10 == 0;
            let flaky = if sleeps {
                i % rare_flaky_every == 0
            } else {
                i % 29 == 0
            };
            examples.push(example(
                if sleeps { &["fixed-sleep"] } else { &[] },
                flaky,
                project,
            ));
        }
    }
    for project in ["common-1", "common-2", "common-3"] {
        for i in 0..6000 {
            examples.push(example(
                &["fixed-sleep"],
                i % common_flaky_every == 0,
                project,
            ));
        }
    }
    examples
}

fn sleeping_test() -> Signals {
    signals::detect(Language::Java, "void t() { Thread.sleep(100); }")
}

/// A project of 100 Java tests, of which `sleeping` sleep.
fn project_with_sleepers(sleeping: usize) -> Prevalence {
    let sleeps = sleeping_test();
    let plain = signals::detect(Language::Java, "void t() { assertEquals(1, 1); }");
    (0..100)
        .map(|i| (Language::Java, if i < sleeping { &sleeps } else { &plain }))
        .collect()
}

#[test]
fn a_signal_common_in_a_project_counts_less_there() {
    // Where few tests sleep, the sleeping ones are the flaky ones; where every test sleeps,
    // sleeping says nothing.
    let examples = sleepers(20, 12);
    let (prior, _) = SignalPrior::fit(Language::Java, &examples);
    assert!(
        prior
            .share_weights
            .iter()
            .any(|(name, weight)| name == "fixed-sleep" && *weight < 0.0),
        "{prior:?}"
    );
    let sleeps = sleeping_test();
    let (rare, common) = (project_with_sleepers(5), project_with_sleepers(100));
    assert!(
        prior.probability(&sleeps, &rare) > prior.probability(&sleeps, &common) + 0.1,
        "{} {}",
        prior.probability(&sleeps, &rare),
        prior.probability(&sleeps, &common)
    );
    assert!(prior.weight("fixed-sleep", &rare) > prior.weight("fixed-sleep", &common));
    // An unknown project is the typical one: between the two.
    let typical = prior.share("fixed-sleep", &Prevalence::default());
    assert!(typical > 0.3 && typical < 0.7, "{typical}");
    // A single test says little about its project: its share stays near the typical one.
    let alone: Prevalence = [(Language::Java, &sleeps)].into_iter().collect();
    let single = prior.share("fixed-sleep", &alone);
    assert!((single - typical).abs() < 0.1, "{single} {typical}");
}

#[test]
fn a_signal_common_in_a_project_never_counts_more_there() {
    // Projects where every test sleeps are the flakiest here, as asynchronous projects often
    // are: that would weigh the share up and warn on all of such a project's tests. The share
    // may only lower what a sleep says.
    let examples = sleepers(60, 2);
    let (prior, _) = SignalPrior::fit(Language::Java, &examples);
    assert!(
        prior.share_weights.iter().all(|(_, weight)| *weight <= 0.0),
        "{prior:?}"
    );
    let sleeps = sleeping_test();
    let (rare, common) = (project_with_sleepers(5), project_with_sleepers(100));
    assert!(prior.probability(&sleeps, &common) <= prior.probability(&sleeps, &rare));
}

#[test]
fn a_long_test_weighs_more_than_a_short_one_with_the_same_risks() {
    // Among tests that sleep, the long ones are the flaky ones.
    let mut examples = Vec::new();
    for project in ["a", "b", "c", "d"] {
        for i in 0..60 {
            examples.push(example(&["fixed-sleep"], i % 10 == 0, project));
            examples.push(example(
                &["fixed-sleep", "lines>=20", "lines>=40"],
                i % 2 == 0,
                project,
            ));
            examples.push(example(&[], i % 30 == 0, project));
        }
    }
    let (prior, _) = SignalPrior::fit(Language::Java, &examples);
    let unknown = Prevalence::default();
    let short = prior.probability_of(&["fixed-sleep"], &unknown);
    let long = prior.probability_of(&["fixed-sleep", "lines>=20", "lines>=40"], &unknown);
    assert!(long > short + 0.1, "{long} {short}");
}

#[test]
fn the_calibration_keeps_its_fixed_points() {
    assert!((calibrated(0.3, 0.6, 0.8) - 0.25).abs() < 1e-9);
    assert!((calibrated(0.6, 0.6, 0.8) - 0.5).abs() < 1e-9);
    assert!((calibrated(0.8, 0.6, 0.8) - 0.95).abs() < 1e-9);
    assert!((calibrated(1.0, 0.6, 0.8) - 1.0).abs() < 1e-9);
    assert!(calibrated(0.7, 0.6, 0.8) < calibrated(0.75, 0.6, 0.8));
    assert_eq!(calibrated(0.0, 0.6, 0.8), 0.0);
}

#[test]
fn the_solver_solves() {
    let solution = solve(vec![vec![2.0, 1.0], vec![1.0, 3.0]], vec![3.0, 5.0]).unwrap();
    assert!((solution[0] - 0.8).abs() < 1e-12 && (solution[1] - 1.4).abs() < 1e-12);
    assert!(solve(vec![vec![0.0, 0.0], vec![0.0, 0.0]], vec![1.0, 1.0]).is_none());
}

#[test]
fn a_test_s_length_is_no_evidence_and_a_share_can_outweigh_a_risk() {
    // Features: 0 a risk, 1 a second risk, 2 the length (after the risks); the share feature of
    // risk i sits 3 after it.
    let (features, risks) = (3, 2);
    let weights = [1.0, 0.5, 2.0, 0.0, -10.0];
    assert!(!super::fit::has_evidence(
        &[(2, 1.0)],
        &weights,
        features,
        risks
    ));
    assert!(super::fit::has_evidence(
        &[(0, 1.0), (3, 0.4)],
        &weights,
        features,
        risks
    ));
    assert!(
        !super::fit::has_evidence(&[(1, 1.0), (4, 0.2)], &weights, features, risks),
        "0.5 - 10 x 0.2 speaks against flakiness"
    );
}

#[test]
fn the_information_threshold_fills_its_share_with_tests_that_can_be_flagged() {
    // In each repository of 200 tests: 4 sleep (half flaky), 10 read the wall clock (one flaky),
    // 60 are long with no risk (one in six flaky), the rest plain (one in 68). Long tests rank
    // above the wall clock but can never be flagged; the information threshold (10% of tests)
    // must reach the wall-clock tests instead of stopping at the long ones.
    let mut examples = Vec::new();
    for project in ["a", "b", "c", "d", "e"] {
        for i in 0..200 {
            let (hits, flaky): (&'static [&'static str], bool) = match i {
                0..4 => (&["fixed-sleep"], i % 2 == 0),
                4..14 => (&["wall-clock"], i == 4),
                14..74 => (&["lines>=40"], i % 6 == 0),
                _ => (&[], i % 68 == 0),
            };
            examples.push(Example {
                whole_repository: true,
                ..example(hits, flaky, project)
            });
        }
    }
    let (prior, _) = SignalPrior::fit(Language::Java, &examples);
    let unknown = Prevalence::default();
    let judged = |code: &str| {
        let signals = signals::detect(Language::Java, code);
        crate::predict::prior_opinion(&prior, &signals, &unknown)
            .0
            .score
    };
    let clock = judged("void t() { long now = System.currentTimeMillis(); check(now); }");
    let long_body: String = (0..45).map(|i| format!("  step({i});\n")).collect();
    let long = judged(&format!("void t() {{\n{long_body}}}"));
    let nothing = judged("void t() { check(1); }");
    assert!(
        clock > 0.5,
        "the wall-clock test is flagged: {clock} {prior:?}"
    );
    assert!(long <= 0.5, "a long test with no risk is not: {long}");
    assert!(nothing <= 0.5, "nor a test with no signal: {nothing}");
}

/// One busy project where most tests have a risk (feature 0) and three in ten are flaky, and two
/// quiet ones where few have it and three in a hundred are; within each project the risk changes
/// nothing. With `intercepts`, features 1 to 3 are the projects' own intercepts.
fn busy_and_quiet(intercepts: bool) -> Aggregated {
    let mut rows = Vec::new();
    for (project, with_risk, flaky_rate) in [(0, 0.8, 0.3), (1, 0.1, 0.03), (2, 0.1, 0.03)] {
        for risk in [true, false] {
            let tests = 200.0 * if risk { with_risk } else { 1.0 - with_risk };
            let mut row: Vec<(usize, f64)> = if risk { vec![(0, 1.0)] } else { vec![] };
            if intercepts {
                row.push((1 + project, 1.0));
            }
            rows.push((row.clone(), true, tests * flaky_rate));
            rows.push((row, false, tests * (1.0 - flaky_rate)));
        }
    }
    rows
}

#[test]
fn a_project_s_own_intercept_takes_its_base_rate_from_the_signal_common_in_it() {
    let plain = Penalties {
        weights: 1.0,
        intercepts: None,
    };
    let (_, across) = fit_logistic(&busy_and_quiet(false), 1, plain, &(1..1));
    let within = Penalties {
        weights: 1.0,
        intercepts: Some(1.0),
    };
    let (_, weights) = fit_logistic(&busy_and_quiet(true), 4, within, &(1..4));
    assert!(across[0] > 1.0, "{across:?}");
    assert!(weights[0].abs() < 0.1, "{weights:?}");
    assert!(weights[1] > weights[2] + 1.0, "{weights:?}");
}

#[test]
fn intercepts_solve_the_same_problem_as_plain_features_with_the_same_penalty() {
    let same = |intercepts| Penalties {
        weights: 3.0,
        intercepts,
    };
    let rows = busy_and_quiet(true);
    let (bias, weights) = fit_logistic(&rows, 4, same(Some(3.0)), &(1..4));
    let (plain_bias, plain_weights) = fit_logistic(&rows, 4, same(None), &(4..4));
    assert!((bias - plain_bias).abs() < 1e-9, "{bias} {plain_bias}");
    for (weight, plain) in weights.iter().zip(&plain_weights) {
        assert!(
            (weight - plain).abs() < 1e-9,
            "{weights:?} {plain_weights:?}"
        );
    }
}

#[test]
fn what_kind_of_test_it_is_comes_after_what_it_does() {
    // Async tests weigh more than sleeps here, yet a sleeping async test is warned for its sleep.
    let mut examples = Vec::new();
    for project in ["a", "b", "c", "d"] {
        for i in 0..60 {
            examples.push(example(&["async-test"], i % 2 == 0, project));
            examples.push(example(&["fixed-sleep"], i % 4 == 0, project));
            examples.push(example(&[], i % 20 == 0, project));
        }
    }
    let (prior, _) = SignalPrior::fit(Language::Rust, &examples);
    let unknown = Prevalence::default();
    assert!(
        prior.weight("async-test", &unknown) > prior.weight("fixed-sleep", &unknown),
        "{prior:?}"
    );
    let code = "#[tokio::test]\nasync fn t() {\n    tokio::time::sleep(Duration::from_millis(200)).await;\n}\n";
    let signals = signals::detect(Language::Rust, code);
    let (opinion, evidence) = crate::predict::prior_opinion(&prior, &signals, &unknown);
    let ids: Vec<&str> = evidence.iter().map(|hit| hit.id).collect();
    assert_eq!(ids, ["fixed-sleep", "async-test"]);
    assert_eq!(opinion.category, Some(Category::AsyncWait));
}
