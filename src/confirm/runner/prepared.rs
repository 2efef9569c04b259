//! A group of tests prepared to run: the commands of a batch of runs under a condition, and the
//! reports of the batch turned back into what each run gave each test.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{cargo, command, java, junit_console, pytest};
use crate::confirm::condition::Condition;
use crate::confirm::outcome::{self, CaseResult};
use crate::confirm::process::{Finished, Invocation};
use crate::history::names::spelling::Spelling;
use crate::history::names::{Catalogue, Lookup};
use crate::language::Language;

/// The runner-specific part of a prepared group.
#[derive(Debug)]
pub(super) enum Steps {
    Cargo(cargo::Prepared),
    Nextest(cargo::PreparedNextest),
    Pytest(pytest::Prepared),
    BuildTool(java::PreparedBuildTool),
    Console(junit_console::PreparedConsole),
    Command(command::Prepared),
}

/// The commands of one batch of runs of a group, and how their results come back.
#[derive(Debug)]
pub struct Prepared {
    pub(super) steps: Steps,
    /// The group's tests by every name a report may give them.
    pub(super) catalogue: Catalogue,
    pub(super) tests: usize,
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
