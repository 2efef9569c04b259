//! The verdict on a test: FLAST's distance-weighted vote of the k nearest labelled tests
//! (Bertolino et al., Algorithm 1), combined with a shipped model's signal prior, the likely
//! category, and the evidence behind both.
//!
//! The vote itself, with the signal prior as a pseudo-neighbour, is in `vote.rs`; here are the
//! neighbours it takes, over every model at once, and the similar flaky tests a verdict shows.

use std::collections::{HashMap, HashSet};

use crate::category::Category;
use crate::embed::{TokenBag, Tokenizer};
use crate::index::{Index, Label, Origin, Query};
use crate::language::Language;
use crate::prevalence::Prevalence;
use crate::signals::{MechanismHit, SignalHit, Signals};

mod vote;

pub use vote::{
    Ballot, MECHANISM_FLOOR, PARTS_CEILING, PRIOR_STRENGTH, PriorOpinion, VOTE_HORIZON, Vote,
    prior_opinion, vote,
};

/// How many neighbours vote and where the line between flaky and not flaky lies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The paper uses k = 7.
    pub k: usize,
    /// A test is flaky when its score exceeds sigma: 0.5 favours recall, 0.95 precision (the
    /// paper's two settings).
    pub sigma: f64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { k: 7, sigma: 0.5 }
    }
}

/// A labelled test near the one being judged, with what it shares with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbor {
    /// Which of the models passed to [`predict`] it comes from.
    pub model: usize,
    pub entry: usize,
    pub id: String,
    pub project: String,
    /// Whether the neighbour is labelled flaky (see `label`).
    pub flaky: bool,
    /// What its entry says: flaky, stable or unlabelled. Only flaky and stable ones vote.
    pub label: Label,
    pub categories: Vec<Category>,
    pub origin: Origin,
    pub path: Option<String>,
    /// Cosine distance in the projected space, 1 - cos.
    pub distance: f64,
    /// Tokens of the judged test that this neighbour also has, rarest first.
    pub shared_tokens: Vec<String>,
}

/// A verdict with its evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub score: f64,
    pub flaky: bool,
    pub category: Option<Category>,
    /// The k nearest labelled tests, nearest first.
    pub neighbors: Vec<Neighbor>,
    /// For a test judged flaky, the known flaky tests nearest to it among those whose own code
    /// has the strongest risk of its evidence, nearest first: what a warning shows as similar
    /// flaky tests, since across projects the nearest by tokens alone are often unrelated.
    pub examples: Vec<Neighbor>,
    /// Tokens the test shares with its flaky neighbours, the most widely shared and rarest first.
    pub shared_tokens: Vec<String>,
    /// Signals of the catalogue that speak for flakiness, strongest first (with a shipped model).
    pub signals: Vec<SignalHit>,
    /// The whole mechanisms found in the test and what it runs: what a warning rests on (with a
    /// shipped model), in catalogue order.
    pub mechanisms: Vec<MechanismHit>,
    /// The signal prior's own score, when a model has a prior for this language.
    pub prior_score: Option<f64>,
    /// The weight the neighbours had in the vote; with a prior, 0 means the signals decided alone.
    pub neighbor_weight: f64,
}

/// How many shared tokens a prediction lists.
const SHARED_TOKENS_SHOWN: usize = 8;

