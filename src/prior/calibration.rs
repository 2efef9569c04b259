//! Where the thresholds go (alarm rates on whole repositories, or the best Matthews
//! correlation and F1 on labelled tests), and which candidate penalty is kept.

use super::regression::Penalties;

/// A held-out probability, its label and how many tests it stands for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Prediction {
    pub(super) probability: f64,
    pub(super) flaky: bool,
    pub(super) count: f64,
}

/// The held-out predictions that have a probability, most probable first.
pub(super) fn ranked(predictions: &[Prediction]) -> Vec<Prediction> {
    let mut ranked: Vec<Prediction> = predictions
        .iter()
        .filter(|prediction| !prediction.probability.is_nan())
        .copied()
        .collect();
    ranked.sort_by(|a, b| b.probability.total_cmp(&a.probability));
    ranked
}

/// The probability above which at most `rate` of the tests lie: flagging
/// `probability > threshold` warns that share of the tests, or fewer where many tie.
pub(super) fn alarm_threshold(predictions: &[Prediction], rate: f64) -> Option<f64> {
    let ranked = ranked(predictions);
    let total: f64 = ranked.iter().map(|prediction| prediction.count).sum();
    let allowed = rate * total;
    let mut flagged = 0.0;
    for prediction in &ranked {
        flagged += prediction.count;
        if flagged > allowed {
            return Some(prediction.probability);
        }
    }
    ranked.last().map(|prediction| prediction.probability)
}

/// The share of flaky tests among `predictions` whose probability exceeds `threshold`.
pub(super) fn recall_above(predictions: &[Prediction], threshold: f64) -> f64 {
    let flaky = flaky_tests(predictions);
    let caught: f64 = predictions
        .iter()
        .filter(|prediction| prediction.flaky && prediction.probability > threshold)
        .map(|prediction| prediction.count)
        .sum();
    if flaky == 0.0 { 0.0 } else { caught / flaky }
}

/// Matthews correlation of confusion counts (true and false positives, false and true negatives).
pub(super) fn matthews(tp: f64, fp: f64, fn_: f64, tn: f64) -> f64 {
    let denominator = ((tp + fp) * (tp + fn_) * (tn + fp) * (tn + fn_)).sqrt();
    if denominator > 0.0 {
        (tp * tn - fp * fn_) / denominator
    } else {
        0.0
    }
}

/// F1 of confusion counts.
pub(super) fn f1(tp: f64, fp: f64, fn_: f64, _tn: f64) -> f64 {
    if tp > 0.0 {
        2.0 * tp / (2.0 * tp + fp + fn_)
    } else {
        0.0
    }
}

/// The threshold at or above `floor` whose `probability > threshold` rule scores highest on
/// `metric`, and that score.
pub(super) fn best_threshold(
    predictions: &[Prediction],
    floor: f64,
    metric: fn(f64, f64, f64, f64) -> f64,
) -> Option<(f64, f64)> {
    let sorted = ranked(predictions);
    let positives: f64 = sorted
        .iter()
        .filter(|prediction| prediction.flaky)
        .map(|prediction| prediction.count)
        .sum();
    let negatives = sorted
        .iter()
        .map(|prediction| prediction.count)
        .sum::<f64>()
        - positives;
    let (mut true_positives, mut false_positives) = (0.0, 0.0);
    let mut best: Option<(f64, f64)> = None;
    let mut index = 0;
    while index < sorted.len() {
        // Flag every prediction tied at this probability together.
        let threshold = sorted[index].probability;
        while index < sorted.len() && sorted[index].probability == threshold {
            if sorted[index].flaky {
                true_positives += sorted[index].count;
            } else {
                false_positives += sorted[index].count;
            }
            index += 1;
        }
        let next = sorted
            .get(index)
            .map_or(0.0, |prediction| prediction.probability);
        if next < floor {
            break;
        }
        let false_negatives = positives - true_positives;
        let true_negatives = negatives - false_positives;
        let value = metric(
            true_positives,
            false_positives,
            false_negatives,
            true_negatives,
        );
        if best.is_none_or(|(_, best_value)| value > best_value) {
            // Flagging means `probability > threshold`: put the threshold between this group and the next.
            best = Some(((threshold + next) / 2.0, value));
        }
    }
    best
}

/// A candidate penalty with the thresholds its held-out predictions gave, how well they did
/// (the recall of whole repositories' flaky tests at the warning threshold, or without them the
/// Matthews correlation) and the error of that score the choice allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    pub(super) penalty: Penalties,
    pub(super) information: f64,
    pub(super) warning: f64,
    pub(super) score: f64,
    pub(super) error: f64,
}

/// The simplest candidate whose score is within one standard error of the best (the "one
/// standard error rule" of Hastie, Tibshirani and Friedman, section 7.10): without projects'
/// intercepts before with them, then the stronger pull to zero. Held-out scores of fixtrain's
/// few hundred flaky tests differ by one test between candidates; the plain best flipped
/// Java's choice with a change to one rarely matched signal (models/HISTORY.md).
pub(super) fn simplest_within_noise(candidates: &[Candidate]) -> Option<Candidate> {
    let best = candidates
        .iter()
        .max_by(|a, b| a.score.total_cmp(&b.score))?;
    candidates
        .iter()
        .filter(|candidate| candidate.score >= best.score - best.error)
        .min_by(|a, b| {
            a.penalty
                .intercepts
                .is_some()
                .cmp(&b.penalty.intercepts.is_some())
                .then(b.penalty.weights.total_cmp(&a.penalty.weights))
        })
        .copied()
}

/// How many tests the flaky predictions stand for.
pub(super) fn flaky_tests(predictions: &[Prediction]) -> f64 {
    predictions
        .iter()
        .filter(|prediction| prediction.flaky)
        .map(|prediction| prediction.count)
        .sum()
}
