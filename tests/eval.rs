//! `flakesense eval` and `train` on whole repositories (`--fixes`, the fixtrain layout): each
//! repository is judged by a prior fitted without it, `--predictions` lists every judged test
//! with the evidence `check` would show, and `train` says which fit it kept.

mod common;

use common::{binary, command, fixtures, run_ok};

#[test]
fn leave_one_repository_out_writes_each_tests_score_and_evidence() {
    let directory = tempfile::tempdir().unwrap();
    let predictions = directory.path().join("predictions.csv");
    let table = run_ok(
        binary(),
        &[
            "eval",
            "--data",
            "check/tiny.csv",
            "--fixes",
            "fixtrain",
            "--predictions",
            predictions.to_str().unwrap(),
        ],
        &fixtures(),
    );
    assert!(table.contains("owner+alpha"), "{table}");
    assert!(table.contains("owner+beta"), "{table}");

    let mut reader = csv::Reader::from_path(&predictions).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    // Each repository: three tests of its snapshot and the test fixed for flakiness.
    assert_eq!(rows.len(), 8, "{rows:?}");
    let fixed: Vec<&csv::StringRecord> = rows.iter().filter(|row| &row[2] == "1").collect();
    assert_eq!(fixed.len(), 2, "{rows:?}");
    for row in fixed {
        assert!(row[0].contains("::test_serves@"), "{row:?}");
        // The sleep is in the fixture the test requests, not in the test: the evidence says so.
        assert!(
            row[5].contains("`time.sleep(2)` in fixture `started_server`"),
            "{row:?}"
        );
        let score: f64 = row[3].parse().unwrap();
        let plain = rows
            .iter()
            .find(|other| other[1] == row[1] && other[0].ends_with("test_adds"))
            .expect("the repository's plain test");
        assert!(
            score > plain[3].parse::<f64>().unwrap(),
            "{row:?} {plain:?}"
        );
    }
}

#[test]
fn training_says_which_penalty_it_kept_and_how_it_did_on_held_out_projects() {
    let directory = tempfile::tempdir().unwrap();
    let model = directory.path().join("model.idx");
    let output = command("flakesense", &fixtures())
        .args([
            "train",
            "--data",
            "check/tiny.csv",
            "--fixes",
            "fixtrain",
            "--out",
        ])
        .arg(&model)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // Each language's fit is followed by its candidates, one per line, the kept one marked.
    let candidates = |language: &str| -> Vec<&str> {
        let header = format!("fitted the {language} signal prior");
        stderr
            .lines()
            .skip_while(|line| !line.starts_with(&header))
            .skip(1)
            .take_while(|line| line.starts_with("  "))
            .collect()
    };
    // Python has whole repositories: each candidate is judged by their held-out recall.
    let python = candidates("python");
    assert_eq!(python.len(), 6, "{stderr}");
    for line in &python {
        assert!(line.contains("L2 penalty "), "{line}");
        assert!(
            line.contains("held-out mean recall at alarm rates 1%-10%: "),
            "{line}"
        );
        assert!(!line.contains("-0.0"), "{line}");
    }
    let kept: Vec<&&str> = python
        .iter()
        .filter(|line| line.ends_with("(kept)"))
        .collect();
    assert_eq!(kept.len(), 1, "{stderr}");
    // Java has labelled tests alone: judged by the Matthews correlation.
    let java = candidates("java");
    assert_eq!(java.len(), 6, "{stderr}");
    assert!(
        java[0].contains("held-out Matthews correlation"),
        "{stderr}"
    );
    // Rust has too few projects with flaky and other tests to judge a candidate on.
    assert_eq!(
        candidates("rust"),
        ["  no penalty could be judged on held-out projects; the weakest was kept"],
        "{stderr}"
    );
}
