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
mod report;

pub use report::{Changes, Finding, Position, Report, Settings, SkipKind, SkippedFile, Summary};

use std::io::{IsTerminal, Write};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use rayon::prelude::*;

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
    /// Count the workspace's signal shares without reading or writing .flakesense/cache
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

/// Where the version of a file to judge comes from.
#[derive(Debug)]
enum Source {
    Disk,
    Blob(Blob),
}

/// The version before the change, when only changed tests are judged.
#[derive(Debug)]
enum Base {
    /// Judge every test.
    None,
    /// The change adds the file: every test is new.
    Added,
    Previous(Blob),
}

#[derive(Debug)]
struct Target {
    absolute: PathBuf,
    relative: String,
    display: String,
    source: Source,
    base: Base,
    /// Named on the command line: a file that is not Java, Python or Rust is reported.
    named: bool,
    /// Found by walking a directory: a Python file pytest would not collect (`python_files`) is
    /// passed over, as pytest passes it over. Named files and the files of a change are judged.
    walked: bool,
}

/// What judging one file gave.
#[derive(Debug, Default)]
struct FileOutcome {
    findings: Vec<Finding>,
    tests: usize,
    unchanged_tests: usize,
    skipped: Option<SkippedFile>,
    has_syntax_errors: bool,
    /// Tests past the per-file bound were left out.
    too_many_tests: Option<Incomplete>,
}

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
    let mut out = std::io::stdout().lock();
    let written = format::write(args.format, &report, &mut out, colour)
        .and_then(|()| out.flush().map_err(anyhow::Error::from));
    match written {
        // A reader that stopped early (`| head`) wanted no more; the verdict stands.
        Err(error) if crate::terminal::is_broken_pipe(&error) => {}
        written => written?,
    }

    Ok(if report.summary.errors() > 0 {
        ExitCode::from(EXIT_ERROR)
    } else if report.summary.flagged > 0 && !args.exit_zero {
        ExitCode::from(EXIT_FLAGGED)
    } else {
        ExitCode::SUCCESS
    })
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
    let surroundings = workspace::SurroundingsReader::new(&workspace_root);
    let loaded: Vec<Loaded> = targets
        .par_iter()
        .map(|target| load_file(target, &surroundings))
        .collect();
    if models.has_prior() {
        // However few tests are judged, the prior weighs their signals against the whole
        // workspace's, as the editor does; when every file is judged, they are at hand.
        models.prevalence = Arc::new(if whole_workspace {
            loaded
                .par_iter()
                .map(|loaded| match loaded {
                    Loaded::Tests(file, read, _) => workspace::tally(file.language, &read.signals),
                    Loaded::Done(_) => Prevalence::default(),
                })
                .reduce(Prevalence::default, Prevalence::merged)
        } else {
            workspace::prevalence(&workspace_root, &exclude, !args.no_cache)
        });
    }
    let outcomes: Vec<Option<FileOutcome>> = targets
        .par_iter()
        .zip(loaded)
        .map(|(target, loaded)| {
            let outcome = match loaded {
                Loaded::Tests(file, read, discovery) => {
                    judge_file(target, file, read, &discovery, &models, &settings).map(Some)
                }
                Loaded::Done(outcome) => Ok(outcome),
            };
            progress.advance();
            outcome
        })
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

/// The files to judge, their paths relative to the repository's top level (else the workspace
/// root).
struct Collected {
    targets: Vec<Target>,
    /// Problems met while walking directories.
    skipped: Vec<SkippedFile>,
    changes: Changes,
}

