//! pytest, driven by a plugin of flakesense's own (`helpers/flakesense_confirm.py`): one pytest
//! process collects the tests once and runs them a batch of times, each run in a child forked
//! from the collected session (as fresh as a new process, without pytest's start-up), `twice`
//! as two executions in one child.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use super::{id_suffix, relative_to};
use crate::confirm::choose::ChosenTest;
use crate::confirm::condition::Condition;
use crate::confirm::outcome::{CaseResult, read_plugin_results};
use crate::confirm::process::Invocation;

/// Files that make a directory pytest's root: its configuration files, and a package's.
pub const ROOT_MARKERS: [&str; 7] = crate::extract::PYTEST_CONFIG_FILES;

/// The plugin, written next to the runs and loaded with `-p`.
const PLUGIN: &str = include_str!("helpers/flakesense_confirm.py");
const PLUGIN_MODULE: &str = "flakesense_confirm";

/// The project's virtual environment's interpreter, else `python3`.
pub fn interpreter(root: &Path, workspace_root: &Path) -> PathBuf {
    [root, workspace_root]
        .iter()
        .flat_map(|directory| {
            [".venv/bin/python", "venv/bin/python"].map(|venv| directory.join(venv))
        })
        .find(|python| python.is_file())
        .unwrap_or_else(|| PathBuf::from("python3"))
}

#[derive(Debug)]
pub struct Prepared {
    python: PathBuf,
    root: PathBuf,
    node_ids: Vec<String>,
    plugin_directory: PathBuf,
}

pub fn prepare(
    python: &Path,
    root: &Path,
    tests: &[&ChosenTest],
    scratch: &Path,
) -> Result<Prepared> {
    let plugin_directory = scratch.join("pytest-plugin");
    std::fs::create_dir_all(&plugin_directory)
        .and_then(|()| std::fs::write(plugin_directory.join(format!("{PLUGIN_MODULE}.py")), PLUGIN))
        .with_context(|| {
            format!(
                "cannot write flakesense's pytest plugin to {}",
                plugin_directory.display()
            )
        })?;
    Ok(Prepared {
        python: python.to_path_buf(),
        root: root.to_path_buf(),
        node_ids: tests.iter().map(|test| node_id(test, root)).collect(),
        plugin_directory,
    })
}

/// pytest's node id of a test run from `root`.
pub fn node_id(test: &ChosenTest, root: &Path) -> String {
    format!("{}::{}", relative_to(&test.file, root), id_suffix(test))
}

impl Prepared {
    /// One pytest process making `runs` runs under a condition, its results in `report`.
    pub fn invocation(
        &self,
        condition: Condition,
        report: &Path,
        runs: u32,
        timeout: Duration,
    ) -> Invocation {
        let mut path = OsString::from(&self.plugin_directory);
        if let Some(existing) = std::env::var_os("PYTHONPATH").filter(|path| !path.is_empty()) {
            path.push(":");
            path.push(existing);
        }
        let ready = report.join("ready");
        Invocation::new(&self.python, &self.root)
            .args([
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-p",
                PLUGIN_MODULE,
            ])
            .arg("--rootdir")
            .arg(&self.root)
            .arg(format!(
                "--flakesense-results={}",
                report.join("results.jsonl").display()
            ))
            .arg(format!("--flakesense-runs={runs}"))
            .arg(format!(
                "--flakesense-executions={}",
                if condition == Condition::Twice { 2 } else { 1 }
            ))
            .arg(format!("--flakesense-timeout={}", timeout.as_secs()))
            .arg(format!("--flakesense-ready={}", ready.display()))
            .args(&self.node_ids)
            // The working tree is left as it was: no `__pycache__` from this run.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONPATH", path)
            .ready_file(ready)
    }

    /// The batch's results: per run, the `(class, name)` results in order, and the tests that
    /// timed out in it.
    pub fn results(&self, report: &Path, runs: u32) -> Vec<BatchRun> {
        let mut batch: Vec<BatchRun> = (0..runs).map(|_| BatchRun::default()).collect();
        for line in read_plugin_results(&report.join("results.jsonl")) {
            let Some(run) = batch.get_mut(line.run.saturating_sub(1) as usize) else {
                continue;
            };
            if let Some(result) = line.result {
                run.results.push(result);
            }
            if let Some(test) = line.timed_out {
                run.timed_out.push(test);
            }
        }
        batch
    }
}

/// One run of a batch, as the plugin wrote it.
#[derive(Debug, Clone, Default)]
pub struct BatchRun {
    pub results: Vec<CaseResult>,
    /// `(class, name)` of the tests whose run timed out.
    pub timed_out: Vec<(String, String)>,
}
