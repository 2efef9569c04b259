//! `flakesense eval`: accuracy of a training setting under the paper's protocols.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};

use super::{DataArgs, EmbeddingArgs, progress_bar, read_data};
use crate::eval::repositories::{RepositoryFigures, leave_one_repository_out};
use crate::eval::{EvalSettings, Figures, Protocol, Report, TestOutcome, evaluate};
use crate::index::BuildSettings;
use crate::predict;

#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Labelled tests used only for training, never tested, and never from the project under test
    #[arg(long = "extra-train", value_name = "FILE.csv")]
    extra_train: Vec<PathBuf>,
    /// Stratified k-fold within each project (the default)
    #[arg(long, conflicts_with = "leave_one_project_out")]
    per_project: bool,
    /// Test each project on a model trained on all the others
    #[arg(long)]
    leave_one_project_out: bool,
    /// Folds of the per-project protocol
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(2..=super::MAX_FOLDS))]
    folds: u64,
    /// Projects with fewer flaky tests are skipped by the per-project protocol (the paper uses 7)
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u64).range(0..=super::MAX_COUNT))]
    min_flaky: u64,
    /// Neighbours that vote
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u64).range(1..=crate::config::MAX_K as u64))]
    k: u64,
    /// Flaky when the flaky share of the vote exceeds this
    #[arg(long, default_value_t = 0.5, value_parser = crate::check::parse_sigma)]
    sigma: f64,
    #[command(flatten)]
    embedding: EmbeddingArgs,
    /// Leave out the signal prior that leave-one-project-out fits on each training side, to
    /// measure the neighbours' vote alone (plain FLAST)
    #[arg(long)]
    no_prior: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write every tested test's score and verdict to this CSV file
    #[arg(long, value_name = "FILE.csv")]
    predictions: Option<PathBuf>,
    /// Leave one repository out on whole repositories (the fixtrain layout): each is judged by a
    /// prior fitted on the --data and --extra-train CSVs and the other repositories; prints the
    /// share of its tests warned and of its fixed tests caught, at 0.95 and 0.5 (repeatable)
    #[arg(long = "fixes", value_name = "DIR")]
    fixes: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
}

