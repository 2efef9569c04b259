//! Flaky tests from JUnit XML reports of several CI runs of the same commit.
//!
//! The dialects read are those of Maven Surefire and Failsafe, Gradle, pytest `--junitxml` and
//! cargo-nextest: `<testsuites>` or `<testsuite>` at the root, suites possibly nested, one
//! `<testcase classname=".." name="..">` per test execution. A test case fails when it holds
//! `<failure>` or `<error>`, is skipped when it holds `<skipped>`, and passes otherwise.
//!
//! Retries show in two ways. Surefire (`rerunFailingTestsCount`), Gradle with `mergeReruns`,
//! nextest (`--retries`) and recent pytest-rerunfailures record the failed attempts of one test
//! case as `<flakyFailure>`/`<flakyError>` (it passed in the end) or `<rerunFailure>`/`<rerunError>`
//! (beside a final `<failure>`). Gradle without `mergeReruns` repeats the `<testcase>` instead,
//! one per attempt; the last one is the outcome.
//!
//! A test is flaky when, in one run, it failed an attempt and then passed ("retried and
//! passed"), or when it passed in one run and failed in another ("passed and failed on the same
//! commit": each directory given is taken as one run of the same commit). A test that failed every
//! attempt of every run is broken, not flaky.

pub mod report_xml;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::category::Category;

use super::category_hints;

use report_xml::{Report, parse_report};

/// How one execution of a test case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed,
    Skipped,
}

/// One `<testcase>` element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseResult {
    pub classname: String,
    pub name: String,
    pub outcome: Outcome,
    /// Failed attempts recorded inside the element (`flakyFailure`, `rerunFailure`, ...).
    pub failed_attempts: u32,
    /// Type, message and text of each failure and failed attempt, shortened.
    pub messages: Vec<String>,
}

/// The reports of one CI run.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub path: PathBuf,
    /// Report files read.
    pub files: usize,
    /// XML files that are not JUnit reports (another root element), with that element's name.
    pub other_files: Vec<(PathBuf, String)>,
    pub results: Vec<CaseResult>,
}

/// What the runs say about one test case (`classname`, `name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseHistory {
    pub classname: String,
    pub name: String,
    /// Runs whose last attempt passed, failed, or that failed and then passed.
    pub passed_runs: u32,
    pub failed_runs: u32,
    pub retried_and_passed_runs: u32,
    /// Categories named by the failure messages.
    pub categories: Vec<Category>,
}

impl CaseHistory {
    pub fn is_flaky(&self) -> bool {
        self.retried_and_passed_runs > 0 || (self.passed_runs > 0 && self.failed_runs > 0)
    }
}

/// Reads one run: a report file, or every `.xml` file under a directory.
pub fn read_run(path: &Path) -> Result<Run> {
    let files = if path.is_file() {
        vec![path.to_path_buf()]
    } else if path.is_dir() {
        let mut files = Vec::new();
        collect_xml_files(path, &mut files)
            .with_context(|| format!("cannot read {}", path.display()))?;
        files.sort();
        files
    } else {
        bail!("{}: no such file or directory", path.display());
    };
    let mut run = Run {
        path: path.to_path_buf(),
        ..Run::default()
    };
    for file in files {
        let bytes = crate::files::read_regular(&file, super::MAX_HISTORY_FILE_BYTES)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        match parse_report(&text).with_context(|| format!("{}", file.display()))? {
            Report::Junit(results) => {
                run.files += 1;
                run.results.extend(results);
            }
            Report::Other(root) => run.other_files.push((file, root)),
        }
    }
    if run.files == 0 {
        bail!("{}: no JUnit XML report found", path.display());
    }
    Ok(run)
}

fn collect_xml_files(directory: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(directory)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect_xml_files(&path, files)?;
        } else if path.extension().is_some_and(|extension| extension == "xml") {
            files.push(path);
        }
    }
    Ok(())
}

