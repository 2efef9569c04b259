//! `flakesense eval` on whole repositories (`--fixes`, the fixtrain layout): each repository is
//! judged by a prior fitted without it, and `--predictions` lists every judged test with the
//! evidence `check` would show.

mod common;

use common::{binary, fixtures, run_ok};

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
