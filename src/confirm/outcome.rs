//! The outcomes of one run, read from JUnit XML reports with the reader `train --junit-xml` uses,
//! from the output of a cargo test binary, or from the results file of flakesense's pytest
//! plugin (the outcomes of a batch of runs).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::history::junit::report_xml::{Report, parse_report};
pub use crate::history::junit::{CaseResult, Outcome};

/// The longest part of a failure message kept.
const MAX_MESSAGE_CHARS: usize = 4000;

/// Every test case of the JUnit XML reports at `path` (a file, or the `.xml` files under a
/// directory in name order), in report order; with `since`, only files written after it.
/// Files that are not reports, or malformed (a run ended while writing), give nothing: the
/// tests they would have held have no result, which the caller reports.
pub fn read_reports(path: &Path, since: Option<SystemTime>) -> Vec<CaseResult> {
    let mut files = Vec::new();
    if path.is_file() {
        files.push(path.to_path_buf());
    } else if path.is_dir() {
        collect_xml_files(path, &mut files);
        files.sort();
    }
    let mut results = Vec::new();
    for file in files {
        if let Some(since) = since {
            let written = std::fs::metadata(&file).and_then(|metadata| metadata.modified());
            if written.is_ok_and(|written| written < since) {
                continue;
            }
        }
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        if let Ok(Report::Junit(cases)) = parse_report(&String::from_utf8_lossy(&bytes)) {
            results.extend(cases);
        }
    }
    results
}

fn collect_xml_files(directory: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_xml_files(&path, files),
            Ok(kind) if kind.is_file() && path.extension().is_some_and(|ext| ext == "xml") => {
                files.push(path)
            }
            _ => {}
        }
    }
}

/// One line of the results file of flakesense's pytest plugin: one execution of a test.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginResult {
    /// Which run of the batch, from 1.
    pub run: u32,
    /// The execution, with the class and name a JUnit XML report would give it; a timed-out
    /// execution has none.
    pub result: Option<CaseResult>,
    /// The test whose run timed out, by class and name.
    pub timed_out: Option<(String, String)>,
}

/// The lines of the pytest plugin's results file, in order; lines that do not parse (a run
/// ended while writing) give nothing.
pub fn read_plugin_results(path: &Path) -> Vec<PluginResult> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|line| {
            let run = u32::try_from(line["run"].as_u64()?).ok()?;
            let classname = line["classname"].as_str()?.to_string();
            let name = line["name"].as_str()?.to_string();
            let outcome = match line["outcome"].as_str()? {
                "passed" => Outcome::Passed,
                "failed" => Outcome::Failed,
                "skipped" => Outcome::Skipped,
                "timed-out" => {
                    return Some(PluginResult {
                        run,
                        result: None,
                        timed_out: Some((classname, name)),
                    });
                }
                _ => return None,
            };
            let messages = line["message"]
                .as_str()
                .map(|message| vec![message.chars().take(MAX_MESSAGE_CHARS).collect()])
                .unwrap_or_default();
            Some(PluginResult {
                run,
                result: Some(CaseResult {
                    classname,
                    name,
                    outcome,
                    failed_attempts: 0,
                    messages,
                }),
                timed_out: None,
            })
        })
        .collect()
}

