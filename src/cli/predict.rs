//! `flakesense predict`: every test of some files, with its score, verdict, category and neighbours.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::analysis::{self, Models, Thresholds};
use crate::category::Category;
use crate::config::Config;
use crate::files::read_source;
use crate::index::Index;
use crate::language::Language;
use crate::line_index::{ColumnUnit, LineIndex};
use crate::prevalence::Prevalence;
use crate::terminal::escape;
use crate::workspace;

#[derive(Debug, Args)]
pub struct PredictArgs {
    /// Source files to judge
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Model to use instead of the shipped default of each file's language (repeatable); the
    /// project's `.flakesense/index` and the `models` of `flakesense.toml` are used either way
    #[arg(long = "model", value_name = "MODEL")]
    models: Vec<PathBuf>,
    /// Neighbours that vote (default: `k` of flakesense.toml, else 7)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=crate::config::MAX_K as u64))]
    k: Option<u64>,
    /// Flaky when the score exceeds this (default: `warning-threshold` of flakesense.toml, else
    /// 0.95, as `check`)
    #[arg(long, value_parser = crate::check::parse_sigma)]
    sigma: Option<f64>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Count the workspace's signal shares without reading or writing their cache
    #[arg(long)]
    no_cache: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Debug, Serialize)]
struct TestVerdict {
    path: String,
    line: u32,
    column: u32,
    id: String,
    score: f64,
    flaky: bool,
    category: Option<Category>,
    /// The hint at a fix, for a test that is likely flaky.
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// The whole mechanisms found: what a warning rests on.
    mechanisms: Vec<MechanismView>,
    signals: Vec<SignalView>,
    shared_tokens: Vec<String>,
    neighbors: Vec<NeighborView>,
}

#[derive(Debug, Serialize)]
struct MechanismView {
    id: &'static str,
    category: Category,
    message: &'static str,
    evidence: String,
}

#[derive(Debug, Serialize)]
struct SignalView {
    id: &'static str,
    name: &'static str,
    category: Category,
    text: String,
    line: u32,
    context: Option<ContextView>,
}

#[derive(Debug, Serialize)]
struct ContextView {
    kind: String,
    name: String,
    path: Option<String>,
}

#[derive(Debug, Serialize)]
struct NeighborView {
    id: String,
    project: String,
    flaky: bool,
    /// `flaky`, `stable` (someone said so) or `unlabelled` (no source named it: no evidence
    /// either way, and no vote).
    label: &'static str,
    categories: Vec<Category>,
    /// 1 - the cosine distance.
    similarity: f64,
}

