//! `flakesense train`: builds a model file from labelled tests, either from the canonical CSV
//! (`--data`) or from a repository's own flaky history (`--repo`, see [`crate::history`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{ArgGroup, Args};

use super::{EmbeddingArgs, read_data};

mod repo;
use rayon::prelude::*;

use crate::embed::{TokenBag, TokenInterner};
use crate::fixes;
use crate::index::{BuildSettings, Entry, Index, Label};
use crate::language::Language;
use crate::prior::Example;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("input").required(true).args(["data", "repo"])))]
pub struct TrainArgs {
    /// Labelled tests in the canonical CSV format (repeatable)
    #[arg(long = "data", value_name = "FILE.csv")]
    data: Vec<PathBuf>,
    /// A repository whose tests are labelled from its own flaky history
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// With --repo: known flaky tests, one per line, optionally with categories after a comma (repeatable)
    #[arg(long = "flaky-list", value_name = "FILE")]
    flaky_lists: Vec<PathBuf>,
    /// With --repo: tests marked flaky in the code (@Flaky, @pytest.mark.flaky, #[ignore = "flaky"], ...)
    #[arg(long)]
    from_annotations: bool,
    /// With --repo: JUnit XML reports, one directory (or file) per CI run of the same commit
    #[arg(long = "junit-xml", value_name = "DIR", num_args = 1..)]
    junit_xml: Vec<PathBuf>,
    /// With --repo: merge the new labels into the existing index instead of rebuilding it
    #[arg(long)]
    update: bool,
    /// With --repo: let the sources replace labels set by hand in the editor
    #[arg(long)]
    override_manual: bool,
    /// Where to write the model (with --repo: DIR/.flakesense/index by default)
    #[arg(long, value_name = "MODEL", required_unless_present = "repo")]
    out: Option<PathBuf>,
    #[command(flatten)]
    embedding: EmbeddingArgs,
    /// With --data: leave out the signal prior fitted for tests of projects the model has not
    /// seen (a plain FLAST model)
    #[arg(long)]
    no_prior: bool,
    /// With --data: whole repositories with the tests fixed for flakiness in them (the layout
    /// of fixtrain: `<language>/<owner>+<name>/` with snapshot/, fixes/ and fixes.csv); their
    /// tests teach the prior with their context and calibrate its thresholds (repeatable)
    #[arg(long = "fixes", value_name = "DIR")]
    fixes: Vec<PathBuf>,
}

pub fn run(args: TrainArgs) -> Result<ExitCode> {
    if args.repo.is_none() {
        let repository_only = [
            ("--flaky-list", !args.flaky_lists.is_empty()),
            ("--from-annotations", args.from_annotations),
            ("--junit-xml", !args.junit_xml.is_empty()),
            ("--update", args.update),
            ("--override-manual", args.override_manual),
        ];
        if let Some((flag, _)) = repository_only.iter().find(|(_, given)| *given) {
            bail!("{flag} labels the tests of a repository: it needs --repo DIR");
        }
    }
    match (&args.repo, &args.out) {
        (Some(repo), _) => repo::run_repo(&args, repo),
        (None, Some(out)) => run_data(&args, out),
        (None, None) => bail!("--out is required with --data"),
    }
}

