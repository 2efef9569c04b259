//! Fitting a prior: the regression fitted on every penalty with each project held out in
//! turn, and the simplest that does as well as the best kept.

use std::collections::BTreeMap;
use std::ops::Range;

use rayon::prelude::*;

use super::calibration::{Candidate, Choice, Prediction, simplest_within_noise};
use super::projects::{Group, ProjectTally, group, tally, typical_shares};
use super::regression::{Penalties, fit_logistic_capped};
use super::*;

impl SignalPrior {
    /// Fits the prior on labelled tests of many projects, and calibrates its warning threshold
    /// on predictions for projects held out of the fit. Also returns the candidate penalties
    /// with their held-out scores, and the one kept.
    pub fn fit(language: Language, examples: &[Example<'_>]) -> (SignalPrior, Choice) {
        let names = signals::feature_names(language);
        // Risks in the test and risks in its context; mitigations follow them, then the size.
        let risks = 2 * signals::patterns(language).count();
        let mitigations = risks..risks + signals::catalogue(language).mitigations().count();
        // A project with flaky tests only (a list of known flaky tests) says nothing about how
        // often a signal sits in stable code, so it stays out of the fit; its tests remain
        // neighbours in the index. Leaving it out raised the held-out recall of Java's fixtrain
        // repositories from 21.5% to 23.9% at the same 3% alarm rate (`flakesense eval --fixes`,
        // measured with a temporary switch that was not kept). Every flaky test left then comes
        // from a project whose shares are known, so the share weights can be learned.
        let mut groups = group(examples);
        let tallies = tally(&names[..risks], &groups);
        groups.retain(|group| tallies[group.example.project].stable);
        let scaled = if groups.iter().any(|group| group.example.flaky) {
            risks
        } else {
            0
        };
        // Choose the penalties (and whether projects get intercepts of their own) and the
        // thresholds on predictions for held-out projects, then fit on everything with those
        // penalties. With whole repositories in the data, the thresholds are where their held-out
        // tests would be warned at the alarm rates above, and the penalties are judged by how many
        // of their flaky tests they catch up to the information threshold's rate; without, the
        // thresholds are those of the best Matthews correlation and F1, as for FLAST's data, and
        // the penalties are judged by it.
        let whole = examples.iter().any(|example| example.whole_repository);
        let candidates = L2_PENALTIES.iter().flat_map(|&weights| {
            [None, Some(INTERCEPT_PENALTY)].map(|intercepts| Penalties {
                weights,
                intercepts,
            })
        });
        let scored: Vec<Candidate> = candidates
            .filter_map(|penalty| {
                let HeldOut {
                    probabilities,
                    judged,
                } = held_out_predictions(&names, scaled, &mitigations, &tallies, &groups, penalty)?;
                if whole {
                    // A test with no risk speaking for flakiness is never flagged (`check`'s
                    // evidence rule), so it must not fill an alarm rate's share: a long test
                    // with no risk would stop the information threshold above tests with a
                    // weak risk (see models/HISTORY.md for what this changed).
                    let repositories: Vec<Prediction> = judged
                        .iter()
                        .zip(&groups)
                        .filter(|(_, group)| group.example.whole_repository)
                        .map(|(prediction, _)| *prediction)
                        .collect();
                    Candidate::on_repositories(penalty, &repositories)
                } else {
                    Candidate::on_labelled(penalty, &probabilities)
                }
            })
            .collect();
        let chosen = simplest_within_noise(&scored);
        let (penalty, information_probability, warning_probability) = chosen.map_or(
            (
                Penalties {
                    weights: L2_PENALTIES[0],
                    intercepts: None,
                },
                0.5,
                0.95,
            ),
            |chosen| (chosen.penalty, chosen.information, chosen.warning),
        );
        let typical = typical_shares(&tallies, None);
        let rows = design(&names, scaled, &tallies, &typical, &groups);
        let (rows, intercepts) = with_intercepts(rows, &groups, names.len() + scaled, penalty);
        let (bias, weights) = fit_logistic_capped(
            &aggregate(rows.iter().zip(&groups)),
            intercepts.end,
            penalty,
            &capped(&mitigations, names.len(), scaled),
            &intercepts,
        );
        // Where the held-out tests that can be warned are fewer than a threshold's share, it
        // falls to the level of a test with no risk; a test with no signal at all must still
        // stay at or below it, or every test of a project would be flagged.
        let nothing = sigmoid(bias);
        let information_probability = information_probability.max(nothing);
        let warning_probability = warning_probability.max(information_probability);
        let named = |names: &[&str], weights: &[f64]| -> Vec<(String, f64)> {
            names
                .iter()
                .map(|name| name.to_string())
                .zip(weights.iter().copied())
                .collect()
        };
        let prior = SignalPrior {
            language,
            bias,
            weights: named(&names, &weights[..names.len()]),
            share_weights: named(&names[..scaled], &weights[names.len()..]),
            typical_shares: named(&names[..scaled], &typical[..scaled]),
            information_probability,
            warning_probability,
            category_evidence: Vec::new(),
        };
        let choice = Choice {
            candidates: scored,
            kept: chosen,
        };
        (prior, choice)
    }
}

/// The features whose weight must not be positive: the mitigations, and the `scaled` share
/// features after the plain `features`.
fn capped(mitigations: &Range<usize>, features: usize, scaled: usize) -> [Range<usize>; 2] {
    [mitigations.clone(), features..features + scaled]
}

/// The regression's rows: each risk and mitigation found (1), then each of the first `scaled`
/// features (risks) found times its share among its project's tests.
pub(super) fn design(
    names: &[&str],
    scaled: usize,
    tallies: &BTreeMap<&str, ProjectTally>,
    typical: &[f64],
    groups: &[Group<'_>],
) -> Vec<Vec<(usize, f64)>> {
    let shares: BTreeMap<&str, Vec<f64>> = tallies
        .iter()
        .map(|(project, tally)| {
            let shares = if tally.stable {
                tally
                    .hits
                    .iter()
                    .zip(typical)
                    .map(|(&hits, &typical)| shrunk(hits, tally.tests, typical))
                    .collect()
            } else {
                typical.to_vec()
            };
            (*project, shares)
        })
        .collect();
    groups
        .iter()
        .map(|Group { example, .. }| {
            let found = |i: &usize| example.hits.contains(&names[*i]);
            let plain = (0..names.len()).filter(found).map(|i| (i, 1.0));
            let relative = (0..scaled)
                .filter(found)
                .map(|i| (names.len() + i, shares[example.project][i]));
            plain.chain(relative).collect()
        })
        .collect()
}

/// Where `penalty` gives projects intercepts of their own, one feature per project after the
/// `base` features, set in its tests' rows; the range of those features (empty without). A
/// project held out of a fit has no rows there, so its intercept stays at zero: an unseen
/// project is judged at the bias.
fn with_intercepts(
    mut rows: Vec<Vec<(usize, f64)>>,
    groups: &[Group<'_>],
    base: usize,
    penalty: Penalties,
) -> (Vec<Vec<(usize, f64)>>, Range<usize>) {
    if penalty.intercepts.is_none() {
        return (rows, base..base);
    }
    let mut projects: Vec<&str> = groups.iter().map(|group| group.example.project).collect();
    projects.sort_unstable();
    projects.dedup();
    for (row, group) in rows.iter_mut().zip(groups) {
        let index = projects.binary_search(&group.example.project).unwrap_or(0);
        row.push((base + index, 1.0));
    }
    (rows, base..base + projects.len())
}

/// Identical rows of the same label, counted: most tests have the same few signals, so a fit
/// over distinct rows is many times faster than one over tests.
pub(super) type Aggregated = Vec<(Vec<(usize, f64)>, bool, f64)>;

/// A row by the bits of its values, and its label: what identical rows share.
type RowKey = (Vec<(usize, u64)>, bool);

pub(super) fn aggregate<'r, 'e: 'r>(
    rows: impl Iterator<Item = (&'r Vec<(usize, f64)>, &'r Group<'e>)>,
) -> Aggregated {
    let mut counts: BTreeMap<RowKey, (Vec<(usize, f64)>, f64)> = BTreeMap::new();
    for (row, group) in rows {
        let key = (
            row.iter().map(|&(i, x)| (i, x.to_bits())).collect(),
            group.example.flaky,
        );
        counts.entry(key).or_insert_with(|| (row.clone(), 0.0)).1 += group.count;
    }
    counts
        .into_iter()
        .map(|((_, flaky), (row, count))| (row, flaky, count))
        .collect()
}

/// For every group (in order), the probability a fit with `penalty` that did not see its project
/// gives it; groups of projects without both flaky and other tests get none (NaN). `None` with
/// fewer than two projects with both.
pub(super) fn held_out_predictions(
    names: &[&'static str],
    scaled: usize,
    mitigations: &Range<usize>,
    tallies: &BTreeMap<&str, ProjectTally>,
    groups: &[Group<'_>],
    penalty: Penalties,
) -> Option<HeldOut> {
    // Only projects with both flaky and other tests can show where the line between them lies;
    // each is held out in turn, as the leave-one-project-out protocol does. Sets of flaky tests
    // alone (IDoFT, FlakyCat) always stay in the fit: they still teach the regression.
    let risks = mitigations.start;
    let mixed: Vec<&str> = tallies
        .iter()
        .filter(|(_, tally)| tally.stable && tally.flaky)
        .map(|(project, _)| *project)
        .collect();
    if mixed.len() < 2 {
        return None;
    }
    let mut probabilities: Vec<Prediction> = groups
        .iter()
        .map(|group| Prediction {
            probability: f64::NAN,
            flaky: group.example.flaky,
            count: group.count,
        })
        .collect();
    let mut judged = probabilities.clone();
    let held_out: Vec<Vec<(usize, f64, f64)>> = mixed
        .par_iter()
        .map(|held_out| {
            // The typical shares, too, come from the projects of the fit only.
            let typical = typical_shares(tallies, Some(held_out));
            let rows = design(names, scaled, tallies, &typical, groups);
            let (rows, intercepts) = with_intercepts(rows, groups, names.len() + scaled, penalty);
            let training = aggregate(
                rows.iter()
                    .zip(groups)
                    .filter(|(_, group)| group.example.project != *held_out),
            );
            let (bias, weights) = fit_logistic_capped(
                &training,
                intercepts.end,
                penalty,
                &capped(mitigations, names.len(), scaled),
                &intercepts,
            );
            // With no risk speaking for flakiness, `check` gives a test no more than it gives a
            // test with no signal at all.
            let nothing = sigmoid(bias);
            rows.iter()
                .zip(groups)
                .enumerate()
                .filter(|(_, (_, group))| group.example.project == *held_out)
                .map(|(position, (row, _))| {
                    let probability =
                        sigmoid(bias + row.iter().map(|&(i, x)| weights[i] * x).sum::<f64>());
                    let judged = if has_evidence(row, &weights, names.len(), risks) {
                        probability
                    } else {
                        probability.min(nothing)
                    };
                    (position, probability, judged)
                })
                .collect()
        })
        .collect();
    for (position, probability, as_judged) in held_out.into_iter().flatten() {
        probabilities[position].probability = probability;
        judged[position].probability = as_judged;
    }
    Some(HeldOut {
        probabilities,
        judged,
    })
}

/// Every group's held-out prediction (NaN for groups of projects without both flaky and other
/// tests), as the regression gives it and as `check` judges it.
pub(super) struct HeldOut {
    pub(super) probabilities: Vec<Prediction>,
    pub(super) judged: Vec<Prediction>,
}

/// Whether a design row has a risk whose weight, with its share weight times its share, speaks
/// for flakiness: what `check` shows as evidence ([`crate::predict::prior_opinion`]). Risks are
/// the first `risks` features; a share feature sits `features` after its risk.
pub(super) fn has_evidence(
    row: &[(usize, f64)],
    weights: &[f64],
    features: usize,
    risks: usize,
) -> bool {
    row.iter().filter(|&&(i, _)| i < risks).any(|&(i, _)| {
        let share = row
            .iter()
            .find(|&&(j, _)| j == features + i)
            .map_or(0.0, |&(j, x)| weights[j] * x);
        weights[i] + share > 0.0
    })
}