pub fn run(args: EvalArgs) -> Result<ExitCode> {
    if !(0.0..1.0).contains(&args.sigma) {
        bail!(
            "--sigma must be at least 0 and below 1, found {}",
            args.sigma
        );
    }
    if !args.fixes.is_empty() {
        return run_repositories(&args);
    }
    let tests = read_data(&args.data.data, args.embedding.keep_duplicates)?;
    let mut extra = read_data(&args.extra_train, true)?;
    if !args.embedding.keep_duplicates && !extra.is_empty() {
        // Extra rows repeating a tested row would put the same test on both sides of a split.
        let tested: std::collections::HashSet<String> = tests
            .iter()
            .map(|test| crate::dataset::normalised_code(&test.code))
            .collect();
        let before = extra.len();
        extra.retain(|test| !tested.contains(&crate::dataset::normalised_code(&test.code)));
        crate::dataset::deduplicate(&mut extra);
        eprintln!(
            "kept {} of {before} extra training tests (the rest repeat tested or other extra code)",
            extra.len()
        );
    }
    let protocol = if args.leave_one_project_out {
        Protocol::LeaveOneProjectOut
    } else {
        Protocol::PerProject {
            folds: args.folds as usize,
            min_flaky: args.min_flaky as usize,
        }
    };
    let settings = EvalSettings {
        protocol,
        build: BuildSettings {
            tokenizer: args.embedding.tokenizer,
            dims: args.embedding.dims(),
            seed: args.embedding.seed,
            description: String::new(),
        },
        predict: predict::Settings {
            k: args.k as usize,
            sigma: args.sigma,
        },
        split_seed: args.embedding.seed,
        prior: !args.no_prior,
    };
    let bar = progress_bar(0, "evaluating");
    let (report, outcomes) = evaluate(&tests, &extra, &settings, &|done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    if let Some(path) = &args.predictions {
        write_predictions(path, &outcomes)?;
    }
    let mut stdout = std::io::stdout().lock();
    let written = match args.format {
        Format::Json => serde_json::to_writer_pretty(&mut stdout, &report)
            .map_err(anyhow::Error::from)
            .and_then(|()| Ok(writeln!(stdout)?)),
        Format::Table => write_table(&mut stdout, &report),
    };
    match written {
        // A reader that stopped early (`| head`) wanted no more.
        Err(error) if crate::terminal::is_broken_pipe(&error) => {}
        written => written?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Leave one repository out, per language, at the warning and information thresholds.
fn run_repositories(args: &EvalArgs) -> Result<ExitCode> {
    let mut labelled = read_data(&args.data.data, args.embedding.keep_duplicates)?;
    labelled.extend(read_data(
        &args.extra_train,
        args.embedding.keep_duplicates,
    )?);
    let mut repositories = Vec::new();
    for folder in &args.fixes {
        repositories.extend(crate::fixes::read(folder, &[])?);
    }
    let sigmas = [0.95, 0.5];
    let mut figures = Vec::new();
    for language in crate::language::Language::ALL {
        if repositories
            .iter()
            .any(|repository| repository.language == language)
        {
            eprintln!("{language}: judging each repository with a prior fitted without it");
            figures.extend(leave_one_repository_out(
                language,
                &labelled,
                &repositories,
                &sigmas,
            ));
        }
    }
    let mut stdout = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut stdout, &figures)?;
            writeln!(stdout)?;
        }
        Format::Table => write_repository_table(&mut stdout, &figures, &sigmas)?,
    }
    if let Some(path) = &args.predictions {
        write_repository_predictions(path, &figures)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Every judged test of the held-out repositories: its score, whether it was fixed for
/// flakiness, and the evidence a user would read.
fn write_repository_predictions(
    path: &std::path::Path,
    figures: &[RepositoryFigures],
) -> Result<()> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(["id", "project", "flaky", "score", "category", "evidence"])?;
    for repository in figures {
        for test in &repository.judged {
            writer.write_record([
                test.id.as_str(),
                &repository.project,
                if test.fixed { "1" } else { "0" },
                &format!("{:.4}", test.score),
                test.category.map_or("", |category| category.name()),
                &test.evidence.join("; "),
            ])?;
        }
    }
    write_csv(path, writer)
}

fn write_repository_table(
    out: &mut impl Write,
    figures: &[RepositoryFigures],
    sigmas: &[f64],
) -> Result<()> {
    let percent = |part: usize, whole: usize| {
        if whole == 0 {
            0.0
        } else {
            100.0 * part as f64 / whole as f64
        }
    };
    for language in crate::language::Language::ALL {
        let rows: Vec<&RepositoryFigures> = figures
            .iter()
            .filter(|figures| figures.language == language)
            .collect();
        if rows.is_empty() {
            continue;
        }
        writeln!(
            out,
            "{language}, leave one repository out (signal prior only)"
        )?;
        write!(out, "{:<40} {:>6} {:>5}", "repository", "tests", "fixed")?;
        for sigma in sigmas {
            write!(
                out,
                "  {:>8} {:>8}",
                format!("alarm>{sigma}"),
                format!("recall")
            )?;
        }
        writeln!(out)?;
        let mut totals = vec![(0, 0); sigmas.len()];
        let (mut tests, mut fixed) = (0, 0);
        for row in &rows {
            write!(
                out,
                "{:<40} {:>6} {:>5}",
                truncate(&row.project, 40),
                row.tests,
                row.fixed
            )?;
            for (total, (alarms, caught)) in totals.iter_mut().zip(&row.flagged) {
                write!(
                    out,
                    "  {:>7.1}% {:>7.1}%",
                    percent(*alarms, row.tests),
                    percent(*caught, row.fixed)
                )?;
                total.0 += alarms;
                total.1 += caught;
            }
            writeln!(out)?;
            tests += row.tests;
            fixed += row.fixed;
        }
        write!(out, "{:<40} {:>6} {:>5}", "all", tests, fixed)?;
        for (alarms, caught) in &totals {
            write!(
                out,
                "  {:>7.1}% {:>7.1}%",
                percent(*alarms, tests),
                percent(*caught, fixed)
            )?;
        }
        writeln!(out)?;
        writeln!(out)?;
    }
    Ok(())
}

fn write_predictions(path: &std::path::Path, outcomes: &[TestOutcome]) -> Result<()> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "id",
        "project",
        "flaky",
        "score",
        "predicted",
        "category",
        "nearest",
        "distance",
    ])?;
    for outcome in outcomes {
        writer.write_record([
            outcome.id.as_str(),
            &outcome.project,
            if outcome.flaky { "1" } else { "0" },
            &format!("{:.4}", outcome.score),
            if outcome.predicted { "1" } else { "0" },
            outcome.category.map_or("", |category| category.name()),
            outcome.nearest_id.as_deref().unwrap_or(""),
            &format!("{:.4}", outcome.nearest_distance),
        ])?;
    }
    write_csv(path, writer)
}