fn run_data(args: &TrainArgs, out: &Path) -> Result<ExitCode> {
    // Before the training: a device or a directory at `--out` stops it at once.
    crate::files::write::check(crate::files::write::Place::Named, out)
        .with_context(|| format!("cannot write {}", out.display()))?;
    let tests = read_data(&args.data, args.embedding.keep_duplicates)?;
    if tests.is_empty() {
        bail!("no labelled test with code in the data");
    }
    let started = Instant::now();
    let settings = BuildSettings {
        tokenizer: args.embedding.tokenizer,
        dims: args.embedding.dims(),
        seed: args.embedding.seed,
        description: describe(args),
    };
    let languages: Vec<Language> = Language::ALL
        .into_iter()
        .filter(|language| tests.iter().any(|test| test.language == *language))
        .collect();
    let mut repositories = Vec::new();
    for folder in &args.fixes {
        repositories.extend(fixes::read(folder, &languages)?);
    }
    for repository in &repositories {
        let flaky = repository
            .tests
            .iter()
            .filter(|test| test.test.flaky)
            .count();
        eprintln!(
            "read {} ({}): {} tests, {flaky} fixed for flakiness{}",
            repository.project,
            repository.language,
            repository.tests.len(),
            if repository.missing > 0 {
                format!(", {} fixed tests not found", repository.missing)
            } else {
                String::new()
            }
        );
    }
    // The fixed tests join the model as known flaky tests a warning can show; the others of
    // their repositories only teach the prior.
    let fixed = repositories
        .iter()
        .flat_map(|repository| &repository.tests)
        .filter(|test| test.test.flaky)
        .map(|test| &test.test);
    let mut interner = TokenInterner::default();
    let index = Index::build(
        &settings,
        tests.iter().chain(fixed).map(|test| {
            let bag = TokenBag::from_code_interned(
                settings.tokenizer,
                test.language,
                &test.code,
                &mut interner,
            );
            // Beside a signal prior, a dataset's "not flaky" means "not known to be flaky": such
            // an entry never outvotes the evidence in a test's code. A plain FLAST model votes
            // with both classes.
            let not_flaky = if args.no_prior {
                Label::Stable
            } else {
                Label::Unlabelled
            };
            (Entry::from_labeled(test, true, not_flaky), bag)
        }),
    );
    let mut index = index;
    if !args.no_prior {
        index.set_priors(fit_priors(&tests, &repositories));
    }
    let seconds = started.elapsed().as_secs_f64();
    index.save(crate::files::write::Place::Named, out)?;
    let size = std::fs::metadata(out)
        .map(|metadata| metadata.len())
        .unwrap_or(0);
    let flaky = index.entries().filter(|entry| entry.is_flaky()).count();
    eprintln!(
        "built a model of {} tests ({flaky} flaky), {} tokens, {} dimensions in {seconds:.2} s; wrote {} ({:.1} MB)",
        index.len(),
        index.vocabulary_len(),
        index.params().projection.dims,
        out.display(),
        size as f64 / 1e6
    );
    Ok(ExitCode::SUCCESS)
}

/// A signal prior per language with tests of at least two projects: the prior's warning
/// threshold is calibrated on projects held out of its fit.
fn fit_priors(
    tests: &[crate::dataset::LabeledTest],
    repositories: &[fixes::Repository],
) -> Vec<crate::prior::SignalPrior> {
    let mut priors = Vec::new();
    for language in Language::ALL {
        let detected: Vec<crate::signals::Signals> = tests
            .par_iter()
            .filter(|test| test.language == language)
            .map(|test| crate::signals::detect(language, &test.code))
            .collect();
        let examples: Vec<Example<'_>> = tests
            .iter()
            .filter(|test| test.language == language)
            .zip(&detected)
            .map(|(test, signals)| Example::new(test, signals))
            .chain(
                repositories
                    .iter()
                    .filter(|repository| repository.language == language)
                    .flat_map(|repository| &repository.tests)
                    .map(|test| Example::in_repository(&test.test, &test.signals)),
            )
            .collect();
        let mut projects: Vec<&str> = examples.iter().map(|example| example.project).collect();
        projects.sort_unstable();
        projects.dedup();
        if projects.len() < 2 {
            continue;
        }
        let (prior, choice) = crate::prior::SignalPrior::fit(language, &examples);
        eprintln!(
            "fitted the {language} signal prior on {} tests of {} projects; information above probability {:.3}, warning above {:.3}; {}",
            examples.len(),
            projects.len(),
            prior.information_probability,
            prior.warning_probability,
            if prior.share_weights.is_empty() {
                "signals weigh alike in every project (most flaky tests come from sets of flaky tests alone)"
            } else {
                "signals weigh less in projects where they are common"
            }
        );
        if choice.kept.is_none() {
            eprintln!("  no penalty could be judged on held-out projects; the weakest was kept");
        }
        for candidate in &choice.candidates {
            let kept = if choice.kept.as_ref() == Some(candidate) {
                " (kept)"
            } else {
                ""
            };
            eprintln!("  {candidate}{kept}");
        }
        priors.push(prior);
    }
    priors
}

/// The training command as a user could retype it, kept in the model.
fn describe(args: &TrainArgs) -> String {
    let files: Vec<String> = args
        .data
        .iter()
        .map(|path| {
            path.file_name().map_or_else(
                || path.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            )
        })
        .collect();
    let fixes: Vec<String> = args
        .fixes
        .iter()
        .map(|path| {
            format!(
                " --fixes {}",
                path.file_name().unwrap_or_default().to_string_lossy()
            )
        })
        .collect();
    format!(
        "flakesense {} train on {}{} --tokenizer {} {} --seed {}",
        env!("CARGO_PKG_VERSION"),
        files.join(" "),
        fixes.concat(),
        args.embedding.tokenizer.name(),
        match args.embedding.dims {
            Some(dims) => format!("--dims {dims}"),
            None => format!("--eps {}", args.embedding.eps),
        },
        args.embedding.seed
    )
}
