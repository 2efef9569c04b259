//! The verdict on a test: FLAST's distance-weighted vote of the k nearest labelled tests
//! (Bertolino et al., Algorithm 1), combined with a shipped model's signal prior, the likely
//! category, and the evidence behind both.

use std::collections::{HashMap, HashSet};

use crate::category::Category;
use crate::embed::{TokenBag, Tokenizer};
use crate::index::{Index, Label, Origin, Query};
use crate::language::Language;
use crate::prevalence::Prevalence;
use crate::prior::SignalPrior;
use crate::signals::{SignalHit, Signals};

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

/// Two vectors this close are the same test: cosine distance is computed exactly for identical
/// vectors, and anything nearer than this is rounding.
const DUPLICATE_DISTANCE: f64 = 1e-9;

/// With a signal prior, neighbours at this cosine distance or farther do not vote. Measured on
/// leave-one-project-out runs: neighbours from other projects sit at 0.3 to 0.8 and their labels
/// carry no information there, while neighbours in the same project are far nearer.
pub const VOTE_HORIZON: f64 = 0.25;
/// With a signal prior, the prior weighs as much as this much neighbour weight (1/D - 1/H summed).
pub const PRIOR_STRENGTH: f64 = 10.0;

/// A neighbour's part in the vote.
#[derive(Debug, Clone, Copy)]
pub struct Ballot<'a> {
    pub flaky: bool,
    pub categories: &'a [Category],
    /// Cosine distance, 1 - cos.
    pub distance: f64,
}

/// What a signal prior says about a test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriorOpinion {
    /// The prior's calibrated score.
    pub score: f64,
    /// The category of the strongest signal that speaks for flakiness.
    pub category: Option<Category>,
}

/// The outcome of a vote.
#[derive(Debug, Clone, PartialEq)]
pub struct Vote {
    /// Without a prior, phi / (phi + psi): the flaky share of the 1/D-weighted vote, 0 with no
    /// neighbours. With one, the prior joins the vote as a pseudo-neighbour (see [`vote`]).
    pub score: f64,
    pub category: Option<Category>,
    pub flaky_neighbors: usize,
    /// The summed weight of the neighbours that voted; with a prior, 0 means the verdict rests on
    /// the signals alone.
    pub neighbor_weight: f64,
}

/// FLAST's vote. phi sums 1/D over flaky neighbours and psi over the others; the score is
/// phi / (phi + psi). When some neighbours are exact duplicates (D = 0), only they vote, with
/// equal weight, as scikit-learn's distance weighting does, instead of dividing by zero.
///
/// With a signal prior (a shipped model's estimate for unseen projects), neighbours vote with
/// weight 1/D - 1/[`VOTE_HORIZON`] (none beyond it) and the prior adds [`PRIOR_STRENGTH`] of
/// weight at its own score: near neighbours, as in a project's own history, outvote the prior;
/// far ones, as across projects, leave the verdict to it.
pub fn vote(ballots: &[Ballot<'_>], prior: Option<PriorOpinion>) -> Vote {
    let has_duplicate = ballots
        .iter()
        .any(|ballot| ballot.distance <= DUPLICATE_DISTANCE);
    let prior = prior.filter(|_| !has_duplicate);
    let weight = |ballot: &Ballot<'_>| {
        let duplicate = ballot.distance <= DUPLICATE_DISTANCE;
        match (has_duplicate, prior.is_some()) {
            (true, _) => f64::from(u8::from(duplicate)),
            (false, false) => 1.0 / ballot.distance,
            (false, true) => (1.0 / ballot.distance - 1.0 / VOTE_HORIZON).max(0.0),
        }
    };
    let (mut phi, mut psi) = (0.0, 0.0);
    let mut categories: HashMap<Category, (usize, f64)> = HashMap::new();
    let mut flaky_neighbors = 0;
    for ballot in ballots {
        let weight = weight(ballot);
        if ballot.flaky {
            phi += weight;
            flaky_neighbors += 1;
            for &category in ballot.categories {
                let tally = categories.entry(category).or_default();
                tally.0 += 1;
                tally.1 += weight;
            }
        } else {
            psi += weight;
        }
    }
    // Majority by count; ties go to the larger summed weight, then to the taxonomy's order.
    let neighbor_category = categories
        .into_iter()
        .filter(|(_, (_, weight))| *weight > 0.0)
        .max_by(|(a, (count_a, weight_a)), (b, (count_b, weight_b))| {
            count_a
                .cmp(count_b)
                .then(weight_a.total_cmp(weight_b))
                .then(b.cmp(a))
        })
        .map(|(category, _)| category);
    let neighbor_weight = phi + psi;
    let (score, category) = match prior {
        None => (
            if neighbor_weight > 0.0 {
                phi / neighbor_weight
            } else {
                0.0
            },
            neighbor_category,
        ),
        Some(prior) => {
            let prior_flaky = PRIOR_STRENGTH * prior.score;
            let score = (phi + prior_flaky) / (neighbor_weight + PRIOR_STRENGTH);
            // The category comes from whichever says more for flakiness: the flaky neighbours
            // or the signals.
            let category = if phi > prior_flaky {
                neighbor_category.or(prior.category)
            } else {
                prior.category.or(neighbor_category)
            };
            (score, category)
        }
    };
    Vote {
        score,
        category,
        flaky_neighbors,
        neighbor_weight,
    }
}

