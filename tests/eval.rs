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
    let fitted = |language: &str| {
        stderr
            .lines()
            .find(|line| line.starts_with(&format!("fitted the {language} signal prior")))
            .unwrap_or_else(|| panic!("no {language} prior in {stderr}"))
            .to_string()
    };
    // Python has whole repositories: the kept candidate is judged by their held-out recall.
    let python = fitted("python");
    assert!(python.contains("L2 penalty "), "{python}");
    assert!(
        python.contains("held-out mean recall at alarm rates 1%-10%: "),
        "{python}"
    );
    assert!(!python.contains("-0.0"), "{python}");
    // Java has labelled tests alone: judged by the Matthews correlation.
    let java = fitted("java");
    assert!(java.contains("held-out Matthews correlation"), "{java}");
}