/// Folds the runs into one history per test case (`classname`, `name`), sorted by them.
pub fn histories(runs: &[Run]) -> Vec<CaseHistory> {
    let mut histories: BTreeMap<(String, String), CaseHistory> = BTreeMap::new();
    let mut messages: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for run in runs {
        // Every record of each case in this run, in report order.
        let mut records: BTreeMap<(&str, &str), Vec<&CaseResult>> = BTreeMap::new();
        for result in &run.results {
            records
                .entry((result.classname.as_str(), result.name.as_str()))
                .or_default()
                .push(result);
        }
        for ((classname, name), records) in records {
            let key = (classname.to_string(), name.to_string());
            let history = histories.entry(key.clone()).or_insert_with(|| CaseHistory {
                classname: key.0.clone(),
                name: key.1.clone(),
                passed_runs: 0,
                failed_runs: 0,
                retried_and_passed_runs: 0,
                categories: Vec::new(),
            });
            let Some(last) = records.last() else {
                continue;
            };
            let failed_before = records
                .iter()
                .any(|record| record.failed_attempts > 0 || record.outcome == Outcome::Failed);
            match last.outcome {
                Outcome::Passed if failed_before => history.retried_and_passed_runs += 1,
                Outcome::Passed => history.passed_runs += 1,
                Outcome::Failed => history.failed_runs += 1,
                Outcome::Skipped => {}
            }
            messages.entry(key).or_default().extend(
                records
                    .iter()
                    .flat_map(|record| record.messages.iter().cloned()),
            );
        }
    }
    histories
        .into_iter()
        .map(|(key, mut history)| {
            if history.is_flaky() {
                let mut categories: Vec<Category> = messages
                    .get(&key)
                    .into_iter()
                    .flatten()
                    .flat_map(|message| category_hints::in_failure(message))
                    .collect();
                categories.sort();
                categories.dedup();
                history.categories = categories;
            }
            history
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn results(text: &str) -> Vec<CaseResult> {
        match parse_report(text) {
            Ok(Report::Junit(results)) => results,
            other => panic!("not a report: {other:?}"),
        }
    }

    fn run(text: &str) -> Run {
        Run {
            results: results(text),
            files: 1,
            ..Run::default()
        }
    }

    #[test]
    fn surefire_reruns_mark_a_test_retried() {
        let text = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.ex.ATest" tests="3">
  <testcase name="passes" classname="com.ex.ATest" time="0.01"/>
  <testcase name="retried" classname="com.ex.ATest" time="0.2">
    <flakyFailure message="expected:&lt;1&gt; but was:&lt;2&gt;" type="java.lang.AssertionError">
      <stackTrace><![CDATA[java.net.ConnectException: Connection refused]]></stackTrace>
      <system-out>timed out while printing</system-out>
    </flakyFailure>
  </testcase>
  <testcase name="broken" classname="com.ex.ATest">
    <failure message="boom" type="java.lang.IllegalStateException">trace</failure>
    <rerunFailure message="boom" type="java.lang.IllegalStateException">trace</rerunFailure>
  </testcase>
  <testcase name="off" classname="com.ex.ATest"><skipped/></testcase>
</testsuite>"#;
        let results = results(text);
        let outcomes: Vec<(&str, Outcome, u32)> = results
            .iter()
            .map(|result| (result.name.as_str(), result.outcome, result.failed_attempts))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("passes", Outcome::Passed, 0),
                ("retried", Outcome::Passed, 1),
                ("broken", Outcome::Failed, 1),
                ("off", Outcome::Skipped, 0),
            ]
        );
        assert!(results[1].messages[0].contains("expected:<1> but was:<2>"));
        assert!(results[1].messages[0].contains("Connection refused"));
        assert!(!results[1].messages[0].contains("printing"));
        let histories = histories(&[run(text)]);
        let flaky: Vec<&str> = histories
            .iter()
            .filter(|history| history.is_flaky())
            .map(|history| history.name.as_str())
            .collect();
        assert_eq!(flaky, ["retried"]);
        let retried = histories.iter().find(|history| history.name == "retried");
        assert_eq!(
            retried.map(|history| history.categories.clone()),
            Some(vec![Category::Network])
        );
    }

    #[test]
    fn passing_in_one_run_and_failing_in_another_is_flaky() {
        let passed = r#"<testsuites><testsuite name="pytest"><testcase classname="tests.test_a" name="test_b[1]"/></testsuite></testsuites>"#;
        let failed = r#"<testsuites><testsuite name="pytest"><testcase classname="tests.test_a" name="test_b[1]"><failure message="Failed: Timeout &gt;5.0s"/></testcase></testsuite></testsuites>"#;
        let histories = histories(&[run(passed), run(failed)]);
        assert_eq!(histories.len(), 1);
        assert!(histories[0].is_flaky());
        assert_eq!((histories[0].passed_runs, histories[0].failed_runs), (1, 1));
        assert_eq!(histories[0].categories, [Category::Timeout]);
        // Failing in both runs is broken, not flaky.
        assert!(!super::histories(&[run(failed), run(failed)])[0].is_flaky());
    }

    #[test]
    fn repeated_test_cases_are_attempts_and_the_last_one_counts() {
        // Gradle without mergeReruns: a failed attempt, then a passing one.
        let gradle = r#"<testsuite name="com.ex.BTest">
  <testcase name="connects()" classname="com.ex.BTest"><failure message="java.net.BindException: Address already in use"/></testcase>
  <testcase name="connects()" classname="com.ex.BTest"/>
</testsuite>"#;
        let history = &histories(&[run(gradle)])[0];
        assert_eq!(history.retried_and_passed_runs, 1);
        assert_eq!(history.categories, [Category::Network]);
        // pytest-rerunfailures 16.6.1 writes an empty record per rerun before the final failure.
        let reruns = r#"<testsuite name="pytest">
  <testcase classname="t" name="test_fails"/>
  <testcase classname="t" name="test_fails"><failure message="assert False"/></testcase>
</testsuite>"#;
        assert!(!histories(&[run(reruns)])[0].is_flaky());
    }
}
