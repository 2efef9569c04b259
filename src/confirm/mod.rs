//! `flakesense confirm`: runs suspected tests under the conditions that expose flakiness (noise,
//! one CPU, no network, twice in one process) and reports what the runs say; with `--record`,
//! the verdicts become labels of the project index.
//!
//! The jobs, one file each: [`choose`] the tests (a change's suspects, by `check`'s own
//! selection and judging, or named ones), detect their [`runner`]s, run them under each
//! [`condition`] ([`engine`], [`process`]), read the [`outcome`]s, turn them into a [`verdict`]
//! and a label, [`record`] the labels, and write the [`output`]; [`compare`] makes the same runs
//! at a git revision too (`--compare REF`). Exit codes are `check`'s: 0 when no test is
//! confirmed flaky, 1 when one is, 2 for errors (with `--compare`, the working tree's tests
//! decide); 130 when interrupted, after every child process group was ended and nothing was
//! recorded.

pub mod choose;
pub mod compare;
pub mod condition;
pub mod engine;
pub mod outcome;
pub mod output;
pub mod process;
pub mod record;
pub mod runner;
pub mod verdict;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::check::Format;
use crate::config::Config;
use choose::Selection;
use condition::{Condition, Host};
use engine::Settings;
use process::Stop;
use verdict::{Label, Verdict};

#[derive(Debug, Args)]
pub struct ConfirmArgs {
    /// Files or directories: every suspect test under them, or the suspects of the change among them
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The suspects the staged change adds or modifies (the working tree's version is run)
    #[arg(long, conflicts_with_all = ["diff_base", "tests"])]
    staged: bool,
    /// The suspects added or modified since the branch point of REF and HEAD [default: HEAD, the uncommitted change]
    #[arg(long, value_name = "REF", conflicts_with = "tests")]
    diff_base: Option<String>,
    /// Run these tests whatever their score (ids as `check` prints them, or as a flaky list spells them)
    #[arg(long = "test", value_name = "ID", num_args = 1..)]
    tests: Vec<String>,
    /// Runs under each condition [default: `runs` of `[confirm]` in flakesense.toml, 20]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_RUNS)))]
    runs: Option<u32>,
    /// Seconds one run may take before it is ended and counted as a failure [default: 300]
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    timeout: Option<Duration>,
    /// Which conditions, comma-separated: plain, noise, cpu1, offline, twice [default: all]
    #[arg(long, value_name = "LIST", value_parser = parse_conditions)]
    conditions: Option<Conditions>,
    /// Write the verdicts into .flakesense/index: flaky with its category, or not flaky after at least 59 passing runs
    #[arg(long)]
    record: bool,
    /// How to report
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Exit with 0 even when a test is confirmed flaky (errors still exit with 2)
    #[arg(long)]
    exit_zero: bool,
    /// Run the tests at REF too (a commit, a branch, HEAD; its tree in a temporary directory) and report before and after side by side; the exit code is the working tree's [default suspects: the change since REF]
    #[arg(long, value_name = "REF")]
    compare: Option<String>,
}

#[derive(Debug, Clone)]
struct Conditions(Vec<Condition>);

fn parse_conditions(text: &str) -> Result<Conditions, String> {
    Condition::parse_list(text).map(Conditions)
}

/// Seconds, optionally with an `s` or `m` suffix.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = match text.strip_suffix('m') {
        Some(minutes) => (minutes, 60),
        None => (text.strip_suffix('s').unwrap_or(text), 1),
    };
    match number.trim().parse::<u64>() {
        Ok(value) if value > 0 && value.saturating_mul(scale) <= MAX_TIMEOUT_SECONDS => {
            Ok(Duration::from_secs(value * scale))
        }
        _ => Err(format!(
            "`{text}` is not a number of seconds from 1 to {MAX_TIMEOUT_SECONDS} (a day)"
        )),
    }
}

/// The most runs under one condition `--runs` asks for.
const MAX_RUNS: u32 = 10_000;
/// The longest a run may take, in seconds: a day.
const MAX_TIMEOUT_SECONDS: u64 = 86_400;

const EXIT_CONFIRMED: u8 = 1;
const EXIT_ERROR: u8 = 2;
/// The shell's code for a command ended by SIGINT.
const EXIT_INTERRUPTED: u8 = 130;

