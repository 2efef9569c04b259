//! The test runners `confirm` drives, detected from the repository or named in the `[confirm]`
//! table of `flakesense.toml`: cargo test and cargo-nextest, pytest, Maven Surefire, Gradle, the
//! JUnit Platform console launcher, or a command template of the user's.
//!
//! A runner turns the chosen tests of one project into the commands of one run ([`Prepared`]),
//! and the reports of that run back into outcomes per test ([`Prepared::assign`]).

mod cargo;
mod command;
mod java;
mod pytest;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Result, bail};

use super::choose::ChosenTest;
use super::condition::Condition;
use super::outcome::{self, CaseResult};
use super::process::{Finished, Invocation, Stop};
use crate::config::{ConfirmConfig, RunnerConfig};
use crate::history::names::spelling::Spelling;
use crate::history::names::{Catalogue, Lookup};
use crate::language::Language;

pub use command::expand_template;

/// Which program runs the tests, and what it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerKind {
    /// `cargo test`: the test binaries are built once, then run directly.
    Cargo,
    /// `cargo nextest run`, with a JUnit report from a profile of flakesense's own.
    Nextest,
    Pytest {
        python: PathBuf,
    },
    /// Maven Surefire (`mvn test -Dtest=...`).
    Maven,
    /// Gradle (`gradle cleanTest test --tests ...`), the wrapper when the project has one.
    Gradle {
        program: PathBuf,
    },
    /// The JUnit Platform console launcher on a configured class path.
    JunitConsole {
        launcher: PathBuf,
        classpath: Vec<String>,
    },
    /// A command template of `flakesense.toml`.
    Command {
        template: String,
    },
}

/// A runner for the tests of one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runner {
    pub kind: RunnerKind,
    pub language: Language,
    /// Where it runs: the crate, the pytest root, the Maven or Gradle project, else the
    /// workspace root.
    pub root: PathBuf,
}

impl Runner {
    pub fn name(&self) -> &'static str {
        match self.kind {
            RunnerKind::Cargo => "cargo test",
            RunnerKind::Nextest => "cargo-nextest",
            RunnerKind::Pytest { .. } => "pytest",
            RunnerKind::Maven => "maven",
            RunnerKind::Gradle { .. } => "gradle",
            RunnerKind::JunitConsole { .. } => "junit-console",
            RunnerKind::Command { .. } => "command",
        }
    }

    /// Why this runner cannot run a condition, if it cannot.
    pub fn unavailable(&self, condition: Condition) -> Option<String> {
        if condition != Condition::Twice {
            return None;
        }
        let reason = match self.kind {
            RunnerKind::Pytest { .. } | RunnerKind::JunitConsole { .. } => return None,
            RunnerKind::Cargo | RunnerKind::Nextest => {
                "cargo test cannot run a test twice in one process: libtest runs each test once (and nextest gives each test a process of its own)"
            }
            RunnerKind::Maven => {
                "Maven Surefire runs each test once per JVM; name the console launcher (`runner = \"junit-console\"` and a `classpath` in [confirm.java]) to run tests twice"
            }
            RunnerKind::Gradle { .. } => {
                "Gradle runs each test once per JVM; name the console launcher (`runner = \"junit-console\"` and a `classpath` in [confirm.java]) to run tests twice"
            }
            RunnerKind::Command { .. } => {
                "a command of flakesense.toml cannot be told to run a test twice in one process"
            }
        };
        Some(reason.to_string())
    }

    /// Builds what the runs need (cargo's test binaries, the launcher that runs JUnit tests in
    /// batches) and the commands of one batch of runs.
    pub fn prepare(
        &self,
        tests: &[&ChosenTest],
        workspace_root: &Path,
        scratch: &Path,
        stop: &Stop,
    ) -> Result<Prepared> {
        let steps = match &self.kind {
            RunnerKind::Cargo => Steps::Cargo(cargo::prepare(&self.root, tests, scratch, stop)?),
            RunnerKind::Nextest => {
                Steps::Nextest(cargo::prepare_nextest(&self.root, tests, scratch)?)
            }
            RunnerKind::Pytest { python } => {
                Steps::Pytest(pytest::prepare(python, &self.root, tests, scratch)?)
            }
            RunnerKind::Maven | RunnerKind::Gradle { .. } => {
                Steps::BuildTool(java::prepare_build_tool(&self.kind, &self.root, tests))
            }
            RunnerKind::JunitConsole {
                launcher,
                classpath,
            } => Steps::Console(java::prepare_console(
                launcher,
                classpath,
                workspace_root,
                tests,
                scratch,
                stop,
            )?),
            RunnerKind::Command { template } => {
                Steps::Command(command::prepare(template, self.language, &self.root, tests))
            }
        };
        Ok(Prepared {
            steps,
            catalogue: Catalogue::new(
                tests
                    .iter()
                    .map(|test| (test.test.language, test.test.id.as_str())),
            ),
            tests: tests.len(),
        })
    }
}

