//! `flakesense check`: judges the tests of some paths, or only those a change adds or modifies,
//! and reports the likely flaky ones to a person (a terminal), a program (JSON), code scanning
//! (SARIF) or GitHub Actions (workflow-command annotations).
//!
//! This is the only module that knows terminals and exit codes: 0 when nothing is flagged, 1 when
//! a test is flagged, 2 for usage, configuration or IO errors (design notes, "exit codes").
//! Files that cannot be judged (binary, huge, not UTF-8, symbolic link loops) are reported and
//! skipped. Nothing in the working tree is ever written.

mod format;
mod git;
mod judging;
mod report;
mod targets;

pub(crate) use git::git_command;
pub use report::{Changes, Finding, Position, Report, Settings, SkipKind, SkippedFile, Summary};

use std::io::{IsTerminal, Write};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};

use crate::analysis::{self, Models, ReadTests, Severity, Thresholds};
use crate::config::Config;
use crate::extract::{self, Discovery, Incomplete, TestMethod};
use crate::files::{self, Skipped, SourceFile};
use crate::index::Index;
use crate::language::Language;
use crate::line_index::{ColumnUnit, LineIndex};
use crate::prevalence::Prevalence;
use crate::signals::Signals;
use crate::workspace;

use git::{Blob, ChangedFile, NewVersion, Repository};
use judging::*;
use targets::*;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or directories to check (default: the whole repository of the current directory)
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Only the tests that the staged change adds or modifies (git's index against HEAD)
    #[arg(long, conflicts_with = "diff_base")]
    staged: bool,
    /// Only the tests added or modified since the branch point of REF and HEAD (pull requests)
    #[arg(long, value_name = "REF")]
    diff_base: Option<String>,
    /// A further model to consult beside the shipped default and .flakesense/index (repeatable)
    #[arg(long = "model", value_name = "MODEL")]
    models: Vec<PathBuf>,
    /// Leave the shipped default models out: consult only the project's and --model files
    #[arg(long)]
    no_default_models: bool,
    /// Flag a test when its score exceeds this [default: warning-threshold of flakesense.toml, 0.95]
    #[arg(long, value_parser = parse_sigma)]
    sigma: Option<f64>,
    /// Neighbours that vote [default: k of flakesense.toml, 7]
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=crate::config::MAX_K as u64))]
    k: Option<u64>,
    /// How to report
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Exit with 0 even when tests are flagged (errors still exit with 2)
    #[arg(long)]
    exit_zero: bool,
    /// Count the workspace's signal shares without reading or writing their cache
    #[arg(long)]
    no_cache: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A block per flagged test, for people; coloured on a terminal
    Human,
    /// The stable JSON schema of the README
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers
    Sarif,
    /// GitHub Actions workflow commands, shown as annotations on a pull request
    Github,
}

/// A `--sigma`: a number between 0 and 1 (`check` and `predict`).
pub fn parse_sigma(text: &str) -> Result<f64, String> {
    let sigma: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if !(0.0..=1.0).contains(&sigma) {
        return Err(format!("must lie between 0 and 1, found {sigma}"));
    }
    Ok(sigma)
}

const EXIT_FLAGGED: u8 = 1;
const EXIT_ERROR: u8 = 2;

/// Progress is drawn only for work that takes longer than this: a bar flashing for a moment is
/// noise.
const PROGRESS_DELAY: Duration = Duration::from_secs(1);

impl CheckArgs {
    /// The tests of `paths` (the whole workspace when empty), or only those the staged change or
    /// the change since `diff_base` adds or modifies among them, judged with the shipped models,
    /// the project index and `flakesense.toml`; a test is flagged above `sigma`. What `confirm`
    /// chooses its tests from.
    pub fn selection(
        paths: Vec<PathBuf>,
        staged: bool,
        diff_base: Option<String>,
        sigma: Option<f64>,
    ) -> CheckArgs {
        CheckArgs {
            paths,
            staged,
            diff_base,
            models: Vec::new(),
            no_default_models: false,
            sigma,
            k: None,
            format: Format::Human,
            exit_zero: false,
            no_cache: false,
        }
    }
}

pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let report = judge(&args)?;
    let colour = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    // Standard output flushes at every line; a report of thousands of findings is written in
    // large pieces instead of a system call per line.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = format::write(args.format, &report, &mut out, colour)
        .and_then(|()| out.flush().map_err(anyhow::Error::from));
    match written {
        // A reader that stopped early (`| head`) wanted no more; the verdict stands.
        Err(error) if crate::terminal::is_broken_pipe(&error) => {}
        written => written?,
    }

    let code = if report.summary.errors() > 0 {
        ExitCode::from(EXIT_ERROR)
    } else if report.summary.flagged > 0 && !args.exit_zero {
        ExitCode::from(EXIT_FLAGGED)
    } else {
        ExitCode::SUCCESS
    };
    // The process ends next (only the command line calls `run`): freeing a report of thousands
    // of findings string by string took longer than writing it, on one core while the others
    // idle, for memory the system takes back anyway.
    std::mem::forget(report);
    Ok(code)
}

/// Judges the tests the arguments name and reports the flagged ones, with what was skipped on
/// standard error.
pub fn judge(args: &CheckArgs) -> Result<Report> {
    let started = Instant::now();
    let current = std::env::current_dir().context("cannot read the current directory")?;
    let named: Vec<PathBuf> = args
        .paths
        .iter()
        .map(|path| normalize(&current.join(path)))
        .collect();
    let start = named.first().cloned().unwrap_or_else(|| current.clone());
    let workspace_root = workspace::find_root(&start);
    let config = Config::load(&workspace_root)?;
    if let Some(warning) = config.confirm_warning() {
        eprintln!("warning: {warning}");
    }
    let thresholds = config.thresholds();
    let mut settings = Settings {
        sigma: args.sigma.unwrap_or(thresholds.warning),
        k: args.k.map_or(thresholds.k, |k| k as usize),
        warning: thresholds.warning,
        changes: Changes::All,
    };
    let exclude = config.exclude_matcher()?;
    let mut models = ModelSet::load(args, &config, &workspace_root)?;

    let Collected {
        targets,
        mut skipped,
        changes,
    } = collect(args, &named, &workspace_root, &exclude, &current)?;
    let whole_workspace = named.is_empty() && changes == Changes::All;
    settings.changes = changes;

    let progress = Progress::new(targets.len() as u64, started);
    // One walk of the workspace, shared by the symbols and the signal shares when both need it.
    let sources = Arc::new(workspace::WorkspaceSources::new(
        &workspace_root,
        exclude.clone(),
    ));
    let others = workspace::OtherFiles::on_demand(sources.clone(), !args.no_cache);
    let surroundings =
        workspace::SurroundingsReader::with_others(&workspace_root, Arc::new(others));
    let loaded: Vec<Loaded> = files::map_files(targets.iter().collect(), |target| {
        load_file(target, &surroundings)
    });
    if models.has_prior() {
        // However few tests are judged, the prior weighs their signals against the whole
        // workspace's, as the editor does; when every file is judged, they are at hand.
        models.prevalence = Arc::new(if whole_workspace {
            files::map_files(loaded.iter().collect(), |loaded| match loaded {
                Loaded::Tests(file, read, _) => workspace::tally(file.language, &read.signals),
                Loaded::Done(_) => Prevalence::default(),
            })
            .into_iter()
            .reduce(Prevalence::merged)
            .unwrap_or_default()
        } else {
            workspace::prevalence(&sources, !args.no_cache)
        });
    }
    let pairs: Vec<(&Target, Loaded)> = targets.iter().zip(loaded).collect();
    let outcomes: Vec<Option<FileOutcome>> = files::map_files(pairs, |(target, loaded)| {
        let outcome = match loaded {
            Loaded::Tests(file, read, discovery) => {
                judge_file(target, file, read, &discovery, &models, &settings).map(Some)
            }
            Loaded::Done(outcome) => Ok(outcome),
        };
        progress.advance();
        outcome
    })
    .into_iter()
    .collect::<Result<_>>()?;
    progress.finish();

    let mut summary = Summary::default();
    let mut findings = Vec::new();
    for (target, outcome) in targets.iter().zip(outcomes) {
        let Some(outcome) = outcome else {
            continue;
        };
        if outcome.has_syntax_errors {
            eprintln!(
                "warning: {} has syntax errors; judged the tests that parse",
                crate::terminal::escape(&target.display)
            );
        }
        if let Some(reason) = &outcome.too_many_tests {
            eprintln!("note: {}: {reason}", target.display);
        }
        match outcome.skipped {
            Some(skip) => skipped.push(skip),
            None => summary.files += 1,
        }
        summary.tests += outcome.tests;
        summary.unchanged_tests += outcome.unchanged_tests;
        findings.extend(outcome.findings);
    }
    // Most likely flaky first: on real repositories a higher score is right more often (on
    // fixtrain held out, Java's warned tests scored 0.99 or more were later fixed for flakiness
    // 5.7% of the time, those under 0.97 1.8%; benches/precision_by_score.py), so the first
    // warnings a user reads are the likeliest. Equal scores keep the files' order.
    findings.sort_by(|a, b| b.score.total_cmp(&a.score));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    for skip in &skipped {
        let label = if skip.kind.is_error() {
            "error"
        } else {
            "note"
        };
        eprintln!(
            "{label}: skipped {}: {}",
            crate::terminal::escape(&skip.display_path),
            crate::terminal::escape(&skip.reason)
        );
    }
    summary.flagged = findings.len();
    summary.skipped = skipped;
    Ok(Report {
        settings,
        findings,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_without_the_file_system() {
        assert_eq!(
            normalize(Path::new("/repo/src/../tests/./a.py")),
            Path::new("/repo/tests/a.py")
        );
        assert_eq!(
            relative_path(Path::new("/repo/tests/a.py"), Path::new("/repo")),
            "tests/a.py"
        );
        assert_eq!(
            relative_path(Path::new("/elsewhere/a.py"), Path::new("/repo")),
            "/elsewhere/a.py"
        );
        assert_eq!(
            display_path(Path::new("/repo/tests/a.py"), Path::new("/repo")),
            "tests/a.py"
        );
    }

    #[test]
    fn sigma_must_lie_in_the_unit_interval() {
        assert_eq!(parse_sigma("0.5"), Ok(0.5));
        assert!(parse_sigma("1.5").is_err());
        assert!(parse_sigma("half").is_err());
    }

    fn target(base: Base) -> Target {
        Target {
            absolute: PathBuf::from("/repo/tests/test_a.py"),
            relative: "tests/test_a.py".to_string(),
            display: "tests/test_a.py".to_string(),
            source: Source::Disk,
            base,
            named: false,
            walked_from: None,
        }
    }

    #[test]
    fn only_new_and_modified_tests_count_as_changed() {
        let before =
            "def test_same():\n    assert 1 == 1\n\ndef test_edited():\n    assert f() == 2\n";
        let after = "def test_same():\n    assert  1 ==\t1\n\ndef test_edited():\n    assert f() == 3\n\ndef test_added():\n    pass\n";
        let previous = || Base::Previous(Blob::Content(before.as_bytes().to_vec()));
        let tests: Vec<(TestMethod, ())> =
            extract::extract_tests(Language::Python, "tests/test_a.py", after)
                .tests
                .into_iter()
                .map(|test| (test, ()))
                .collect();
        let discovery = Discovery::default();
        let changed = changed_tests(
            tests.clone(),
            Language::Python,
            &target(previous()),
            &discovery,
        );
        let names: Vec<&str> = changed.iter().map(|(test, _)| test.name.as_str()).collect();
        // Whitespace alone does not change a test.
        assert_eq!(names, ["test_edited", "test_added"]);
        assert_eq!(
            changed_tests(
                tests.clone(),
                Language::Python,
                &target(Base::Added),
                &discovery
            )
            .len(),
            3
        );
        assert_eq!(
            changed_tests(tests, Language::Python, &target(Base::None), &discovery).len(),
            3
        );
    }
}