fn write_table(out: &mut impl Write, report: &Report) -> Result<()> {
    let protocol = match report.protocol {
        Protocol::PerProject { folds, min_flaky } => {
            format!(
                "per-project stratified {folds}-fold (projects with at least {min_flaky} flaky tests)"
            )
        }
        Protocol::LeaveOneProjectOut => "leave one project out".to_string(),
    };
    writeln!(
        out,
        "{protocol}; tokenizer {}, k {}, sigma {}",
        report.tokenizer, report.k, report.sigma
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<28} {:>6} {:>5} {:>5} {:>5} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "project", "tests", "flaky", "tp", "fp", "fn", "prec", "recall", "f1", "mcc", "a_fc"
    )?;
    for project in &report.projects {
        let counts = &project.counts;
        writeln!(
            out,
            "{:<28} {:>6} {:>5} {:>5} {:>5} {:>5} {}",
            truncate(&crate::terminal::escape(&project.project), 28),
            project.tests,
            project.flaky,
            counts.true_positives,
            counts.false_positives,
            counts.false_negatives,
            figures_row(&project.figures)
        )?;
    }
    writeln!(out)?;
    let counts = &report.cumulative_counts;
    writeln!(
        out,
        "{:<28} {:>6} {:>5} {:>5} {:>5} {:>5} {}",
        "cumulative",
        report.tests,
        report.flaky,
        counts.true_positives,
        counts.false_positives,
        counts.false_negatives,
        figures_row(&report.cumulative)
    )?;
    writeln!(
        out,
        "{:<52} {}",
        "mean over projects",
        figures_row(&report.mean)
    )?;
    writeln!(
        out,
        "{:<52} {}",
        "median over projects",
        figures_row(&report.median)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "lift {:.2}; {:.0}% of flagged tests given a category; {} projects skipped; {} splits: {:.3} s to train per split, {:.3} ms per prediction, {:.2} s in all",
        report.cumulative.lift,
        100.0 * report.cumulative.category_coverage,
        report.skipped_projects.len(),
        report.timing.splits,
        report.timing.train_seconds_per_split,
        report.timing.predict_milliseconds_per_test,
        report.timing.total_seconds
    )?;
    Ok(())
}

fn figures_row(figures: &Figures) -> String {
    format!(
        "{:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6}",
        figures.precision,
        figures.recall,
        figures.f1,
        figures.mcc,
        figures
            .category_accuracy
            .map_or("-".to_string(), |accuracy| format!("{accuracy:.3}"))
    )
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        text.chars().take(width - 1).chain(['…']).collect()
    }
}

/// Writes a CSV file built in memory where the user said, a regular file only.
fn write_csv(path: &std::path::Path, writer: csv::Writer<Vec<u8>>) -> Result<()> {
    let bytes = writer
        .into_inner()
        .map_err(|error| anyhow::anyhow!("{error}"))?;
    crate::files::write::write_atomically(crate::files::write::Place::Named, path, &bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}
