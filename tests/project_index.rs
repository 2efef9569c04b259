//! What a project index says, and what it does not: a flaky list naming one test leaves the
//! shipped models' warnings on the other tests as they were (a test no source names is not
//! evidence of stability); a test marked "not flaky" is silenced; and `predict`, `check` and the
//! language server give every test the same score.

mod common;
mod lsp_client;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use flakesense::extract::extract_tests;
use flakesense::index::{Label, Origin};
use flakesense::labels::{self, TestLabel};
use flakesense::language::Language;

const JAVA: &str = "src/test/java/demo/NotificationTest.java";
const PYTHON: &str = "tests/test_status_page.py";
const RUST: &str = "tests/server.rs";
const SLEEPING_JAVA_TEST: &str = "demo.NotificationTest#deliversAnOrderNotification";
const LISTED: &str = "tests/test_status_page.py::test_formats_uptime";

/// The demo tree in a workspace of its own.
fn demo() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("a temporary directory");
    for relative in [JAVA, PYTHON, RUST] {
        let target = root.path().join(relative);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(common::fixtures().join("demo").join(relative), target).unwrap();
    }
    std::fs::write(root.path().join("flakesense.toml"), "").unwrap();
    std::fs::write(root.path().join("known-flaky.txt"), format!("{LISTED}\n")).unwrap();
    root
}

fn flakesense(root: &Path, arguments: &[&str]) -> Value {
    let output = common::command("flakesense", root)
        .args(arguments)
        .output()
        .expect("flakesense runs");
    assert!(
        output.status.code() == Some(0) || output.status.code() == Some(1),
        "{arguments:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on standard output")
}

/// The tests `check` flags, with their scores.
fn check(root: &Path, sigma: Option<&str>) -> BTreeMap<String, f64> {
    let mut arguments = vec!["check", "--format", "json"];
    if let Some(sigma) = sigma {
        arguments.extend(["--sigma", sigma]);
    }
    flakesense(root, &arguments)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| {
            (
                finding["id"].as_str().unwrap().to_string(),
                finding["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Every test of the three files with its `predict` score and verdict.
fn predict(root: &Path) -> BTreeMap<String, (f64, bool)> {
    flakesense(root, &["predict", "--format", "json", JAVA, PYTHON, RUST])
        .as_array()
        .unwrap()
        .iter()
        .map(|verdict| {
            (
                verdict["id"].as_str().unwrap().to_string(),
                (
                    verdict["score"].as_f64().unwrap(),
                    verdict["flaky"].as_bool().unwrap(),
                ),
            )
        })
        .collect()
}

/// The score of each test a real server reports on, once it has read the workspace.
async fn served_scores(root: &Path) -> BTreeMap<String, f64> {
    let (mut client, _child) = lsp_client::spawn_server(common::binary(), root);
    let root_uri = format!("file://{}", root.display());
    client
        .initialize(json!({
            "processId": null,
            "rootUri": root_uri,
            "capabilities": {},
            "initializationOptions": {"debounceMs": 10},
        }))
        .await;
    client
        .collect_until(
            "the log line of the workspace's tests",
            lsp_client::read_the_workspace,
            Duration::from_secs(60),
        )
        .await;
    let mut scores = BTreeMap::new();
    for (relative, language) in [(JAVA, "java"), (PYTHON, "python"), (RUST, "rust")] {
        let uri = format!("file://{}", root.join(relative).display());
        let text = std::fs::read_to_string(root.join(relative)).unwrap();
        client.open(&uri, language, 1, &text).await;
        let published = client.diagnostics(&uri, Some(1)).await;
        for diagnostic in published["diagnostics"].as_array().unwrap() {
            scores.insert(
                diagnostic["data"]["testId"].as_str().unwrap().to_string(),
                diagnostic["data"]["score"].as_f64().unwrap(),
            );
        }
    }
    client.shutdown_and_exit().await;
    scores
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flaky_list_adds_a_label_and_silences_nothing_and_every_front_end_agrees() {
    let root = demo();
    let root = root.path();
    let before = check(root, None);
    assert!(before.contains_key(SLEEPING_JAVA_TEST), "{before:?}");

    // A list naming one test: every other test of the repository enters the index unlabelled.
    let output = common::command("flakesense", root)
        .args(["train", "--repo", ".", "--flaky-list", "known-flaky.txt"])
        .output()
        .expect("train runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let after = check(root, None);
    let others = |flagged: &BTreeMap<String, f64>| -> Vec<String> {
        flagged
            .keys()
            .filter(|id| id.as_str() != LISTED)
            .cloned()
            .collect()
    };
    assert_eq!(
        others(&after),
        others(&before),
        "the shipped models' warnings on the other tests are unchanged"
    );
    assert!(after.contains_key(LISTED), "the listed test is flagged");

    // `predict` shows the tests no source named as unlabelled, never as "not flaky": the
    // Python file's tests are each other's (and their own) neighbours in the project index.
    let predicted = flakesense(root, &["predict", "--format", "json", PYTHON]);
    let neighbours: Vec<&Value> = predicted
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|test| test["neighbors"].as_array().unwrap())
        .collect();
    assert!(
        neighbours
            .iter()
            .any(|neighbour| neighbour["label"] == "unlabelled" && neighbour["flaky"] == false),
        "{neighbours:?}"
    );
    let text = common::run_ok(common::binary(), &["predict", PYTHON], root);
    assert!(text.contains(" unlabelled "), "{text}");
    assert!(!text.contains("not flaky"), "{text}");

    // A person marks the sleeping Java test not flaky: that decides.
    let source = std::fs::read_to_string(root.join(JAVA)).unwrap();
    let test = extract_tests(Language::Java, JAVA, &source)
        .tests
        .into_iter()
        .find(|test| test.id == SLEEPING_JAVA_TEST)
        .expect("the demo's sleeping test");
    labels::record(
        root,
        &[TestLabel {
            test,
            path: JAVA.to_string(),
            label: Label::Stable,
            categories: Vec::new(),
            origin: Origin::Manual,
            source: "editor".to_string(),
        }],
    )
    .expect("the label is recorded");
    // Every score `check` gives (sigma 0), and those it flags by default (above 0.95).
    let checked = check(root, Some("0"));
    let silenced: BTreeMap<String, f64> = checked
        .iter()
        .filter(|(_, score)| **score > 0.95)
        .map(|(id, score)| (id.clone(), *score))
        .collect();
    assert!(
        !silenced.contains_key(SLEEPING_JAVA_TEST),
        "a test marked not flaky is silenced: {checked:?}"
    );
    assert_eq!(
        others(&silenced).len(),
        others(&before).len() - 1,
        "the mark silences that test only"
    );

    // The same scores and verdicts from `predict`, `check` and the server.
    let predicted = predict(root);
    assert_eq!(predicted.len(), 6, "{predicted:?}");
    for (id, (score, flaky)) in &predicted {
        assert_eq!(checked.get(id).copied().unwrap_or(0.0), *score, "{id}");
        assert_eq!(
            *flaky,
            silenced.contains_key(id),
            "{id}: predict and check differ"
        );
    }
    let served = served_scores(root).await;
    assert!(!served.is_empty());
    for (id, score) in &served {
        assert_eq!(
            predicted[id].0, *score,
            "{id}: the server and predict differ"
        );
    }
    for (id, (score, _)) in &predicted {
        if *score > 0.5 {
            assert!(served.contains_key(id), "{id} ({score}) has no diagnostic");
        }
    }
}