/// What a prior makes of a test's signals, in a project where signals are as common as
/// `prevalence` says: its score, and the risks that speak for flakiness (positive weight there),
/// strongest first.
pub fn prior_opinion(
    prior: &SignalPrior,
    signals: &Signals,
    prevalence: &Prevalence,
) -> (PriorOpinion, Vec<SignalHit>) {
    let weight = |hit: &SignalHit| prior.weight(hit.feature, prevalence);
    let mut evidence: Vec<SignalHit> = signals
        .risks
        .iter()
        .filter(|hit| weight(hit) > 0.0)
        .cloned()
        .collect();
    evidence.sort_by(|a, b| weight(b).total_cmp(&weight(a)));
    // A hit inside another on the same line (the `Duration::from_millis(200)` of a
    // `sleep(Duration::from_millis(200))`) is part of that one's evidence, not more of it.
    let found = evidence.clone();
    evidence.retain(|hit| {
        !found.iter().any(|other| {
            other.line == hit.line
                && other.text.len() > hit.text.len()
                && other.text.contains(hit.text.as_str())
        })
    });
    // The cause is the strongest evidence's category.
    let category = evidence.first().map(|hit| hit.category);
    let mut score = prior.score(signals, prevalence);
    if evidence.is_empty() {
        // A warning names its evidence: with no risk speaking for flakiness (a mitigation the
        // fit weighed positive, risks weighed negative) the prior says no more than it says of
        // a test with no signal at all.
        score = score.min(prior.score(&Signals::default(), prevalence));
    }
    let opinion = PriorOpinion { score, category };
    (opinion, evidence)
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
    let outcome = vote(&ballots, opinion);
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
        prior_score: opinion.map(|opinion| opinion.score),
        neighbor_weight: outcome.neighbor_weight,
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

    fn ballot(flaky: bool, distance: f64, categories: &'static [Category]) -> Ballot<'static> {
        Ballot {
            flaky,
            categories,
            distance,
        }
    }

    #[test]
    fn the_vote_weights_by_inverse_distance() {
        // phi = 1/0.1 = 10, psi = 1/0.5 + 1/0.5 = 4: score 10/14.
        let outcome = vote(
            &[
                ballot(true, 0.1, &[]),
                ballot(false, 0.5, &[]),
                ballot(false, 0.5, &[]),
            ],
            None,
        );
        assert!((outcome.score - 10.0 / 14.0).abs() < 1e-12);
        assert_eq!(outcome.flaky_neighbors, 1);
    }

    #[test]
    fn exact_duplicates_decide_alone_without_dividing_by_zero() {
        let outcome = vote(
            &[
                ballot(false, 0.0, &[]),
                ballot(true, 0.01, &[]),
                ballot(true, 0.02, &[]),
            ],
            None,
        );
        assert_eq!(outcome.score, 0.0);
        let outcome = vote(
            &[
                ballot(true, 0.0, &[]),
                ballot(false, 0.0, &[]),
                ballot(false, 0.3, &[]),
            ],
            None,
        );
        assert_eq!(outcome.score, 0.5);
        // A duplicate outvotes a prior too: a test a user marked not flaky stays unflagged.
        let prior = PriorOpinion {
            score: 0.99,
            category: Some(Category::AsyncWait),
        };
        assert_eq!(vote(&[ballot(false, 0.0, &[])], Some(prior)).score, 0.0);
    }

    #[test]
    fn no_neighbours_means_not_flaky() {
        assert_eq!(vote(&[], None).score, 0.0);
        assert_eq!(vote(&[], None).category, None);
    }

    #[test]
    fn the_category_is_the_flaky_neighbours_majority() {
        use Category::*;
        let outcome = vote(
            &[
                ballot(true, 0.3, &[AsyncWait]),
                ballot(true, 0.4, &[AsyncWait, Time]),
                ballot(true, 0.1, &[Network]),
                ballot(false, 0.05, &[Concurrency]),
            ],
            None,
        );
        assert_eq!(outcome.category, Some(AsyncWait));
        // A tie in count goes to the nearer (heavier) category.
        let outcome = vote(
            &[ballot(true, 0.3, &[Time]), ballot(true, 0.1, &[Network])],
            None,
        );
        assert_eq!(outcome.category, Some(Network));
        // A tie in count and weight is broken by the taxonomy's order, never by chance.
        let outcome = vote(
            &[ballot(true, 0.2, &[Time]), ballot(true, 0.2, &[Network])],
            None,
        );
        assert_eq!(outcome.category, Some(Network));
    }

    #[test]
    fn far_neighbours_leave_the_verdict_to_the_prior() {
        let prior = PriorOpinion {
            score: 0.97,
            category: Some(Category::AsyncWait),
        };
        let far: Vec<Ballot<'_>> = (0..7).map(|_| ballot(false, 0.5, &[])).collect();
        let outcome = vote(&far, Some(prior));
        assert_eq!(outcome.score, 0.97);
        assert_eq!(outcome.neighbor_weight, 0.0);
        assert_eq!(outcome.category, Some(Category::AsyncWait));
    }

    #[test]
    fn near_neighbours_outvote_the_prior() {
        let prior = PriorOpinion {
            score: 0.1,
            category: None,
        };
        let near: Vec<Ballot<'_>> = (0..7)
            .map(|_| ballot(true, 0.02, &[Category::Network]))
            .collect();
        let outcome = vote(&near, Some(prior));
        // Each neighbour weighs 1/0.02 - 1/0.25 = 46; the prior 10 at 0.1.
        let expected = (7.0 * 46.0 + 10.0 * 0.1) / (7.0 * 46.0 + 10.0);
        assert!((outcome.score - expected).abs() < 1e-9, "{}", outcome.score);
        assert_eq!(outcome.category, Some(Category::Network));
    }
}