/// The results a libtest binary prints (`test tests::name ... ok`), with the text of each
/// failure (`---- tests::name stdout ----`). Test cases carry the test's name and no class.
pub fn parse_cargo_output(output: &str) -> Vec<CaseResult> {
    let mut results: Vec<CaseResult> = Vec::new();
    let mut failure: Option<(String, String)> = None;
    let finish = |failure: &mut Option<(String, String)>, results: &mut Vec<CaseResult>| {
        if let Some((name, text)) = failure.take()
            && let Some(result) = results.iter_mut().rev().find(|result| result.name == name)
        {
            result.messages.push(text.trim().to_string());
        }
    };
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("---- ")
            && let Some(name) = rest.strip_suffix(" stdout ----")
        {
            finish(&mut failure, &mut results);
            failure = Some((name.to_string(), String::new()));
            continue;
        }
        if failure.is_some() && (line == "failures:" || line.starts_with("test result:")) {
            finish(&mut failure, &mut results);
            continue;
        }
        if let Some((_, text)) = failure.as_mut() {
            if text.len() < MAX_MESSAGE_CHARS {
                text.push_str(line);
                text.push('\n');
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, verdict)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let outcome = match verdict.trim() {
            "ok" => Outcome::Passed,
            "FAILED" => Outcome::Failed,
            verdict if verdict.starts_with("ignored") => Outcome::Skipped,
            _ => continue,
        };
        results.push(CaseResult {
            classname: String::new(),
            name: name.trim().to_string(),
            outcome,
            failed_attempts: 0,
            messages: Vec::new(),
        });
    }
    finish(&mut failure, &mut results);
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_output_gives_outcomes_and_failure_text() {
        let output = "\nrunning 3 tests\ntest tests::a ... ok\ntest tests::b ... FAILED\ntest tests::c ... ignored, slow\n\nfailures:\n\n---- tests::b stdout ----\n\nthread 'tests::b' (6067) panicked at src/lib.rs:4:22:\nboom: Connection refused\nnote: run with `RUST_BACKTRACE=1`\n\n\nfailures:\n    tests::b\n\ntest result: FAILED. 1 passed; 1 failed; 1 ignored\n";
        let results = parse_cargo_output(output);
        let outcomes: Vec<(&str, Outcome)> = results
            .iter()
            .map(|result| (result.name.as_str(), result.outcome))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("tests::a", Outcome::Passed),
                ("tests::b", Outcome::Failed),
                ("tests::c", Outcome::Skipped)
            ]
        );
        assert!(results[1].messages[0].contains("boom: Connection refused"));
        assert!(results[0].messages.is_empty());
    }

    #[test]
    fn the_plugin_results_give_each_execution_and_each_run_that_timed_out() {
        let scratch = tempfile::tempdir().unwrap();
        let path = scratch.path().join("results.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"nodeid": "t.py::test_a", "classname": "t", "name": "test_a", "execution": 1, "outcome": "passed", "run": 1}"#,
                "\n",
                r#"{"nodeid": "t.py::test_a", "classname": "t", "name": "test_a", "execution": 2, "outcome": "failed", "message": "AssertionError: no", "run": 1}"#,
                "\n",
                r#"{"nodeid": "t.py::test_a", "classname": "t", "name": "test_a", "execution": 1, "outcome": "timed-out", "timeout": 5, "run": 2}"#,
                "\n",
                r#"{"nodeid": "t.py::test_a", "classname": "#,
            ),
        )
        .unwrap();
        let results = read_plugin_results(&path);
        assert_eq!(results.len(), 3);
        let outcomes: Vec<(u32, Option<Outcome>)> = results
            .iter()
            .map(|line| (line.run, line.result.as_ref().map(|result| result.outcome)))
            .collect();
        assert_eq!(
            outcomes,
            [
                (1, Some(Outcome::Passed)),
                (1, Some(Outcome::Failed)),
                (2, None)
            ]
        );
        assert_eq!(
            results[1].result.as_ref().unwrap().messages,
            ["AssertionError: no"]
        );
        assert_eq!(
            results[2].timed_out,
            Some(("t".to_string(), "test_a".to_string()))
        );
    }

    #[test]
    fn reports_are_read_from_files_and_directories_in_order() {
        let scratch = tempfile::tempdir().unwrap();
        let first = scratch.path().join("a/first.xml");
        std::fs::create_dir_all(first.parent().unwrap()).unwrap();
        std::fs::write(
            &first,
            r#"<testsuite name="s"><testcase classname="c" name="t"/></testsuite>"#,
        )
        .unwrap();
        std::fs::write(
            scratch.path().join("b.xml"),
            r#"<testsuite name="s"><testcase classname="c" name="t"><failure message="no"/></testcase></testsuite>"#,
        )
        .unwrap();
        std::fs::write(scratch.path().join("broken.xml"), "<testsuite>").unwrap();
        let results = read_reports(scratch.path(), None);
        let outcomes: Vec<Outcome> = results.iter().map(|result| result.outcome).collect();
        assert_eq!(outcomes, [Outcome::Passed, Outcome::Failed]);
        assert_eq!(read_reports(&first, None).len(), 1);
        assert!(read_reports(&scratch.path().join("missing"), None).is_empty());
    }
}
