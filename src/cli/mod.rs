//! The command line: argument parsing and one small module per subcommand.

mod eval;
mod fix;
mod predict;
mod signals;
mod train;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::embed::Tokenizer;
use crate::index::Dims;

#[derive(Debug, Parser)]
#[command(
    name = "flakesense",
    version,
    about = "Predicts flaky tests from their code, while they are written"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build a model from labelled tests in the canonical CSV format, or a repository's index from its flaky history
    Train(train::TrainArgs),
    /// Measure accuracy on labelled tests (per-project k-fold or leave-one-project-out)
    Eval(eval::EvalArgs),
    /// Judge every test of some source files and show the nearest known tests
    Predict(predict::PredictArgs),
    /// Run the language server on standard input and output
    Serve {
        /// Accepted for editors that pass it; standard input and output is the only transport
        #[arg(long, hide = true)]
        stdio: bool,
    },
    /// Report likely flaky tests of a tree or a change, for pre-commit hooks and CI
    Check(crate::check::CheckArgs),
    /// Apply the mechanical fixes of warned tests, or print them as a unified diff (--diff)
    Fix(fix::FixArgs),
    /// Run suspected tests under noise, one CPU, no network and twice in one process
    Confirm(crate::confirm::ConfirmArgs),
    /// List the flakiness signals flakesense looks for; with an id, what it matches, why, an example and the fix
    Signals(signals::SignalsArgs),
}

/// How tests are turned into vectors; shared by `train` and `eval`.
#[derive(Debug, Clone, Args)]
struct EmbeddingArgs {
    /// `default` (the code lexer) or `flast` (scikit-learn's CountVectorizer, as in the paper)
    #[arg(long, default_value = "default", value_parser = parse_tokenizer)]
    tokenizer: Tokenizer,
    /// Distortion of the Johnson-Lindenstrauss bound that sets the dimension
    #[arg(long, default_value_t = 0.33, conflicts_with = "dims", value_parser = parse_eps)]
    eps: f64,
    /// Fixed dimension of the projection, instead of the bound
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_DIMS)))]
    dims: Option<u32>,
    /// Seed of the random projection (and of the folds in `eval`)
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Keep tests whose whitespace-normalised code repeats another's (merged by default)
    #[arg(long)]
    keep_duplicates: bool,
}

impl EmbeddingArgs {
    fn dims(&self) -> Dims {
        match self.dims {
            Some(dims) => Dims::Fixed(dims),
            None => Dims::Eps(self.eps),
        }
    }
}

/// The most folds `eval` splits a project into.
const MAX_FOLDS: u64 = 1000;
/// The largest count of tests an option can ask for.
const MAX_COUNT: u64 = 1_000_000;
/// The largest dimension a projection can have: 16,384 bytes per test's vector.
const MAX_DIMS: u32 = 16_384;
/// The distortions `--eps` allows: the bound needs one between 0 and 1, and one below 0.1 asks
/// for tens of thousands of dimensions (0 for infinitely many).
const EPS_RANGE: std::ops::RangeInclusive<f64> = 0.1..=0.99;

fn parse_eps(text: &str) -> Result<f64, String> {
    let eps: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if !EPS_RANGE.contains(&eps) {
        return Err(format!(
            "must lie between {} and {}, found {eps}",
            EPS_RANGE.start(),
            EPS_RANGE.end()
        ));
    }
    Ok(eps)
}

fn parse_tokenizer(name: &str) -> Result<Tokenizer, String> {
    Tokenizer::from_name(name)
        .ok_or_else(|| format!("unknown tokenizer `{name}` (expected `default` or `flast`)"))
}

/// Data files on the command line.
#[derive(Debug, Clone, Args)]
struct DataArgs {
    /// Labelled tests in the canonical CSV format (repeatable)
    #[arg(
        long = "data",
        required_unless_present = "fixes",
        value_name = "FILE.csv"
    )]
    data: Vec<PathBuf>,
}

/// Parses the arguments, runs the command and maps failures to exit code 2.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Train(args) => train::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Predict(args) => predict::run(args),
        Command::Serve { .. } => crate::lsp::run_stdio(),
        Command::Check(args) => crate::check::run(args),
        Command::Confirm(args) => crate::confirm::run(args),
        Command::Fix(args) => fix::run(args),
        Command::Signals(args) => signals::run(args),
    };
    match result {
        Ok(code) => code,
        // Whatever still wrote to a reader that went away ends quietly: nobody reads a message.
        Err(error) if crate::terminal::is_broken_pipe(&error) => ExitCode::from(2),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// A progress bar on standard error, drawn only when it is a terminal.
fn progress_bar(total: u64, what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

/// Reads and merges several CSV files, reporting what was read on standard error.
fn read_data(
    paths: &[PathBuf],
    keep_duplicates: bool,
) -> anyhow::Result<Vec<crate::dataset::LabeledTest>> {
    let mut tests = Vec::new();
    for path in paths {
        let dataset = crate::dataset::read_csv_file(path)?;
        let flaky = dataset.tests.iter().filter(|test| test.flaky).count();
        eprintln!(
            "read {} tests ({flaky} flaky) from {}{}",
            dataset.tests.len(),
            path.display(),
            match dataset.skipped_without_code {
                0 => String::new(),
                n => format!("; skipped {n} rows without code"),
            }
        );
        tests.extend(dataset.tests);
    }
    if !keep_duplicates {
        let removed = crate::dataset::deduplicate(&mut tests);
        if removed > 0 {
            eprintln!(
                "merged {removed} tests whose code repeats another's (--keep-duplicates keeps them)"
            );
        }
    }
    Ok(tests)
}