/// The files of the named paths (or the workspace), or those a change touches among them.
fn collect(
    args: &CheckArgs,
    named: &[PathBuf],
    workspace_root: &Path,
    exclude: &globset::GlobSet,
    current: &Path,
) -> Result<Collected> {
    if args.staged || args.diff_base.is_some() {
        let repository = Repository::discover(workspace_root)?.with_context(|| {
            format!(
                "{} needs a git repository, and {} is not in one",
                if args.staged {
                    "--staged"
                } else {
                    "--diff-base"
                },
                workspace_root.display()
            )
        })?;
        let (changed, changes) = match &args.diff_base {
            Some(reference) => {
                let merge_base = repository.merge_base(reference)?;
                let changed = repository.changed_since(&merge_base)?;
                let changes = Changes::DiffBase {
                    reference: reference.clone(),
                    merge_base,
                };
                (changed, changes)
            }
            None => (repository.staged()?, Changes::Staged),
        };
        let targets = changed_targets(
            &repository,
            changed,
            named,
            workspace_root,
            exclude,
            current,
        )?;
        Ok(Collected {
            targets,
            skipped: Vec::new(),
            changes,
        })
    } else {
        let root = repository_root(workspace_root);
        let roots = if named.is_empty() {
            vec![workspace_root.to_path_buf()]
        } else {
            named.to_vec()
        };
        let (paths, problems) = files::walk_sources(&roots, workspace_root, exclude);
        let targets = paths
            .into_iter()
            .map(|absolute| Target {
                relative: relative_path(&absolute, &root),
                display: display_path(&absolute, current),
                named: named.contains(&absolute),
                walked: !named.contains(&absolute),
                absolute,
                source: Source::Disk,
                base: Base::None,
            })
            .collect();
        let skipped = problems
            .into_iter()
            .map(|problem| SkippedFile {
                path: problem
                    .path
                    .as_deref()
                    .map_or_else(String::new, |path| relative_path(path, &root)),
                display_path: problem
                    .path
                    .as_deref()
                    .map_or_else(String::new, |path| display_path(path, current)),
                kind: match problem.kind {
                    files::WalkProblemKind::Loop => SkipKind::SymlinkLoop,
                    files::WalkProblemKind::BrokenLink => SkipKind::BrokenSymlink,
                    files::WalkProblemKind::LinkOutside => SkipKind::SymlinkOutside,
                    files::WalkProblemKind::Unreadable => SkipKind::Unreadable,
                },
                reason: problem.message,
            })
            .collect();
        Ok(Collected {
            targets,
            skipped,
            changes: Changes::All,
        })
    }
}

/// The models consulted: the shipped default of each language (unless left out), the project's
/// own index and the configured and named extra models.
struct ModelSet {
    defaults: bool,
    project: Option<Arc<Index>>,
    extra: Vec<Arc<Index>>,
    prevalence: Arc<Prevalence>,
}

impl ModelSet {
    fn load(args: &CheckArgs, config: &Config, workspace_root: &Path) -> Result<ModelSet> {
        let project = workspace::read_project_index(workspace_root)?;
        let extra = config
            .models
            .iter()
            .chain(&args.models)
            .map(|path| {
                Index::load(path)
                    .map(Arc::new)
                    .map_err(|error| anyhow::anyhow!("cannot use --model: {error}"))
            })
            .collect::<Result<Vec<_>>>()?;
        if args.no_default_models && project.is_none() && extra.is_empty() {
            bail!("--no-default-models leaves no model: add --model or a .flakesense/index");
        }
        Ok(ModelSet {
            defaults: !args.no_default_models,
            project,
            extra,
            prevalence: Arc::default(),
        })
    }

    /// Whether a model weighs signals by how common they are in the project: the shipped ones
    /// do, and models trained on many projects.
    fn has_prior(&self) -> bool {
        self.defaults
            || self
                .project
                .iter()
                .chain(&self.extra)
                .any(|model| !model.params().priors.is_empty())
    }

    fn for_language(&self, language: Language) -> Result<Models> {
        let defaults = if self.defaults {
            let model = crate::models::embedded(language).map_err(|error| {
                anyhow::anyhow!("the shipped {language} model is unreadable: {error}")
            })?;
            vec![model]
        } else {
            Vec::new()
        };
        Ok(Models {
            defaults,
            project: self.project.clone(),
            extra: self.extra.clone(),
            prevalence: self.prevalence.clone(),
        })
    }
}

/// A file read and its tests found by the project's rules, or what became of it when it cannot
/// be judged (`None`: a file of a change that is not Java, Python or Rust after all, or a Python
/// file found by walking that pytest would not collect: not worth a word).
enum Loaded {
    Tests(SourceFile, ReadTests, Arc<Discovery>),
    Done(Option<FileOutcome>),
}

