//! One split judged: an index built from its training side, with a signal prior where the
//! protocol asks for one, then each of its tested tests embedded, searched and voted on, timed.

use std::time::Instant;

use crate::category::Category;
use crate::dataset::LabeledTest;
use crate::embed::TokenBag;
use crate::index::{Entry, Index, Label};
use crate::language::Language;
use crate::predict::{self, Ballot};
use crate::prevalence::Prevalence;
use crate::prior::{Example, SignalPrior};
use crate::signals::Signals;

use super::splits::Split;
use super::{EvalSettings, Protocol, TestOutcome};

/// What one split produced: its tests' outcomes (by position in the tested data) and its times.
pub(super) struct SplitResult {
    pub(super) outcomes: Vec<(usize, TestOutcome)>,
    pub(super) train_seconds: f64,
    pub(super) predict_seconds: f64,
}

pub(super) fn run_split(
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
    SignalPrior::fit(language, &examples).0
}