pub fn run(args: PredictArgs) -> Result<ExitCode> {
    let extra: Vec<Arc<Index>> = args
        .models
        .iter()
        .map(|path| {
            Index::load(path)
                .map(Arc::new)
                .context("cannot use --model")
        })
        .collect::<Result<_>>()?;
    let mut verdicts = Vec::new();
    let mut failures = 0;
    let mut prevalences: HashMap<PathBuf, Arc<Prevalence>> = HashMap::new();
    let mut workspaces: HashMap<PathBuf, WorkspaceSettings> = HashMap::new();
    let mut surroundings: HashMap<PathBuf, workspace::SurroundingsReader> = HashMap::new();
    let mut sources: HashMap<PathBuf, Arc<workspace::WorkspaceSources>> = HashMap::new();
    for path in &args.files {
        let file = match read_source(path) {
            Ok(file) => file,
            Err(reason) => {
                eprintln!("skipped {}: {reason}", escape(&path.display().to_string()));
                failures += 1;
                continue;
            }
        };
        // One rule for every command: a file that is not UTF-8 is skipped with a report.
        if file.lossy {
            eprintln!(
                "skipped {}: not valid UTF-8",
                escape(&path.display().to_string())
            );
            continue;
        }
        let absolute = std::path::absolute(path)?;
        let root = workspace::find_root(&absolute);
        let workspace = match workspaces.get(&root) {
            Some(workspace) => workspace,
            None => {
                let workspace = WorkspaceSettings::load(&root, &args)?;
                workspaces.entry(root.clone()).or_insert(workspace)
            }
        };
        let thresholds = workspace.thresholds;
        let mut models = models_for(file.language, &extra, workspace)?;
        // A file named on the command line is judged whatever `python_files` says, as pytest
        // collects it.
        let reader = match surroundings.get(&root) {
            Some(reader) => reader,
            None => {
                let exclude = Config::load(&root)?.exclude_matcher()?;
                let walked = Arc::new(workspace::WorkspaceSources::new(&root, exclude));
                sources.insert(root.clone(), walked.clone());
                let others = workspace::OtherFiles::on_demand(walked, !args.no_cache);
                let reader = workspace::SurroundingsReader::with_others(&root, Arc::new(others));
                surroundings.entry(root.clone()).or_insert(reader)
            }
        };
        let surroundings = reader.for_file(file.language, &absolute);
        if models.has_prior() {
            // A prior weighs a test's signals against those of its whole workspace, as
            // `flakesense check` and the editor do.
            models.prevalence = match prevalences.get(&root) {
                Some(prevalence) => prevalence.clone(),
                None => {
                    // One walk of the workspace with its symbols: its reader was made above.
                    let walked = &sources[&root];
                    let prevalence = Arc::new(workspace::prevalence(walked, !args.no_cache));
                    prevalences.insert(root.clone(), prevalence.clone());
                    prevalence
                }
            };
        }
        let display = path.display().to_string();
        let (reports, has_syntax_errors) = analysis::analyze_source(
            &models,
            &thresholds,
            file.language,
            &display.replace('\\', "/"),
            &file.text,
            &surroundings,
        );
        if has_syntax_errors {
            eprintln!(
                "warning: {} has syntax errors; judging the tests that parse",
                escape(&display)
            );
        }
        if reports.is_empty() {
            eprintln!("{}: no tests found", escape(&display));
        }
        let lines = LineIndex::new(&file.text);
        for report in reports {
            let (line, column) =
                lines.position(&file.text, report.test.name_range.start, ColumnUnit::Char);
            let prediction = report.prediction;
            verdicts.push(TestVerdict {
                path: display.clone(),
                line: line + 1,
                column: column + 1,
                id: report.test.id,
                score: prediction.score,
                flaky: prediction.flaky,
                category: prediction.category,
                hint: prediction
                    .flaky
                    .then(|| analysis::hint(file.language, &prediction)),
                mechanisms: prediction
                    .mechanisms
                    .iter()
                    .map(|mechanism| MechanismView {
                        id: mechanism.id,
                        category: mechanism.category,
                        message: mechanism.message,
                        evidence: mechanism.evidence(),
                    })
                    .collect(),
                signals: prediction
                    .signals
                    .into_iter()
                    .map(|hit| SignalView {
                        id: hit.id,
                        name: hit.message,
                        category: hit.category,
                        line: hit.line,
                        context: hit.context().map(|context| ContextView {
                            kind: context.kind.to_string(),
                            name: context.name.to_string(),
                            path: context.path.map(str::to_string),
                        }),
                        text: hit.text,
                    })
                    .collect(),
                shared_tokens: prediction.shared_tokens,
                neighbors: prediction
                    .neighbors
                    .into_iter()
                    .map(|neighbor| NeighborView {
                        similarity: analysis::similarity(&neighbor),
                        id: neighbor.id,
                        project: neighbor.project,
                        flaky: neighbor.flaky,
                        label: neighbor.label.name(),
                        categories: neighbor.categories,
                    })
                    .collect(),
            });
        }
    }
    let mut out = std::io::stdout().lock();
    let written = match args.format {
        Format::Json => serde_json::to_writer_pretty(&mut out, &verdicts)
            .map_err(anyhow::Error::from)
            .and_then(|()| Ok(writeln!(out)?)),
        Format::Text => write_text(&mut out, &verdicts),
    };
    match written {
        // A reader that stopped early (`| head`) wanted no more; the exit code stands.
        Err(error) if crate::terminal::is_broken_pipe(&error) => {}
        written => written?,
    }
    Ok(if failures > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// What a file's workspace adds to its judging, as `check` and the language server read it:
/// the thresholds of its `flakesense.toml`, its project index and its configured models.
struct WorkspaceSettings {
    thresholds: Thresholds,
    project: Option<Arc<Index>>,
    configured: Vec<Arc<Index>>,
}

impl WorkspaceSettings {
    fn load(root: &std::path::Path, args: &PredictArgs) -> Result<WorkspaceSettings> {
        let config = Config::load(root)?;
        if let Some(warning) = config.confirm_warning() {
            eprintln!("warning: {warning}");
        }
        let thresholds = config.thresholds();
        let sigma = args.sigma.unwrap_or(thresholds.warning);
        let configured = config
            .models
            .iter()
            .map(|path| {
                Index::load(path).map(Arc::new).map_err(|error| {
                    anyhow::anyhow!("cannot use a model of flakesense.toml: {error}")
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(WorkspaceSettings {
            thresholds: Thresholds {
                k: args.k.map_or(thresholds.k, |k| k as usize),
                // A test is "likely flaky" above sigma, as `check` flags it.
                warning: thresholds.warning.max(sigma),
                information: sigma,
            },
            project: workspace::read_project_index(root)?,
            configured,
        })
    }
}

fn models_for(
    language: Language,
    extra: &[Arc<Index>],
    workspace: &WorkspaceSettings,
) -> Result<Models> {
    let defaults = if extra.is_empty() {
        vec![crate::models::embedded(language).map_err(|error| {
            anyhow::anyhow!("the shipped {language} model is unreadable: {error}")
        })?]
    } else {
        Vec::new()
    };
    Ok(Models {
        defaults,
        project: workspace.project.clone(),
        extra: workspace.configured.iter().chain(extra).cloned().collect(),
        prevalence: Default::default(),
    })
}

fn write_text(out: &mut impl Write, verdicts: &[TestVerdict]) -> Result<()> {
    for verdict in verdicts {
        let verdict_text = match (verdict.flaky, verdict.category) {
            (true, Some(category)) => format!("likely flaky ({category})"),
            (true, None) => "likely flaky (cause unknown)".to_string(),
            (false, _) => "not flagged".to_string(),
        };
        writeln!(
            out,
            "{}:{}:{}: {} score {}: {verdict_text}",
            escape(&verdict.path),
            verdict.line,
            verdict.column,
            escape(&verdict.id),
            analysis::score_text(verdict.score)
        )?;
        for mechanism in &verdict.mechanisms {
            writeln!(
                out,
                "    how it can fail: it {} ({})",
                escape(&mechanism.evidence),
                mechanism.category
            )?;
        }
        for signal in &verdict.signals {
            writeln!(
                out,
                "    signal: {} `{}` (line {}, {})",
                signal.name,
                escape(&signal.text),
                signal.line,
                signal.category
            )?;
        }
        if !verdict.shared_tokens.is_empty() {
            writeln!(
                out,
                "    shares with flaky neighbours: {}",
                escape(&verdict.shared_tokens.join(", "))
            )?;
        }
        for neighbor in &verdict.neighbors {
            writeln!(
                out,
                "    similarity {:.2}  {:<10} {} ({}){}",
                neighbor.similarity,
                neighbor.label,
                escape(&neighbor.id),
                escape(&neighbor.project),
                Category::bracketed(&neighbor.categories)
            )?;
        }
        if let Some(hint) = &verdict.hint {
            writeln!(out, "    hint: {hint}")?;
        }
    }
    Ok(())
}