/// Reads a file and finds its tests.
fn load_file(target: &Target, surroundings: &workspace::SurroundingsReader) -> Loaded {
    let skip = |kind: SkipKind, reason: String| FileOutcome {
        skipped: Some(SkippedFile {
            path: target.relative.clone(),
            display_path: target.display.clone(),
            kind,
            reason,
        }),
        ..FileOutcome::default()
    };
    let read = match &target.source {
        Source::Disk => files::read_source(&target.absolute),
        Source::Blob(Blob::Content(bytes)) => files::source_from_bytes(&target.absolute, bytes),
        Source::Blob(Blob::TooLarge(size)) => Err(Skipped::TooLarge { size: *size }),
    };
    let file = match read {
        Ok(file) => file,
        Err(Skipped::NotSource) if !target.named => return Loaded::Done(None),
        Err(reason) => {
            let kind = match reason {
                Skipped::NotSource => SkipKind::NotSource,
                Skipped::TooLarge { .. } => SkipKind::TooLarge,
                Skipped::Binary => SkipKind::Binary,
                Skipped::Unreadable(_) => SkipKind::Unreadable,
            };
            return Loaded::Done(Some(skip(kind, reason.to_string())));
        }
    };
    if file.lossy {
        // Columns and tokens of repaired text would not match the file; the user converts it.
        return Loaded::Done(Some(skip(
            SkipKind::NotUtf8,
            "not valid UTF-8 (convert it to UTF-8 to have it checked)".to_string(),
        )));
    }
    let surroundings = surroundings.for_file(file.language, &target.absolute);
    if target.walked
        && !surroundings
            .discovery
            .collects_file(file.language, &target.absolute)
    {
        return Loaded::Done(None);
    }
    let read = analysis::read_tests(file.language, &target.relative, &file.text, &surroundings);
    match read.incomplete {
        Some(
            reason @ (Incomplete::ParseTime { .. }
            | Incomplete::ParseMemory { .. }
            | Incomplete::TooDeep { .. }),
        ) => Loaded::Done(Some(skip(SkipKind::TooComplex, reason.to_string()))),
        _ => Loaded::Tests(file, read, surroundings.discovery),
    }
}

/// Judges one file's tests: all of them, or those its change adds or modifies.
fn judge_file(
    target: &Target,
    file: SourceFile,
    read: ReadTests,
    discovery: &Discovery,
    models: &ModelSet,
    settings: &Settings,
) -> Result<FileOutcome> {
    let has_syntax_errors = read.has_syntax_errors;
    let too_many_tests = read.incomplete;
    let before = read.tests.len();
    let (tests, signals): (Vec<TestMethod>, Vec<Signals>) = changed_tests(
        read.tests.into_iter().zip(read.signals).collect(),
        file.language,
        target,
        discovery,
    )
    .into_iter()
    .unzip();
    let unchanged_tests = before - tests.len();
    let judged = tests.len();
    let models = models.for_language(file.language)?;
    let thresholds = Thresholds {
        k: settings.k,
        warning: settings.warning,
        information: settings.sigma,
    };
    let reports = analysis::judge_tests(&models, &thresholds, tests, &signals);
    let lines = LineIndex::new(&file.text);
    let position = |offset: usize| {
        let (line, column) = lines.position(&file.text, offset, ColumnUnit::Char);
        let (_, column_utf16) = lines.position(&file.text, offset, ColumnUnit::Utf16);
        Position {
            line: line + 1,
            column: column + 1,
            column_utf16: column_utf16 + 1,
        }
    };
    let findings = reports
        .into_iter()
        .filter(|report| !report.test.ignored && report.prediction.score > settings.sigma)
        .map(|report| {
            let prediction = report.prediction;
            Finding {
                path: target.relative.clone(),
                display_path: target.display.clone(),
                language: file.language,
                start: position(report.test.name_range.start),
                end: position(report.test.name_range.end),
                id: report.test.id,
                name: report.test.name,
                score: prediction.score,
                severity: if prediction.score >= settings.warning {
                    Severity::Warning
                } else {
                    Severity::Information
                },
                category: prediction.category,
                signals: prediction.signals,
                shared_tokens: prediction.shared_tokens,
                neighbors: prediction.neighbors,
            }
        })
        .collect();
    Ok(FileOutcome {
        findings,
        tests: judged,
        unchanged_tests,
        skipped: None,
        has_syntax_errors,
        too_many_tests,
    })
}

