//! FLAST's distance-weighted vote of the k nearest labelled tests (Bertolino et al.,
//! Algorithm 1), with a shipped model's signal prior joining it as a pseudo-neighbour.

use std::collections::HashMap;

use crate::category::Category;
use crate::prevalence::Prevalence;
use crate::prior::SignalPrior;
use crate::signals::{SignalHit, Signals};

/// Two vectors this close are the same test: cosine distance is computed exactly for identical
/// vectors, and anything nearer than this is rounding.
const DUPLICATE_DISTANCE: f64 = 1e-9;

/// With a signal prior, neighbours at this cosine distance or farther do not vote. Measured on
/// leave-one-project-out runs: neighbours from other projects sit at 0.3 to 0.8 and their labels
/// carry no information there, while neighbours in the same project are far nearer.
pub const VOTE_HORIZON: f64 = 0.25;
/// With a signal prior, the prior weighs as much as this much neighbour weight (1/D - 1/H summed).
pub const PRIOR_STRENGTH: f64 = 10.0;

/// The prior's score of a test with a whole mechanism lies between these two, the lower the default
/// warning threshold: a warning needs a way for the test to fail ([`crate::signals::mechanism`]),
/// and the prior's own score ranks the warned tests.
pub const MECHANISM_FLOOR: f64 = 0.95;
pub const MECHANISM_CEILING: f64 = 0.99;
/// The prior's score of a test without a mechanism stays at or below this: its parts (a sleep, a
/// thread, a clock read) are information, never a warning by themselves.
pub const PARTS_CEILING: f64 = 0.9;

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
/// strongest first, settings after acts.
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
    // Acts first, the strongest first; what kind of test it is (an async test) after them.
    evidence.sort_by(|a, b| {
        a.setting
            .cmp(&b.setting)
            .then(weight(b).total_cmp(&weight(a)))
    });
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
    let mut score = prior.score(signals, prevalence);
    if evidence.is_empty() {
        // A warning names its evidence: with no risk speaking for flakiness (a mitigation the
        // fit weighed positive, risks weighed negative) the prior says no more than it says of
        // a test with no signal at all.
        score = score.min(prior.score(&Signals::default(), prevalence));
    }
    // A warning needs a whole mechanism: with one, the prior's score only ranks the test among
    // the warned; without one, its parts are at most information.
    let (score, category) = match signals.mechanisms.first() {
        Some(mechanism) => (
            MECHANISM_FLOOR + (MECHANISM_CEILING - MECHANISM_FLOOR) * score.clamp(0.0, 1.0),
            Some(mechanism.category),
        ),
        None => (
            score.min(PARTS_CEILING),
            evidence.first().map(|hit| hit.category),
        ),
    };
    let opinion = PriorOpinion { score, category };
    (opinion, evidence)
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
