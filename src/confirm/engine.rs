//! Running the chosen tests: each project's tests with their runner, `runs` times under each
//! condition, in batches of up to [`BATCH_RUNS`] runs, conditions interleaved batch by batch so
//! that the machine's own load falls on all of them alike. pytest and the JUnit launcher make a
//! batch's runs in one process; other runners start a process per run, noise kept running
//! across the batch. The command line, the language server and the benchmark all run tests
//! here.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};

use super::choose::ChosenTest;
use super::condition::{Condition, Host, Noise};
use super::process::{self, Stop, Stopped};
use super::runner::{self, CommandOrigin, Prepared, Runner, TestRun};
use super::verdict::{self, Tally, TestVerdict};
use crate::config::ConfirmConfig;

/// The default runs per condition.
pub const DEFAULT_RUNS: u32 = 20;
/// The default time one run may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// The most runs of a condition made in a row: a batch pays a runner's start-up once (pytest's,
/// a JVM's) or noise's, and batches of ten keep the conditions interleaved.
pub const BATCH_RUNS: u32 = 10;

/// How many times, under what, and for how long.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub runs: u32,
    pub conditions: Vec<Condition>,
    pub timeout: Duration,
}

impl Settings {
    /// The settings of the `[confirm]` table, defaults filled in.
    pub fn from_config(config: Option<&ConfirmConfig>) -> Result<Settings> {
        let conditions = match config.and_then(|config| config.conditions.as_ref()) {
            Some(names) => Condition::parse_list(&names.join(","))
                .map_err(|error| anyhow::anyhow!("[confirm] conditions: {error}"))?,
            None => Condition::ALL.to_vec(),
        };
        Ok(Settings {
            runs: config
                .and_then(|config| config.runs)
                .unwrap_or(DEFAULT_RUNS),
            conditions,
            timeout: config
                .and_then(|config| config.timeout)
                .map_or(DEFAULT_TIMEOUT, Duration::from_secs),
        })
    }
}

/// Where the runs are, after each one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub runner: &'static str,
    pub condition: Condition,
    /// The last run done under that condition (a batch makes several).
    pub run: u32,
}

/// The tests of one project and their runner.
struct Group {
    runner: Runner,
    tests: Vec<usize>,
}

/// What the runs said: a verdict per chosen test, in their order, and the runner of each.
#[derive(Debug, Clone)]
pub struct Confirmation {
    pub verdicts: Vec<TestVerdict>,
    pub runners: Vec<Option<&'static str>>,
    /// The command each test was run with and where it came from ([`Runner::command`]).
    pub commands: Vec<Option<(String, CommandOrigin)>>,
}

/// The commands the tests would be run with, each once, with where each comes from and the
/// directory it runs in: what `confirm` shows before it runs anything.
pub fn commands(
    root: &Path,
    tests: &[ChosenTest],
    config: Option<&ConfirmConfig>,
) -> Vec<(String, CommandOrigin, PathBuf)> {
    let mut commands: Vec<(String, CommandOrigin, PathBuf)> = Vec::new();
    for test in tests {
        if let Ok(runner) = runner::detect(test, root, config) {
            let (command, origin) = runner.command();
            let shown = (command, origin, runner.root.clone());
            if !commands.contains(&shown) {
                commands.push(shown);
            }
        }
    }
    commands
}

