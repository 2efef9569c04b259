//! Measures accuracy with the FLAST paper's protocols: stratified k-fold within each project, and
//! leave-one-project-out across projects. The vocabulary and the projection are fitted on the
//! training side of each split only.

pub mod metrics;
pub mod repositories;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_xoshiro::SplitMix64;
use rayon::prelude::*;
use serde::Serialize;

use crate::category::Category;
use crate::dataset::LabeledTest;
use crate::embed::{TokenBag, TokenInterner};
use crate::index::{BuildSettings, Entry, Index, Label};
use crate::language::Language;
use crate::predict::{self, Ballot};
use crate::prevalence::Prevalence;
use crate::prior::{Example, SignalPrior};
use crate::signals::{self, Signals};
pub use metrics::{Counts, Figures};

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

/// What one split produced: its tests' outcomes (by position in the tested data) and its times.
struct SplitResult {
    outcomes: Vec<(usize, TestOutcome)>,
    train_seconds: f64,
    predict_seconds: f64,
}

struct Split {
    project: String,
    train: Vec<usize>,
    test: Vec<usize>,
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

fn make_splits(
    tests: &[LabeledTest],
    pool: &[&LabeledTest],
    settings: &EvalSettings,
) -> (Vec<Split>, Vec<String>) {
    let mut projects: Vec<&str> = tests.iter().map(|test| test.project.as_str()).collect();
    projects.sort_unstable();
    projects.dedup();
    let mut splits = Vec::new();
    let mut skipped = Vec::new();
    match settings.protocol {
        Protocol::PerProject { folds, min_flaky } => {
            for project in projects {
                let members: Vec<usize> = (0..tests.len())
                    .filter(|&i| tests[i].project == project)
                    .collect();
                let flaky = members.iter().filter(|&&i| tests[i].flaky).count();
                if flaky < min_flaky {
                    skipped.push(project.to_string());
                    continue;
                }
                let fold_of = stratified_folds(
                    &members,
                    |i| tests[i].flaky,
                    folds,
                    settings.split_seed ^ text_seed(project),
                );
                for fold in 0..folds {
                    let (mut train, mut test) = (Vec::new(), Vec::new());
                    for (&member, &member_fold) in members.iter().zip(&fold_of) {
                        if member_fold == fold {
                            test.push(member)
                        } else {
                            train.push(member)
                        }
                    }
                    if !test.is_empty() {
                        splits.push(Split {
                            project: project.to_string(),
                            train,
                            test,
                        });
                    }
                }
            }
        }
        Protocol::LeaveOneProjectOut => {
            for project in projects {
                let test: Vec<usize> = (0..tests.len())
                    .filter(|&i| tests[i].project == project)
                    .collect();
                let train: Vec<usize> = (0..pool.len())
                    .filter(|&i| pool[i].project != project)
                    .collect();
                splits.push(Split {
                    project: project.to_string(),
                    train,
                    test,
                });
            }
        }
    }
    (splits, skipped)
}

/// Assigns each member a fold so that every fold gets its share of each class: each class is
/// shuffled, then dealt round-robin, the second class continuing where the first stopped.
fn stratified_folds(
    members: &[usize],
    is_positive: impl Fn(usize) -> bool,
    folds: usize,
    seed: u64,
) -> Vec<usize> {
    let mut rng = SplitMix64::seed_from_u64(seed);
    let mut fold_of = vec![0; members.len()];
    let mut dealt = 0;
    for class in [true, false] {
        let mut positions: Vec<usize> = (0..members.len())
            .filter(|&p| is_positive(members[p]) == class)
            .collect();
        shuffle(&mut positions, &mut rng);
        for position in positions {
            fold_of[position] = dealt % folds;
            dealt += 1;
        }
    }
    fold_of
}

/// Fisher-Yates with integer-only bounded draws, the same on every platform.
fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
        items.swap(i, j);
    }
}

fn text_seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
    })
}

fn run_split(
    split: &Split,
    pool: &[&LabeledTest],
    bags: &[TokenBag],
    signals: &[Signals],
    settings: &EvalSettings,
) -> SplitResult {
    let started = Instant::now();
    let mut index = Index::build(
        &settings.build,
        split
            .train
            .iter()
            // FLAST's protocol: the data's "not flaky" is the other class of the vote.
            .map(|&i| {
                (
                    Entry::from_labeled(pool[i], false, Label::Stable),
                    bags[i].clone(),
                )
            }),
    );
    let prior = (settings.prior && settings.protocol == Protocol::LeaveOneProjectOut)
        .then(|| {
            split
                .test
                .first()
                .map(|&i| fit_prior(pool[i].language, split, pool, signals))
        })
        .flatten();
    index.set_priors(prior.into_iter().collect());
    // The tested project's signals, from its tests' code: what `check` and the editor see.
    let prevalence: Prevalence = split
        .test
        .iter()
        .map(|&i| (pool[i].language, &signals[i]))
        .collect();
    let train_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let outcomes = split
        .test
        .iter()
        .map(|&i| {
            let query = index.embed(&bags[i]);
            let nearest = index.nearest(&query, settings.predict.k, |_| true);
            let categories: Vec<Vec<Category>> = nearest
                .iter()
                .map(|&(position, _)| index.entry(position).categories())
                .collect();
            let ballots: Vec<Ballot<'_>> = nearest
                .iter()
                .zip(&categories)
                .map(|(&(position, similarity), categories)| Ballot {
                    flaky: index.entry(position).is_flaky(),
                    categories,
                    distance: (1.0 - similarity).max(0.0),
                })
                .collect();
            let opinion = index
                .prior(pool[i].language)
                .map(|prior| predict::prior_opinion(prior, &signals[i], &prevalence).0);
            let vote = predict::vote(&ballots, opinion);
            let test = pool[i];
            (
                i,
                TestOutcome {
                    id: test.id.clone(),
                    project: split.project.clone(),
                    flaky: test.flaky,
                    score: vote.score,
                    predicted: vote.score > settings.predict.sigma,
                    category: vote.category,
                    nearest_id: nearest
                        .first()
                        .map(|&(position, _)| index.entry(position).id().to_string()),
                    nearest_distance: nearest
                        .first()
                        .map_or(1.0, |&(_, similarity)| (1.0 - similarity).max(0.0)),
                },
            )
        })
        .collect();
    SplitResult {
        outcomes,
        train_seconds,
        predict_seconds: started.elapsed().as_secs_f64(),
    }
}

/// Fits a signal prior on the training side of a split, on the tested language's tests.
fn fit_prior(
    language: Language,
    split: &Split,
    pool: &[&LabeledTest],
    signals: &[Signals],
) -> SignalPrior {
    let examples: Vec<Example<'_>> = split
        .train
        .iter()
        .filter(|&&i| pool[i].language == language)
        .map(|&i| Example::new(pool[i], &signals[i]))
        .collect();
    SignalPrior::fit(language, &examples)
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