/// Judges one test against several models at once (the shipped model and the project's own
/// index): the k nearest neighbours of its code over all of them vote, with the signal prior of
/// the first model that has one for the language reading the `signals` of the test and of what
/// it runs, weighed by their `prevalence` in the test's project. Models built with the same tokeniser and projection measure distance in the same
/// space.
pub fn predict(
    models: &[&Index],
    language: Language,
    code: &str,
    signals: &Signals,
    settings: Settings,
    prevalence: &Prevalence,
) -> Prediction {
    let mut candidates: Vec<(usize, usize, f64)> = Vec::new();
    let mut bags: Vec<(Tokenizer, TokenBag)> = Vec::new();
    let mut queries: Vec<Query> = Vec::with_capacity(models.len());
    for (model_position, model) in models.iter().enumerate() {
        let tokenizer = model.params().tokenizer;
        let bag = match bags.iter().find(|(kind, _)| *kind == tokenizer) {
            Some((_, bag)) => bag.clone(),
            None => {
                let bag = model.bag(language, code);
                bags.push((tokenizer, bag.clone()));
                bag
            }
        };
        let query = model.embed(&bag);
        // A project index holds tests of every language; only the judged test's own may vote.
        let same_language = |position: usize| model.entry_language(position) == Some(language);
        for (entry, similarity) in model.nearest(&query, settings.k, same_language) {
            candidates.push((model_position, entry, similarity));
        }
        queries.push(query);
    }
    let neighbors = nearest_of_all(models, &queries, candidates, settings.k);
    let prior = models.iter().find_map(|model| model.prior(language));
    // Only flaky and stable neighbours vote. An unlabelled one (a test no source named, a mined
    // dataset's "not known to be flaky") is shown as a similar test but never decides, not even
    // as the test's exact twin, and never outvotes the evidence in the test's own code.
    let ballots: Vec<Ballot<'_>> = neighbors
        .iter()
        .filter(|neighbor| neighbor.label.votes())
        .map(|neighbor| Ballot {
            flaky: neighbor.flaky,
            categories: &neighbor.categories,
            distance: neighbor.distance,
        })
        .collect();
    let (opinion, evidence) = match prior {
        Some(prior) => {
            let (opinion, evidence) = prior_opinion(prior, signals, prevalence);
            (Some(opinion), evidence)
        }
        None => (None, Vec::new()),
    };
    let mut outcome = vote(&ballots, opinion);
    if prior.is_some() && signals.mechanisms.is_empty() {
        outcome.score = without_mechanism(outcome.score, &neighbors);
    }
    let shared_tokens = shared_with_flaky(&neighbors);
    let flaky = outcome.score > settings.sigma;
    let examples = match evidence.first() {
        Some(strongest) if flaky => examples_of(models, &queries, language, strongest.id),
        _ => Vec::new(),
    };
    Prediction {
        score: outcome.score,
        flaky,
        category: outcome.category,
        neighbors,
        examples,
        shared_tokens,
        signals: evidence,
        mechanisms: if prior.is_some() {
            signals.mechanisms.clone()
        } else {
            Vec::new()
        },
        prior_score: opinion.map(|opinion| opinion.score),
        neighbor_weight: outcome.neighbor_weight,
    }
}

/// The score of a test no mechanism speaks for, judged with a shipped model: a warning needs a
/// way for the test to fail or the project's own word (a flaky mark, its flaky history). A flaky
/// twin in a research dataset, labelled by reruns of other code, is information at most.
fn without_mechanism(score: f64, neighbors: &[Neighbor]) -> f64 {
    let own_word = neighbors.iter().any(|neighbor| {
        neighbor.label.votes() && neighbor.flaky && neighbor.origin != Origin::Dataset
    });
    if own_word {
        score
    } else {
        score.min(PARTS_CEILING)
    }
}

/// How many known flaky tests with the same risk a prediction shows.
const EXAMPLES_SHOWN: usize = 3;

/// The `k` most similar of the entries found in each model, `(model position, entry position,
/// similarity)`, as neighbours: nearest first, ties in model then entry order.
fn nearest_of_all(
    models: &[&Index],
    queries: &[Query],
    mut found: Vec<(usize, usize, f64)>,
    k: usize,
) -> Vec<Neighbor> {
    found.sort_by(nearest_first);
    found.truncate(k);
    found
        .into_iter()
        .map(|(model_position, entry_position, similarity)| {
            let model = models[model_position];
            let entry = model.entry(entry_position);
            Neighbor {
                model: model_position,
                entry: entry_position,
                id: entry.id().to_string(),
                project: entry.project().to_string(),
                flaky: entry.is_flaky(),
                label: entry.label(),
                categories: entry.categories(),
                origin: entry.origin(),
                path: entry.path().map(str::to_string),
                distance: (1.0 - similarity).max(0.0),
                shared_tokens: model
                    .shared_tokens(&queries[model_position], entry_position)
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
            }
        })
        .collect()
}