/// The tests a change adds or modifies: a test is changed when its id is new or its
/// whitespace-normalised code differs from the base version's test with the same id.
fn changed_tests<T>(
    tests: Vec<(TestMethod, T)>,
    language: Language,
    target: &Target,
    discovery: &Discovery,
) -> Vec<(TestMethod, T)> {
    let previous = match &target.base {
        Base::None | Base::Added => return tests,
        Base::Previous(Blob::Content(bytes)) => bytes,
        // A base too large to analyse was never judged: every test counts as new.
        Base::Previous(Blob::TooLarge(_)) => return tests,
    };
    let (previous_text, _) = extract::decode_source(previous);
    // The base is extracted under the new path, so a renamed file keeps its tests' ids.
    let before: std::collections::HashSet<(String, String)> =
        extract::extract_tests_with(language, &target.relative, &previous_text, discovery)
            .tests
            .into_iter()
            .map(|test| (test.id, crate::dataset::normalised_code(&test.code)))
            .collect();
    tests
        .into_iter()
        .filter(|(test, _)| {
            !before.contains(&(test.id.clone(), crate::dataset::normalised_code(&test.code)))
        })
        .collect()
}

/// The files of a change to judge, with their versions before and after.
fn changed_targets(
    repository: &Repository,
    changed: Vec<ChangedFile>,
    named: &[PathBuf],
    workspace_root: &Path,
    exclude: &globset::GlobSet,
    current: &Path,
) -> Result<Vec<Target>> {
    let changed: Vec<ChangedFile> = changed
        .into_iter()
        .filter(|file| {
            let absolute = repository.top.join(&file.path);
            let path = Path::new(&file.path);
            let maybe_source = Language::from_path(path).is_some() || path.extension().is_none();
            let wanted = named.is_empty() || named.iter().any(|name| absolute.starts_with(name));
            let excluded = exclude.is_match(absolute.strip_prefix(workspace_root).unwrap_or(path));
            maybe_source && wanted && !excluded
        })
        .collect();
    let ids: Vec<&str> = changed
        .iter()
        .flat_map(|file| {
            let new = match &file.new {
                NewVersion::Blob(id) => Some(id.as_str()),
                NewVersion::WorkingTree => None,
            };
            new.into_iter().chain(file.base.as_deref())
        })
        .collect();
    let blobs = repository.read_blobs(&ids)?;
    let take = |id: &str| -> Result<Blob> {
        match blobs.get(id) {
            Some(blob) => Ok(blob.clone()),
            None => bail!("git did not return object {id}"),
        }
    };
    let mut targets = Vec::with_capacity(changed.len());
    for file in changed {
        let absolute = repository.top.join(&file.path);
        let source = match &file.new {
            NewVersion::Blob(id) => Source::Blob(take(id)?),
            NewVersion::WorkingTree => Source::Disk,
        };
        let base = match &file.base {
            Some(id) => Base::Previous(take(id)?),
            None => Base::Added,
        };
        targets.push(Target {
            display: display_path(&absolute, current),
            relative: file.path,
            absolute,
            source,
            base,
            named: false,
            walked: false,
        });
    }
    Ok(targets)
}

/// The top level of the git working tree holding `directory`, found without running git; the
/// directory itself outside a repository. Report paths are relative to it, as code scanning wants.
fn repository_root(directory: &Path) -> PathBuf {
    directory
        .ancestors()
        .find(|ancestor| ancestor.join(".git").exists())
        .unwrap_or(directory)
        .to_path_buf()
}

/// `path` relative to `root` with `/` separators, or the whole path when it lies elsewhere.
fn relative_path(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = relative
        .components()
        .map(|component| component.as_os_str().to_string_lossy().into_owned())
        .collect();
    if relative.is_absolute() {
        relative.to_string_lossy().into_owned()
    } else {
        parts.join("/")
    }
}

/// How a person in `current` refers to `path`: relative when it lies below, else absolute.
fn display_path(path: &Path, current: &Path) -> String {
    match path.strip_prefix(current) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// Removes `.` and resolves `..` without touching the file system: a named path need not
/// exist (a staged file deleted from the working tree) and symbolic links stay as named.
fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// A progress bar on standard error, drawn only when it is a terminal and the work has taken
/// more than [`PROGRESS_DELAY`].
struct Progress {
    bar: indicatif::ProgressBar,
    started: Instant,
    terminal: bool,
    shown: AtomicBool,
}

impl Progress {
    fn new(total: u64, started: Instant) -> Progress {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total),
            indicatif::ProgressDrawTarget::hidden(),
        );
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("checking [{bar:30}] {pos}/{len} files")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress {
            bar,
            started,
            terminal: std::io::stderr().is_terminal(),
            shown: AtomicBool::new(false),
        }
    }

    fn advance(&self) {
        self.bar.inc(1);
        if self.terminal
            && self.started.elapsed() >= PROGRESS_DELAY
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
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
            walked: false,
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