/// The runner-specific part of a prepared group.
#[derive(Debug)]
enum Steps {
    Cargo(cargo::Prepared),
    Nextest(cargo::PreparedNextest),
    Pytest(pytest::Prepared),
    BuildTool(java::PreparedBuildTool),
    Console(java::PreparedConsole),
    Command(command::Prepared),
}

/// The commands of one batch of runs of a group, and how their results come back.
#[derive(Debug)]
pub struct Prepared {
    steps: Steps,
    /// The group's tests by every name a report may give them.
    catalogue: Catalogue,
    tests: usize,
}

/// What one run gave one test: its results in the order they ran (two per case under `twice`),
/// and, when the run was ended for running too long, after how many seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestRun {
    pub results: Vec<CaseResult>,
    pub timed_out_after: Option<u64>,
}

impl Prepared {
    /// Why a condition cannot run for this group, found while preparing it (the twice launcher
    /// of the console launcher did not compile).
    pub fn unavailable(&self, condition: Condition) -> Option<String> {
        match &self.steps {
            Steps::Console(prepared) => prepared.unavailable(condition),
            _ => None,
        }
    }

    /// Whether one process of the runner makes every run of a batch (pytest with flakesense's
    /// plugin, the JUnit Platform with flakesense's launcher); other runners start afresh for
    /// every run, and [`Prepared::invocations`] are those of one run.
    pub fn in_one_process(&self) -> bool {
        match &self.steps {
            Steps::Pytest(_) => true,
            Steps::Console(prepared) => prepared.in_one_process(),
            _ => false,
        }
    }

    /// The commands of a batch of `runs` runs under a condition (of one run where the runner
    /// is not [`Prepared::in_one_process`]), writing their reports under `report`, a directory
    /// of their own; `timeout` is one run's.
    pub fn invocations(
        &self,
        condition: Condition,
        report: &Path,
        runs: u32,
        timeout: Duration,
    ) -> Vec<Invocation> {
        match &self.steps {
            Steps::Cargo(prepared) => prepared.invocations(),
            Steps::Nextest(prepared) => prepared.invocations(condition, report),
            Steps::Pytest(prepared) => {
                vec![prepared.invocation(condition, report, runs, timeout)]
            }
            Steps::BuildTool(prepared) => vec![prepared.invocation(condition)],
            Steps::Console(prepared) => vec![prepared.invocation(condition, report, runs)],
            Steps::Command(prepared) => vec![prepared.invocation(report)],
        }
    }

    /// The results of a batch: per run, per test of the group in order. A run the runner ended
    /// for running past `timeout` (pytest's plugin does so per run), or that the batch's process
    /// left without a result when it was ended (`process_timed_out`), failed after `timeout`.
    pub fn assign(
        &self,
        condition: Condition,
        report: &Path,
        runs: u32,
        started: SystemTime,
        finished: &[Finished],
        (timeout, process_timed_out): (Duration, bool),
    ) -> Vec<Vec<TestRun>> {
        let seconds = timeout.as_secs();
        let per_run: Vec<Vec<Vec<CaseResult>>> = match &self.steps {
            Steps::Cargo(prepared) => vec![prepared.assign(finished, self.tests)],
            Steps::Pytest(prepared) => {
                return prepared
                    .results(report, runs)
                    .into_iter()
                    .map(|said| {
                        let mut timed_out = vec![process_timed_out; self.tests];
                        for (classname, name) in &said.timed_out {
                            if let Some(position) = self.position(classname, name) {
                                timed_out[position] = true;
                            }
                        }
                        self.assign_by_catalogue(said.results)
                            .into_iter()
                            .zip(timed_out)
                            .map(|(results, timed_out)| TestRun {
                                results,
                                timed_out_after: timed_out.then_some(seconds),
                            })
                            .collect()
                    })
                    .collect();
            }
            Steps::Console(prepared) => prepared
                .reports(condition, report, runs)
                .into_iter()
                .map(|results| self.assign_by_catalogue(results))
                .collect(),
            Steps::Nextest(_) => {
                vec![self.assign_by_catalogue(outcome::read_reports(report, None))]
            }
            Steps::BuildTool(prepared) => vec![self.assign_by_catalogue(outcome::read_reports(
                &prepared.reports_directory(),
                Some(started),
            ))],
            Steps::Command(prepared) => {
                let results = outcome::read_reports(report, None);
                vec![
                    if results.is_empty() && prepared.language == Language::Rust {
                        // A command running cargo test without a report: its own output.
                        let output: String = finished.iter().map(Finished::stdout_text).collect();
                        assign_by_name(outcome::parse_cargo_output(&output), &prepared.selectors)
                    } else {
                        self.assign_by_catalogue(results)
                    },
                ]
            }
        };
        per_run
            .into_iter()
            .map(|tests| {
                tests
                    .into_iter()
                    .map(|results| TestRun {
                        results,
                        timed_out_after: process_timed_out.then_some(seconds),
                    })
                    .collect()
            })
            .collect()
    }