/// The known flaky tests of the test's language nearest to it, over all models, among those
/// whose own code has the risk `signal` (see [`Prediction::examples`]).
fn examples_of(
    models: &[&Index],
    queries: &[Query],
    language: Language,
    signal: &str,
) -> Vec<Neighbor> {
    let mut found = Vec::new();
    for (model_position, (model, query)) in models.iter().zip(queries).enumerate() {
        // Twice as many, as the datasets hold some tests twice.
        for (entry, similarity) in
            model.nearest_flaky_with(query, 2 * EXAMPLES_SHOWN, language, signal)
        {
            found.push((model_position, entry, similarity));
        }
    }
    found.sort_by(nearest_first);
    let mut seen = HashSet::new();
    found.retain(|&(model_position, entry_position, _)| {
        let entry = models[model_position].entry(entry_position);
        seen.insert((entry.project(), entry.id()))
    });
    nearest_of_all(models, queries, found, EXAMPLES_SHOWN)
}

/// `(model position, entry position, similarity)` most similar first, ties in model then entry
/// order.
fn nearest_first(a: &(usize, usize, f64), b: &(usize, usize, f64)) -> std::cmp::Ordering {
    b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1))
}

/// The flaky ones of `neighbors` that are not among `examples`, nearest first: what a warning
/// shows after its examples.
pub fn flaky_besides<'a>(
    neighbors: &'a [Neighbor],
    examples: &'a [Neighbor],
) -> impl Iterator<Item = &'a Neighbor> {
    neighbors.iter().filter(|neighbor| {
        neighbor.flaky
            && !examples
                .iter()
                .any(|example| example.model == neighbor.model && example.entry == neighbor.entry)
    })
}

/// Tokens shared with the flaky neighbours, ranked by how many of them share each, then by the
/// rank a token has among each neighbour's rarest-first list.
fn shared_with_flaky(neighbors: &[Neighbor]) -> Vec<String> {
    let mut tally: HashMap<&str, (usize, usize)> = HashMap::new();
    for neighbor in neighbors.iter().filter(|neighbor| neighbor.flaky) {
        for (rank, token) in neighbor.shared_tokens.iter().enumerate() {
            let entry = tally.entry(token.as_str()).or_insert((0, usize::MAX));
            entry.0 += 1;
            entry.1 = entry.1.min(rank);
        }
    }
    let mut ranked: Vec<(&str, (usize, usize))> = tally.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)).then(a.0.cmp(b.0)));
    ranked
        .into_iter()
        .take(SHARED_TOKENS_SHOWN)
        .map(|(token, _)| token.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn twin(label: Label, origin: Origin) -> Neighbor {
        Neighbor {
            model: 0,
            entry: 0,
            id: "T#t".to_string(),
            project: "p".to_string(),
            flaky: label == Label::Flaky,
            label,
            categories: Vec::new(),
            origin,
            path: None,
            distance: 0.0,
            shared_tokens: Vec::new(),
        }
    }

    #[test]
    fn without_a_mechanism_only_the_project_s_own_word_warns() {
        // A research dataset's flaky twin leaves the test at information.
        let dataset = [twin(Label::Flaky, Origin::Dataset)];
        assert_eq!(without_mechanism(0.99, &dataset), PARTS_CEILING);
        // A mark in the editor or the project's flaky history still decides.
        for origin in [Origin::Manual, Origin::History] {
            assert_eq!(without_mechanism(0.99, &[twin(Label::Flaky, origin)]), 0.99);
        }
        // A stable mark is no word for flakiness, and a low score stays as it is.
        let stable = [twin(Label::Stable, Origin::Manual)];
        assert_eq!(without_mechanism(0.99, &stable), PARTS_CEILING);
        assert_eq!(without_mechanism(0.3, &dataset), 0.3);
    }
}
