//! Measures accuracy with the FLAST paper's protocols: stratified k-fold within each project, and
//! leave-one-project-out across projects. The vocabulary and the projection are fitted on the
//! training side of each split only.

pub mod metrics;
pub mod repositories;
mod run_split;
mod splits;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::category::Category;
use crate::dataset::LabeledTest;
use crate::embed::{TokenBag, TokenInterner};
use crate::index::BuildSettings;
use crate::predict;
use crate::signals::{self, Signals};
pub use metrics::{Counts, Figures};
use run_split::{SplitResult, run_split};
use splits::make_splits;

/// How tests are split into training and testing sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "name")]
pub enum Protocol {
    /// Stratified k-fold within each project that has at least `min_flaky` flaky tests.
    PerProject { folds: usize, min_flaky: usize },
    /// Each project tested by a model trained on all the others.
    LeaveOneProjectOut,
}

#[derive(Debug, Clone)]
pub struct EvalSettings {
    pub protocol: Protocol,
    pub build: BuildSettings,
    pub predict: predict::Settings,
    /// Seeds the fold assignment (the projection has its own seed in `build`).
    pub split_seed: u64,
    /// Fit a signal prior on the training side of each leave-one-project-out split, as the
    /// shipped models have. The per-project protocol measures a project's own index, which has
    /// none, and ignores this.
    pub prior: bool,
}

/// One project's results.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectReport {
    pub project: String,
    pub tests: usize,
    pub flaky: usize,
    pub counts: Counts,
    pub figures: Figures,
}

/// How long the work took, on the threads that did it.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Timing {
    pub splits: usize,
    /// Mean time to build the index of one split's training side (tokenising excluded: every
    /// test is tokenised once up front, in `tokenize_seconds`).
    pub train_seconds_per_split: f64,
    /// Mean time to embed, search and vote for one test.
    pub predict_milliseconds_per_test: f64,
    pub tokenize_seconds: f64,
    pub total_seconds: f64,
}

/// The outcome of an evaluation; `--format json` prints it as it is.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub protocol: Protocol,
    pub tokenizer: &'static str,
    pub k: usize,
    pub sigma: f64,
    pub tests: usize,
    pub flaky: usize,
    pub projects: Vec<ProjectReport>,
    /// Projects left out of a per-project run for having too few flaky tests.
    pub skipped_projects: Vec<String>,
    /// Sums of the counts over all splits, and the figures from those sums.
    pub cumulative: Figures,
    pub cumulative_counts: Counts,
    pub mean: Figures,
    pub median: Figures,
    pub timing: Timing,
}

/// The verdict on one tested test, for error analysis (`--predictions`).
#[derive(Debug, Clone, Serialize)]
pub struct TestOutcome {
    pub id: String,
    pub project: String,
    pub flaky: bool,
    pub score: f64,
    pub predicted: bool,
    pub category: Option<Category>,
    pub nearest_id: Option<String>,
    /// Cosine distance to the nearest training test (1 when there is none).
    pub nearest_distance: f64,
}

/// Runs the protocol over `tests`; rows of `extra_train` are only ever trained on, and never
/// when their project is the one being tested. `progress` is called once per finished split.
pub fn evaluate(
    tests: &[LabeledTest],
    extra_train: &[LabeledTest],
    settings: &EvalSettings,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> (Report, Vec<TestOutcome>) {
    let started = Instant::now();
    let pool: Vec<&LabeledTest> = tests.iter().chain(extra_train).collect();
    let mut interner = TokenInterner::default();
    let bags: Vec<TokenBag> = pool
        .iter()
        .map(|test| {
            TokenBag::from_code_interned(
                settings.build.tokenizer,
                test.language,
                &test.code,
                &mut interner,
            )
        })
        .collect();
    let signals: Vec<Signals> = pool
        .iter()
        .map(|test| signals::detect(test.language, &test.code))
        .collect();
    let tokenize_seconds = started.elapsed().as_secs_f64();

    let (splits, skipped_projects) = make_splits(tests, &pool, settings);
    let finished = AtomicUsize::new(0);
    let results: Vec<SplitResult> = splits
        .par_iter()
        .map(|split| {
            let result = run_split(split, &pool, &bags, &signals, settings);
            progress(finished.fetch_add(1, Ordering::Relaxed) + 1, splits.len());
            result
        })
        .collect();

    let mut outcomes: Vec<(usize, TestOutcome)> = Vec::new();
    let (mut train_seconds, mut predict_seconds) = (0.0, 0.0);
    for result in results {
        outcomes.extend(result.outcomes);
        train_seconds += result.train_seconds;
        predict_seconds += result.predict_seconds;
    }
    // Grouped by project, in the order of the input within each.
    outcomes.sort_by(|a, b| a.1.project.cmp(&b.1.project).then(a.0.cmp(&b.0)));
    let report = summarise(
        settings,
        tests,
        &outcomes,
        skipped_projects,
        Timing {
            splits: splits.len(),
            train_seconds_per_split: train_seconds / splits.len().max(1) as f64,
            predict_milliseconds_per_test: 1000.0 * predict_seconds / outcomes.len().max(1) as f64,
            tokenize_seconds,
            total_seconds: started.elapsed().as_secs_f64(),
        },
    );
    (
        report,
        outcomes.into_iter().map(|(_, outcome)| outcome).collect(),
    )
}

fn summarise(
    settings: &EvalSettings,
    tests: &[LabeledTest],
    outcomes: &[(usize, TestOutcome)],
    skipped_projects: Vec<String>,
    timing: Timing,
) -> Report {
    let mut projects: Vec<ProjectReport> = Vec::new();
    for (position, outcome) in outcomes {
        if projects
            .last()
            .is_none_or(|last| last.project != outcome.project)
        {
            projects.push(ProjectReport {
                project: outcome.project.clone(),
                tests: 0,
                flaky: 0,
                counts: Counts::default(),
                figures: Figures::default(),
            });
        }
        let report = projects.last_mut().expect("pushed above");
        report.tests += 1;
        report.flaky += usize::from(outcome.flaky);
        report.counts.record(outcome.flaky, outcome.predicted);
        if outcome.predicted && outcome.category.is_some() {
            report.counts.flagged_with_category += 1;
        }
        if outcome.flaky && outcome.predicted {
            let truth = &tests[*position].categories;
            if !truth.is_empty() {
                report.counts.categorised_true_positives += 1;
                report.counts.category_hits +=
                    usize::from(outcome.category.is_some_and(|c| truth.contains(&c)));
            }
        }
    }
    let mut cumulative_counts = Counts::default();
    for project in &mut projects {
        project.figures = project.counts.figures();
        cumulative_counts.add(&project.counts);
    }
    let figures: Vec<Figures> = projects.iter().map(|project| project.figures).collect();
    let (mean, median) = metrics::mean_and_median(&figures);
    Report {
        protocol: settings.protocol,
        tokenizer: settings.build.tokenizer.name(),
        k: settings.predict.k,
        sigma: settings.predict.sigma,
        tests: outcomes.len(),
        flaky: cumulative_counts.flaky(),
        projects,
        skipped_projects,
        cumulative: cumulative_counts.figures(),
        cumulative_counts,
        mean,
        median,
        timing,
    }
}

#[cfg(test)]
mod tests;