    /// The group's test a report's `(class, name)` names.
    fn position(&self, classname: &str, name: &str) -> Option<usize> {
        let spelling = Spelling::junit(classname, name)?;
        match self.catalogue.lookup(&spelling) {
            Lookup::Found(position) => Some(position),
            _ => None,
        }
    }

    /// Matches report test cases to the group's tests as `train --junit-xml` matches them to a
    /// repository's.
    fn assign_by_catalogue(&self, results: Vec<CaseResult>) -> Vec<Vec<CaseResult>> {
        let mut assigned = vec![Vec::new(); self.tests];
        for result in results {
            if let Some(position) = self.position(&result.classname, &result.name) {
                assigned[position].push(result);
            }
        }
        assigned
    }
}

/// Results whose names are the runner's own names of the tests (cargo's filters).
fn assign_by_name(results: Vec<CaseResult>, selectors: &[String]) -> Vec<Vec<CaseResult>> {
    let mut assigned = vec![Vec::new(); selectors.len()];
    for result in results {
        if let Some(position) = selectors.iter().position(|name| *name == result.name) {
            assigned[position].push(result);
        }
    }
    assigned
}

/// The runner of a test, from `flakesense.toml` or the files around it.
pub fn detect(
    test: &ChosenTest,
    workspace_root: &Path,
    config: Option<&ConfirmConfig>,
) -> Result<Runner> {
    let language = test.test.language;
    let table: Option<&RunnerConfig> = config.and_then(|config| config.for_language(language));
    let directory = test.file.parent().unwrap_or(workspace_root);
    let template = table
        .and_then(|table| table.command.clone())
        .or_else(|| config.and_then(|config| config.command.clone()));
    if let Some(template) = template {
        return Ok(Runner {
            kind: RunnerKind::Command { template },
            language,
            root: workspace_root.to_path_buf(),
        });
    }
    let named = table.and_then(|table| table.runner.as_deref());
    match language {
        Language::Rust => {
            let root = nearest(directory, workspace_root, |directory| {
                std::fs::read_to_string(directory.join("Cargo.toml"))
                    .is_ok_and(|manifest| manifest.contains("[package]"))
            });
            let Some(root) = root else {
                bail!(
                    "{}: no Cargo.toml with a [package] above it, so cargo cannot run it",
                    test.path
                );
            };
            let nextest = match named {
                Some(name) => name == "nextest",
                // A project that configures nextest runs its tests with it.
                None => root
                    .ancestors()
                    .take_while(|directory| directory.starts_with(workspace_root))
                    .any(|directory| directory.join(".config/nextest.toml").is_file()),
            };
            Ok(Runner {
                kind: if nextest {
                    RunnerKind::Nextest
                } else {
                    RunnerKind::Cargo
                },
                language,
                root,
            })
        }
        Language::Python => {
            let root = nearest(directory, workspace_root, |directory| {
                pytest::ROOT_MARKERS
                    .iter()
                    .any(|marker| directory.join(marker).is_file())
            })
            .unwrap_or_else(|| workspace_root.to_path_buf());
            Ok(Runner {
                kind: RunnerKind::Pytest {
                    python: pytest::interpreter(&root, workspace_root),
                },
                language,
                root,
            })
        }
        Language::Java => java::detect(test, directory, workspace_root, table, named),
    }
}

/// The nearest directory from `start` up to `workspace_root` (both included) for which
/// `is_root` holds.
fn nearest(
    start: &Path,
    workspace_root: &Path,
    is_root: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    start
        .ancestors()
        .take_while(|directory| directory.starts_with(workspace_root))
        .find(|directory| is_root(directory))
        .map(Path::to_path_buf)
}

/// The part of a test's id after its file (`tests::name`, `TestA::test_b`).
fn id_suffix(test: &ChosenTest) -> &str {
    test.test
        .id
        .strip_prefix(&test.path)
        .and_then(|rest| rest.strip_prefix("::"))
        .unwrap_or(&test.test.name)
}

/// `path` relative to `root`, `/`-separated.
fn relative_to(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
