//! Unit tests of the evaluation protocols on small synthetic projects whose answer is known.

use super::*;
use crate::embed::Tokenizer;
use crate::index::Dims;
use crate::language::Language;

fn test(project: &str, n: usize, flaky: bool) -> LabeledTest {
    let body = if flaky {
        format!(
            "@Test void t{n}() throws Exception {{ Thread.sleep({n}); latch.await(); assertTrue(done); }}"
        )
    } else {
        format!("@Test void t{n}() {{ assertEquals({n}, parser.parse(\"{n}\").value()); }}")
    };
    LabeledTest {
        id: format!("{project}.T#t{n}"),
        project: project.to_string(),
        language: Language::Java,
        flaky,
        categories: if flaky {
            vec![Category::AsyncWait]
        } else {
            vec![]
        },
        source: "synthetic".to_string(),
        code: body,
    }
}

fn data() -> Vec<LabeledTest> {
    let mut tests = Vec::new();
    for project in ["alpha", "beta"] {
        for n in 0..30 {
            tests.push(test(project, n, n % 3 == 0));
        }
    }
    tests.push(test("gamma", 1, false));
    tests
}

fn settings(protocol: Protocol) -> EvalSettings {
    EvalSettings {
        protocol,
        build: BuildSettings {
            tokenizer: Tokenizer::Code,
            dims: Dims::Eps(0.33),
            seed: 1,
            description: String::new(),
        },
        predict: predict::Settings { k: 3, sigma: 0.5 },
        split_seed: 1,
        prior: false,
    }
}

#[test]
fn per_project_folds_find_the_obvious_flaky_tests() {
    let (report, outcomes) = evaluate(
        &data(),
        &[],
        &settings(Protocol::PerProject {
            folds: 5,
            min_flaky: 7,
        }),
        &|_, _| {},
    );
    assert_eq!(report.skipped_projects, ["gamma"]);
    assert_eq!(report.projects.len(), 2);
    assert_eq!(report.tests, 60);
    assert_eq!(report.flaky, 20);
    assert_eq!(report.cumulative.recall, 1.0);
    assert_eq!(report.cumulative.precision, 1.0);
    assert_eq!(report.cumulative.category_accuracy, Some(1.0));
    assert_eq!(report.timing.splits, 10);
    assert_eq!(outcomes.len(), 60);
    assert!(
        outcomes
            .iter()
            .all(|outcome| outcome.nearest_id.as_deref() != Some(outcome.id.as_str())),
        "a test never trains on itself"
    );
}

#[test]
fn leave_one_project_out_trains_only_on_other_projects() {
    let mut extra = vec![test("alpha", 99, true)];
    // An extra training row of the tested project must not be used: give it the exact code of a
    // non-flaky alpha test but a flaky label; were it used, that test would be flagged.
    extra[0].code = test("alpha", 1, false).code;
    let (report, outcomes) = evaluate(
        &data(),
        &extra,
        &settings(Protocol::LeaveOneProjectOut),
        &|_, _| {},
    );
    assert_eq!(
        report
            .projects
            .iter()
            .map(|p| p.project.as_str())
            .collect::<Vec<_>>(),
        ["alpha", "beta", "gamma"]
    );
    let alpha_one = outcomes.iter().find(|o| o.id == "alpha.T#t1").unwrap();
    assert!(!alpha_one.predicted);
    assert!(outcomes.iter().all(|o| {
        o.nearest_id
            .as_ref()
            .is_none_or(|id| !id.starts_with(&format!("{}.", o.project)))
    }));
    assert_eq!(report.cumulative.recall, 1.0);
}

#[test]
fn progress_is_reported_per_split() {
    let calls = AtomicUsize::new(0);
    evaluate(
        &data(),
        &[],
        &settings(Protocol::LeaveOneProjectOut),
        &|done, total| {
            calls.fetch_add(1, Ordering::Relaxed);
            assert!(done <= total && total == 3);
        },
    );
    assert_eq!(calls.load(Ordering::Relaxed), 3);
}