/// Runs the tests. `Ok(Err(Stopped))` when the stop was requested: every child was ended and
/// nothing of the runs is returned.
pub fn confirm(
    root: &Path,
    tests: &[ChosenTest],
    config: Option<&ConfirmConfig>,
    settings: &Settings,
    host: &Host,
    stop: &Stop,
    progress: &mut dyn FnMut(&Progress),
) -> Result<std::result::Result<Confirmation, Stopped>> {
    let mut verdicts: Vec<Option<TestVerdict>> = vec![None; tests.len()];
    let mut runners: Vec<Option<&'static str>> = vec![None; tests.len()];
    let mut commands: Vec<Option<(String, CommandOrigin)>> = vec![None; tests.len()];
    let mut groups: Vec<Group> = Vec::new();
    for (position, test) in tests.iter().enumerate() {
        match runner::detect(test, root, config) {
            Ok(runner) => {
                runners[position] = Some(runner.name());
                commands[position] = Some(runner.command());
                match groups.iter_mut().find(|group| group.runner == runner) {
                    Some(group) => group.tests.push(position),
                    None => groups.push(Group {
                        runner,
                        tests: vec![position],
                    }),
                }
            }
            Err(error) => verdicts[position] = Some(TestVerdict::not_run(format!("{error:#}"))),
        }
    }
    let scratch = tempfile::Builder::new()
        .prefix("flakesense-confirm-")
        .tempdir()
        .context("cannot make a scratch directory for the runs")?;
    let mut prepared: Vec<Option<Prepared>> = Vec::new();
    for (index, group) in groups.iter().enumerate() {
        let group_scratch = scratch.path().join(format!("group-{index}"));
        std::fs::create_dir_all(&group_scratch)?;
        let members: Vec<&ChosenTest> = group.tests.iter().map(|&test| &tests[test]).collect();
        match group.runner.prepare(&members, root, &group_scratch, stop) {
            Ok(ready) => prepared.push(Some(ready)),
            Err(_) if stop.is_requested() => return Ok(Err(Stopped)),
            Err(error) => {
                for &test in &group.tests {
                    verdicts[test] = Some(TestVerdict::not_run(format!(
                        "{} could not run it: {error:#}",
                        group.runner.name()
                    )));
                }
                prepared.push(None);
            }
        }
    }
    // Per group, per condition: why it cannot run, or `None`.
    let unavailable: Vec<Vec<Option<String>>> = groups
        .iter()
        .zip(&prepared)
        .map(|(group, ready)| {
            settings
                .conditions
                .iter()
                .map(|&condition| {
                    host.unavailable(condition)
                        .or_else(|| group.runner.unavailable(condition))
                        .or_else(|| {
                            ready
                                .as_ref()
                                .and_then(|ready| ready.unavailable(condition))
                        })
                })
                .collect()
        })
        .collect();
    let total: u64 = groups
        .iter()
        .zip(&prepared)
        .zip(&unavailable)
        .filter(|((_, ready), _)| ready.is_some())
        .map(|(_, unavailable)| {
            unavailable.iter().filter(|reason| reason.is_none()).count() as u64
                * u64::from(settings.runs)
        })
        .sum();
    let mut done = 0u64;
    for (index, ((group, ready), unavailable)) in
        groups.iter().zip(&prepared).zip(&unavailable).enumerate()
    {
        let Some(ready) = ready else {
            continue;
        };
        let mut tallies: Vec<Vec<Tally>> = group
            .tests
            .iter()
            .map(|_| {
                settings
                    .conditions
                    .iter()
                    .zip(unavailable)
                    .map(|(&condition, reason)| Tally::new(condition, reason.clone()))
                    .collect()
            })
            .collect();
        let mut failed_to_run = None;
        'runs: for (round, &runs) in batch_runs(settings.runs, BATCH_RUNS).iter().enumerate() {
            let first_run = round as u32 * BATCH_RUNS + 1;
            for (slot, &condition) in settings.conditions.iter().enumerate() {
                if unavailable[slot].is_some() {
                    continue;
                }
                let directory = scratch
                    .path()
                    .join(format!("group-{index}/{condition}-{first_run}"));
                let mut last_run = first_run - 1;
                let mut ran = |count: u32| {
                    done += u64::from(count);
                    last_run += count;
                    progress(&Progress {
                        done,
                        total,
                        runner: group.runner.name(),
                        condition,
                        run: last_run,
                    });
                };
                let batch = match run_batch(
                    ready, condition, runs, &directory, host, settings, stop, &mut ran,
                ) {
                    Ok(Ok(batch)) => batch,
                    Ok(Err(Stopped)) => return Ok(Err(Stopped)),
                    // The runner cannot be started at all (not installed): its tests are not run.
                    Err(error) => {
                        failed_to_run = Some(error);
                        break 'runs;
                    }
                };
                for run in batch {
                    for (test, test_run) in run.into_iter().enumerate() {
                        tallies[test][slot].record(&test_run.results, test_run.timed_out_after);
                    }
                }
            }
        }
        for (&test, tallies) in group.tests.iter().zip(tallies) {
            verdicts[test] = Some(match &failed_to_run {
                Some(error) => TestVerdict::not_run(format!(
                    "{} could not run it: {error:#}",
                    group.runner.name()
                )),
                None => verdict::judge(tallies, &tests[test].suspected_causes()),
            });
        }
    }
    Ok(Ok(Confirmation {
        verdicts: verdicts
            .into_iter()
            .map(|verdict| verdict.unwrap_or_else(|| TestVerdict::not_run("not run".to_string())))
            .collect(),
        runners,
        commands,
    }))
}

/// `runs` split into batches of at most `size`.
fn batch_runs(runs: u32, size: u32) -> Vec<u32> {
    let size = size.max(1);
    let mut batches = vec![size; (runs / size) as usize];
    if !runs.is_multiple_of(size) {
        batches.push(runs % size);
    }
    batches
}

