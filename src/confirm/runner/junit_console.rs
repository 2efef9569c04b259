//! The JUnit Platform console launcher's jar, driven by a small launcher of flakesense's own
//! (`helpers/FlakesenseRuns.java`) through the Launcher API: a batch of runs in one JVM, each
//! run's test classes in a class loader of their own, and `twice` as two executions in one class
//! loader. Where the launcher cannot be compiled (no `javac`), each run starts the console
//! launcher itself, and `twice` is unavailable.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};

use super::java::{java, javac};
use crate::confirm::choose::ChosenTest;
use crate::confirm::condition::{Condition, Host};
use crate::confirm::outcome::{self, CaseResult};
use crate::confirm::process::{self, Invocation, Stop};

/// The launcher that runs the selected tests a batch of times in one JVM, compiled on first use.
const RUNS_LAUNCHER: &str = include_str!("helpers/FlakesenseRuns.java");
const RUNS_CLASS: &str = "FlakesenseRuns";

const COMPILE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The console launcher on the configured class path.
#[derive(Debug)]
pub struct PreparedConsole {
    root: PathBuf,
    launcher: PathBuf,
    classpath: String,
    methods: Vec<String>,
    /// Where flakesense's launcher was compiled, or why it could not be: then each run starts
    /// the console launcher, and `twice` is unavailable.
    helper: std::result::Result<PathBuf, String>,
}

pub fn prepare_console(
    launcher: &Path,
    classpath: &[String],
    workspace_root: &Path,
    tests: &[&ChosenTest],
    scratch: &Path,
    stop: &Stop,
) -> Result<PreparedConsole> {
    let classpath = classpath
        .iter()
        .map(|entry| {
            let path = Path::new(entry);
            if path.is_relative() {
                workspace_root.join(path).display().to_string()
            } else {
                entry.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(":");
    Ok(PreparedConsole {
        root: workspace_root.to_path_buf(),
        launcher: launcher.to_path_buf(),
        classpath,
        methods: tests.iter().map(|test| test.test.id.clone()).collect(),
        helper: compile_helper(launcher, scratch, stop)?,
    })
}

/// Compiles [`RUNS_LAUNCHER`] against the console launcher's jar; `Err` says why it cannot be.
fn compile_helper(
    launcher: &Path,
    scratch: &Path,
    stop: &Stop,
) -> Result<std::result::Result<PathBuf, String>> {
    let source_directory = scratch.join("junit-runs-source");
    let classes = scratch.join("junit-runs");
    std::fs::create_dir_all(&source_directory)?;
    std::fs::create_dir_all(&classes)?;
    let source = source_directory.join(format!("{RUNS_CLASS}.java"));
    std::fs::write(&source, RUNS_LAUNCHER)?;
    let invocation = Invocation::new(javac(), scratch)
        .arg("-d")
        .arg(&classes)
        .arg("-cp")
        .arg(launcher)
        .arg(&source);
    let finished = match process::execute(
        &invocation,
        Condition::Plain,
        &Host::plain(),
        COMPILE_TIMEOUT,
        &scratch.join("junit-runs-javac"),
        stop,
    ) {
        Ok(Ok(finished)) => finished,
        Ok(Err(_)) => bail!("stopped while compiling flakesense's JUnit launcher"),
        Err(error) => {
            return Ok(Err(format!(
                "cannot compile flakesense's JUnit launcher: {error:#}"
            )));
        }
    };
    if finished.status.is_some_and(|status| status.success()) {
        Ok(Ok(classes))
    } else {
        Ok(Err(format!(
            "javac could not compile flakesense's JUnit launcher against {}: {}",
            launcher.display(),
            finished.stderr_tail(5)
        )))
    }
}

impl PreparedConsole {
    pub fn unavailable(&self, condition: Condition) -> Option<String> {
        match (&self.helper, condition) {
            (Err(reason), Condition::Twice) => Some(reason.clone()),
            _ => None,
        }
    }

    /// Whether one JVM makes a batch's runs (flakesense's launcher compiled).
    pub fn in_one_process(&self) -> bool {
        self.helper.is_ok()
    }

    /// One JVM making `runs` runs (one run without flakesense's launcher).
    pub fn invocation(&self, condition: Condition, report: &Path, runs: u32) -> Invocation {
        match &self.helper {
            Ok(classes) => {
                let ready = report.join("ready");
                Invocation::new(java(), &self.root)
                    .arg("-cp")
                    .arg(format!("{}:{}", classes.display(), self.launcher.display()))
                    .arg(RUNS_CLASS)
                    .arg(report)
                    .arg(runs.to_string())
                    .arg(if condition == Condition::Twice {
                        "2"
                    } else {
                        "1"
                    })
                    .arg(&ready)
                    .arg(&self.classpath)
                    .args(&self.methods)
                    .ready_file(ready)
            }
            Err(_) => {
                let mut invocation = Invocation::new(java(), &self.root)
                    .arg("-jar")
                    .arg(&self.launcher)
                    .args([
                        "--disable-banner",
                        "--details=none",
                        "--class-path",
                        &self.classpath,
                    ]);
                for method in &self.methods {
                    invocation = invocation.arg("--select-method").arg(method);
                }
                invocation.arg(format!("--reports-dir={}", report.display()))
            }
        }
    }

    /// Per run of the batch, the results in the order they ran.
    pub fn reports(&self, condition: Condition, report: &Path, runs: u32) -> Vec<Vec<CaseResult>> {
        if self.helper.is_err() {
            return vec![outcome::read_reports(report, None)];
        }
        let executions = if condition == Condition::Twice { 2 } else { 1 };
        (1..=runs)
            .map(|run| {
                (1..=executions)
                    .flat_map(|execution| {
                        outcome::read_reports(
                            &report.join(format!("run-{run}/execution-{execution}")),
                            None,
                        )
                    })
                    .collect()
            })
            .collect()
    }
}