pub fn run(args: ConfirmArgs) -> Result<ExitCode> {
    let current = std::env::current_dir().context("cannot read the current directory")?;
    let start = args
        .paths
        .first()
        .map_or_else(|| current.clone(), |path| current.join(path));
    let config = Config::load(&crate::workspace::find_root(&start))?;
    if let Some(error) = &config.confirm_error {
        anyhow::bail!("{error}");
    }
    let mut settings = Settings::from_config(config.confirm.as_ref())?;
    if let Some(runs) = args.runs {
        settings.runs = runs;
    }
    if let Some(timeout) = args.timeout {
        settings.timeout = timeout;
    }
    if let Some(Conditions(conditions)) = &args.conditions {
        settings.conditions = conditions.clone();
    }
    let selection = Selection {
        paths: args.paths.clone(),
        staged: args.staged,
        // With --compare and nothing else chosen, the suspects of the change since REF.
        diff_base: args.diff_base.clone().or_else(|| {
            let nothing_chosen = args.paths.is_empty() && args.tests.is_empty() && !args.staged;
            args.compare.clone().filter(|_| nothing_chosen)
        }),
        tests: args.tests.clone(),
    };
    let chosen = choose::choose(&selection, &config, &current)?;
    for note in &chosen.notes {
        eprintln!("note: {note}");
    }
    if chosen.tests.is_empty() {
        eprintln!(
            "no test to confirm: no test above the information threshold ({}) {}",
            config.thresholds().information,
            match &chosen.changes {
                crate::check::Changes::All => "under the paths".to_string(),
                crate::check::Changes::Staged => "in the staged change".to_string(),
                crate::check::Changes::DiffBase { reference, .. } =>
                    format!("added or modified since {reference}"),
            }
        );
        return Ok(if chosen.errors > 0 {
            ExitCode::from(EXIT_ERROR)
        } else {
            ExitCode::SUCCESS
        });
    }
    // What will run, before it runs: the repository may have chosen the program.
    for (command, origin, directory) in
        engine::commands(&chosen.root, &chosen.tests, config.confirm.as_ref())
    {
        eprintln!(
            "confirm: running `{}` in {} (from {})",
            crate::terminal::escape(&command),
            crate::terminal::escape(&directory.display().to_string()),
            origin.describe()
        );
    }
    let host = Host::probe_for(&settings.conditions);
    let stop = Stop::on_ctrl_c();
    let bar = progress_bar();
    let mut on_progress = |progress: &engine::Progress| {
        bar.set_length(progress.total);
        bar.set_position(progress.done);
        bar.set_message(format!(
            "{} {} run {}",
            progress.runner, progress.condition, progress.run
        ));
    };
    let (confirmation, comparison) = match &args.compare {
        None => (
            engine::confirm(
                &chosen.root,
                &chosen.tests,
                config.confirm.as_ref(),
                &settings,
                &host,
                &stop,
                &mut on_progress,
            )?,
            None,
        ),
        Some(reference) => match compare::compare(
            reference,
            &chosen.root,
            &chosen.tests,
            config.confirm.as_ref(),
            &settings,
            &host,
            &stop,
            &mut on_progress,
        )? {
            Ok(comparison) => (Ok(comparison.after.clone()), Some(comparison)),
            Err(stopped) => (Err(stopped), None),
        },
    };
    bar.finish_and_clear();
    let confirmation = match confirmation {
        Ok(confirmation) if !stop.is_requested() => confirmation,
        _ => {
            eprintln!("interrupted: every test process was ended; nothing was recorded");
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
    };
    let recorded = if args.record {
        let mut labels: Vec<Label> = Vec::new();
        let mut refused: Vec<(String, String)> = Vec::new();
        for (test, verdict) in chosen.tests.iter().zip(&confirmation.verdicts) {
            match verdict::label_of(verdict) {
                Ok(kind) => labels.push(Label {
                    test: test.test.clone(),
                    path: test.path.clone(),
                    kind,
                }),
                Err(reason) => refused.push((test.test.id.clone(), reason.reason())),
            }
        }
        let recorded = record::record(&chosen.root, &labels, refused)?;
        if let Some(note) = &recorded.note {
            eprintln!("note: {note}");
        }
        Some(recorded)
    } else {
        None
    };
    let report = output::Report {
        settings: &settings,
        changes: &chosen.changes,
        tests: &chosen.tests,
        confirmation: &confirmation,
        notes: &chosen.notes,
        recorded: recorded.as_ref(),
        compare: comparison.as_ref(),
    };
    let colour = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let mut out = std::io::stdout().lock();
    let written = output::write(args.format, &report, &mut out, colour)
        .and_then(|()| out.flush().map_err(anyhow::Error::from));
    if let Err(error) = written
        && !crate::terminal::is_broken_pipe(&error)
    {
        return Err(error);
    }
    Ok(if chosen.errors > 0 || report.count(Verdict::NotRun) > 0 {
        ExitCode::from(EXIT_ERROR)
    } else if report.count(Verdict::Flaky) > 0 && !args.exit_zero {
        ExitCode::from(EXIT_CONFIRMED)
    } else {
        ExitCode::SUCCESS
    })
}

/// A bar of runs on standard error, drawn only when it is a terminal.
fn progress_bar() -> indicatif::ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        indicatif::ProgressDrawTarget::stderr()
    } else {
        indicatif::ProgressDrawTarget::hidden()
    };
    let bar = indicatif::ProgressBar::with_draw_target(Some(0), target);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "confirming [{bar:30}] {pos}/{len} runs ({msg}, {elapsed})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_take_seconds_or_minutes() {
        assert_eq!(parse_timeout("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_timeout("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_timeout("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_timeout("0").is_err());
        assert!(parse_timeout("soon").is_err());
    }
}