/// One batch of `runs` runs of a group under a condition: per run, per test, what it gave.
/// `ran` is told how many runs are done, as they are.
#[allow(clippy::too_many_arguments)] // Reason: the batch's own settings, each a different thing.
fn run_batch(
    prepared: &Prepared,
    condition: Condition,
    runs: u32,
    directory: &Path,
    host: &Host,
    settings: &Settings,
    stop: &Stop,
    ran: &mut dyn FnMut(u32),
) -> Result<std::result::Result<Vec<Vec<TestRun>>, Stopped>> {
    if prepared.in_one_process() {
        let batch = run_in_one_process(prepared, condition, runs, directory, host, settings, stop);
        if let Ok(Ok(_)) = &batch {
            ran(runs);
        }
        return batch;
    }
    // Noise runs on across the batch's runs instead of starting and stopping around each.
    let _noise = (condition == Condition::Noise).then(Noise::hold);
    let mut batch = Vec::new();
    for run in 1..=runs {
        let directory = directory.join(format!("run-{run}"));
        match run_in_one_process(prepared, condition, 1, &directory, host, settings, stop)? {
            Ok(mut runs) => batch.append(&mut runs),
            Err(Stopped) => return Ok(Err(Stopped)),
        }
        ran(1);
    }
    Ok(Ok(batch))
}

/// `runs` runs made by the one process (or the commands) of the runner.
fn run_in_one_process(
    prepared: &Prepared,
    condition: Condition,
    runs: u32,
    directory: &Path,
    host: &Host,
    settings: &Settings,
    stop: &Stop,
) -> Result<std::result::Result<Vec<Vec<TestRun>>, Stopped>> {
    std::fs::create_dir_all(directory)
        .with_context(|| format!("cannot create {}", directory.display()))?;
    let report = directory.join("report");
    std::fs::create_dir_all(&report)?;
    let started = SystemTime::now();
    // A batch may take each of its runs' time, and one more for the runner's start-up.
    let batch_timeout = settings
        .timeout
        .saturating_mul(if runs > 1 { runs + 1 } else { 1 });
    let mut finished = Vec::new();
    for (step, invocation) in prepared
        .invocations(condition, &report, runs, settings.timeout)
        .iter()
        .enumerate()
    {
        let logs: PathBuf = directory.join(format!("step-{step}"));
        match process::execute(invocation, condition, host, batch_timeout, &logs, stop)? {
            Ok(done) => finished.push(done),
            Err(Stopped) => return Ok(Err(Stopped)),
        }
    }
    let timed_out = finished.iter().any(|finished| finished.timed_out);
    Ok(Ok(prepared.assign(
        condition,
        &report,
        runs,
        started,
        &finished,
        (settings.timeout, timed_out),
    )))
}

/// Runs one test under one condition until it first fails, at most `cap` times: the number of
/// the failing run, or `None` when every run passed (or gave no result). What the benchmark
/// measures, after Shaker: how many runs a condition needs to expose a flaky test.
pub fn runs_until_failure(
    root: &Path,
    test: &ChosenTest,
    config: Option<&ConfirmConfig>,
    condition: Condition,
    cap: u32,
    host: &Host,
    stop: &Stop,
) -> Result<std::result::Result<Option<u32>, Stopped>> {
    let runner = runner::detect(test, root, config)?;
    if let Some(reason) = host
        .unavailable(condition)
        .or_else(|| runner.unavailable(condition))
    {
        anyhow::bail!("{condition} is unavailable: {reason}");
    }
    let scratch = tempfile::Builder::new()
        .prefix("flakesense-confirm-")
        .tempdir()?;
    let prepared = runner.prepare(&[test], root, scratch.path(), stop)?;
    let settings = Settings {
        runs: cap,
        conditions: vec![condition],
        timeout: DEFAULT_TIMEOUT,
    };
    for run in 1..=cap {
        let directory = scratch.path().join(format!("{condition}-{run}"));
        let batch = match run_batch(
            &prepared,
            condition,
            1,
            &directory,
            host,
            &settings,
            stop,
            &mut |_| {},
        )? {
            Ok(batch) => batch,
            Err(Stopped) => return Ok(Err(Stopped)),
        };
        let Some(test_run) = batch.first().and_then(|run| run.first()) else {
            continue;
        };
        let failed = (test_run.results.is_empty() && test_run.timed_out_after.is_some())
            || test_run
                .results
                .iter()
                .any(|result| result.outcome == super::outcome::Outcome::Failed);
        if failed {
            return Ok(Ok(Some(run)));
        }
    }
    Ok(Ok(None))
}
