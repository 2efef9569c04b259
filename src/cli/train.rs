//! `flakesense train`: builds a model file from labelled tests.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Args;

use super::{DataArgs, EmbeddingArgs, read_data};
use crate::embed::{TokenBag, TokenInterner};
use crate::index::{BuildSettings, Entry, Index, Origin, kept_code};

#[derive(Debug, Args)]
pub struct TrainArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Where to write the model
    #[arg(long, value_name = "MODEL")]
    out: PathBuf,
    #[command(flatten)]
    embedding: EmbeddingArgs,
}

pub fn run(args: TrainArgs) -> Result<ExitCode> {
    let tests = read_data(&args.data.data, args.embedding.keep_duplicates)?;
    if tests.is_empty() {
        bail!("no labelled test with code in the data");
    }
    let started = Instant::now();
    let settings = BuildSettings {
        tokenizer: args.embedding.tokenizer,
        dims: args.embedding.dims(),
        seed: args.embedding.seed,
        description: describe(&args),
    };
    let mut interner = TokenInterner::default();
    let index = Index::build(
        &settings,
        tests.iter().map(|test| {
            let bag = TokenBag::from_code_interned(
                settings.tokenizer,
                test.language,
                &test.code,
                &mut interner,
            );
            let code = test.flaky.then(|| kept_code(&test.code));
            let entry = Entry {
                id: test.id.clone(),
                project: test.project.clone(),
                source: test.source.clone(),
                language: test.language,
                flaky: test.flaky,
                categories: test.categories.clone(),
                origin: Origin::Dataset,
                path: None,
                code,
            };
            (entry, bag)
        }),
    );
    let seconds = started.elapsed().as_secs_f64();
    index.save(&args.out)?;
    let size = std::fs::metadata(&args.out)
        .map(|metadata| metadata.len())
        .unwrap_or(0);
    let flaky = index.entries().iter().filter(|entry| entry.flaky).count();
    eprintln!(
        "built a model of {} tests ({flaky} flaky), {} tokens, {} dimensions in {seconds:.2} s; wrote {} ({:.1} MB)",
        index.len(),
        index.vocabulary_len(),
        index.params().projection.dims,
        args.out.display(),
        size as f64 / 1e6
    );
    Ok(ExitCode::SUCCESS)
}

/// The training command as a user could retype it, kept in the model.
fn describe(args: &TrainArgs) -> String {
    let files: Vec<String> = args
        .data
        .data
        .iter()
        .map(|path| {
            path.file_name().map_or_else(
                || path.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            )
        })
        .collect();
    format!(
        "flakesense {} train on {} --tokenizer {} {} --seed {}",
        env!("CARGO_PKG_VERSION"),
        files.join(" "),
        args.embedding.tokenizer.name(),
        match args.embedding.dims {
            Some(dims) => format!("--dims {dims}"),
            None => format!("--eps {}", args.embedding.eps),
        },
        args.embedding.seed
    )
}
