//! `flakesense check --format sarif` passes a real SARIF 2.1.0 validator: Microsoft's SARIF
//! Multitool (`sarif-multitool validate`), with its SARIF rules and with GitHub's ingestion rules
//! (`--rule-kind Gh`). `.ci/run` installs the tool (`npm install --global
//! @microsoft/sarif-multitool`); where it is absent the test says so and skips.

mod common;

use std::path::Path;

use common::{command, run_ok, tiny_model, tool_available, write};

const VALIDATOR: &str = "sarif-multitool";

/// Validator results that are allowed, with the reason.
const ACCEPTED: &[(&str, &str)] = &[(
    "SARIF2005",
    "flakesense has no public home page yet to give as the driver's informationUri",
)];

/// A tree with findings of several categories and both levels, a path with a space and
/// non-ASCII letters, and a name after a character outside the Basic Multilingual Plane.
fn write_tree(root: &Path) {
    write(
        root,
        "src/test/java/com/ex/My Tests/ÜberTest.java",
        r#"package com.ex;

public class ÜberTest {
    @Test
    /* 😀 */ public void waitsForWorker() throws Exception {
        final CountDownLatch latch = new CountDownLatch(1);
        new Thread(() -> { doWork(); latch.countDown(); }).start();
        Thread.sleep(1000);
        assertEquals(0, latch.getCount());
    }

    @Test
    public void readsRemotePage() throws Exception {
        URL url = new URL("http://www.example.com/index.html");
        HttpURLConnection connection = (HttpURLConnection) url.openConnection();
        assertEquals(200, connection.getResponseCode());
    }

    @Test
    public void measuresElapsedTime() {
        long start = System.currentTimeMillis();
        task.run();
        assertTrue(System.currentTimeMillis() - start < 100);
    }

    @Test
    public void addsNumbers() {
        assertEquals(4, 2 + 2);
    }
}
"#,
    );
    write(
        root,
        "tests/test_worker.py",
        r#"import threading
import time


def test_waits_for_thread():
    worker = threading.Thread(target=job.run)
    worker.start()
    time.sleep(2)
    assert job.done()
"#,
    );
}

fn sarif_output(root: &Path, extra: &[&str]) -> serde_json::Value {
    let model = tiny_model().display().to_string();
    let mut arguments = vec![
        "check",
        "--no-default-models",
        "--model",
        &model,
        "--k",
        "3",
        "--format",
        "sarif",
    ];
    arguments.extend(extra);
    let output = command("flakesense", root)
        .args(&arguments)
        .output()
        .unwrap();
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("SARIF is JSON")
}

/// Runs the validator with `rule_kind` and returns its error and warning results.
fn validate(file: &Path, rule_kind: &str, directory: &Path) -> Vec<(String, String, String)> {
    let stem = file.file_stem().unwrap().to_string_lossy();
    let report = directory.join(format!("{stem}-validated-by-{rule_kind}.sarif"));
    run_ok(
        VALIDATOR,
        &[
            "validate",
            "--rule-kind",
            rule_kind,
            "--output",
            report.to_str().unwrap(),
            file.to_str().unwrap(),
        ],
        directory,
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("the validator's report"))
            .unwrap();
    report["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|result| {
            (
                result["ruleId"].as_str().unwrap_or_default().to_string(),
                result["level"].as_str().unwrap_or("warning").to_string(),
                result["message"].to_string(),
            )
        })
        .filter(|(_, level, _)| level == "error" || level == "warning")
        .collect()
}

#[test]
fn sarif_output_passes_the_sarif_multitool_validator() {
    if !tool_available(VALIDATOR) {
        println!(
            "skipped: `{VALIDATOR}` is not installed (npm install --global @microsoft/sarif-multitool)"
        );
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path().join("project");
    write_tree(&root);
    for (name, extra) in [
        ("findings", &["--sigma", "0.5"][..]),
        ("none", &["--sigma", "1"][..]),
    ] {
        let log = sarif_output(&root, extra);
        let results = log["runs"][0]["results"].as_array().unwrap();
        if name == "findings" {
            let rules: Vec<&str> = results
                .iter()
                .map(|result| result["ruleId"].as_str().unwrap())
                .collect();
            for rule in [
                "flakesense/async-wait",
                "flakesense/network",
                "flakesense/time",
            ] {
                assert!(rules.contains(&rule), "{rule} missing from {rules:?}");
            }
            let levels: Vec<&str> = results
                .iter()
                .map(|result| result["level"].as_str().unwrap())
                .collect();
            assert!(levels.contains(&"warning") && levels.contains(&"note"));
        } else {
            assert!(results.is_empty());
        }
        let file = directory.path().join(format!("{name}.sarif"));
        std::fs::write(&file, serde_json::to_vec_pretty(&log).unwrap()).unwrap();
        for rule_kind in ["Sarif", "Gh"] {
            let problems: Vec<_> = validate(&file, rule_kind, directory.path())
                .into_iter()
                .filter(|(rule, _, _)| !ACCEPTED.iter().any(|(accepted, _)| rule == accepted))
                .collect();
            assert!(
                problems.is_empty(),
                "{name}.sarif fails the {rule_kind} rules: {problems:#?}"
            );
        }
    }
}

#[test]
fn the_validator_catches_a_broken_log() {
    if !tool_available(VALIDATOR) {
        println!("skipped: `{VALIDATOR}` is not installed");
        return;
    }
    // Without this, a validator that silently accepted everything would pass the test above.
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("broken.sarif");
    std::fs::write(
        &file,
        r#"{"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"level": "bogus", "message": {"text": "x"}}]}]}"#,
    )
    .unwrap();
    let problems = validate(&file, "Sarif", directory.path());
    assert!(
        problems.iter().any(|(_, level, _)| level == "error"),
        "{problems:?}"
    );
}
