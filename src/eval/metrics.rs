//! Confusion counts and the figures derived from them.

use serde::Serialize;

/// True and false positives and negatives, and how well the categories of true positives were guessed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub true_positives: usize,
    pub false_positives: usize,
    pub false_negatives: usize,
    pub true_negatives: usize,
    /// True positives whose true categories are known.
    pub categorised_true_positives: usize,
    /// ... and whose predicted category is among them.
    pub category_hits: usize,
    /// Flagged tests (true or false positives) given a category rather than "cause unknown".
    pub flagged_with_category: usize,
}

impl Counts {
    pub fn record(&mut self, actual: bool, predicted: bool) {
        match (actual, predicted) {
            (true, true) => self.true_positives += 1,
            (false, true) => self.false_positives += 1,
            (true, false) => self.false_negatives += 1,
            (false, false) => self.true_negatives += 1,
        }
    }

    pub fn add(&mut self, other: &Counts) {
        self.true_positives += other.true_positives;
        self.false_positives += other.false_positives;
        self.false_negatives += other.false_negatives;
        self.true_negatives += other.true_negatives;
        self.categorised_true_positives += other.categorised_true_positives;
        self.category_hits += other.category_hits;
        self.flagged_with_category += other.flagged_with_category;
    }

    pub fn total(&self) -> usize {
        self.true_positives + self.false_positives + self.false_negatives + self.true_negatives
    }

    pub fn flaky(&self) -> usize {
        self.true_positives + self.false_negatives
    }

    pub fn figures(&self) -> Figures {
        let (tp, fp, fn_, tn) = (
            self.true_positives as f64,
            self.false_positives as f64,
            self.false_negatives as f64,
            self.true_negatives as f64,
        );
        let ratio = |numerator: f64, denominator: f64| {
            if denominator > 0.0 {
                numerator / denominator
            } else {
                0.0
            }
        };
        let precision = ratio(tp, tp + fp);
        let recall = ratio(tp, tp + fn_);
        let f1 = ratio(2.0 * precision * recall, precision + recall);
        let mcc = ratio(
            tp * tn - fp * fn_,
            ((tp + fp) * (tp + fn_) * (tn + fp) * (tn + fn_)).sqrt(),
        );
        let prevalence = ratio(tp + fn_, tp + fp + fn_ + tn);
        Figures {
            precision,
            recall,
            f1,
            mcc,
            lift: ratio(precision, prevalence),
            category_accuracy: (self.categorised_true_positives > 0).then(|| {
                ratio(
                    self.category_hits as f64,
                    self.categorised_true_positives as f64,
                )
            }),
            category_coverage: ratio(self.flagged_with_category as f64, tp + fp),
        }
    }
}

/// Precision, recall, F1, Matthews correlation, lift and category accuracy. A ratio with a zero
/// denominator is 0, as scikit-learn reports it with `zero_division=0`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Figures {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub mcc: f64,
    /// Precision divided by the share of flaky tests: how much better than picking at random.
    pub lift: f64,
    /// A_FC: the share of correctly flagged tests with known categories whose predicted category
    /// is among them; absent when there are none.
    pub category_accuracy: Option<f64>,
    /// The share of flagged tests given a category at all (the rest are "cause unknown").
    pub category_coverage: f64,
}

/// The mean and the median of a list of figures, field by field. Category accuracy is
/// summarised over the figures that have one.
pub fn mean_and_median(figures: &[Figures]) -> (Figures, Figures) {
    let summary = |values: Vec<f64>| (mean(&values), median(values));
    let precision = summary(figures.iter().map(|f| f.precision).collect());
    let recall = summary(figures.iter().map(|f| f.recall).collect());
    let f1 = summary(figures.iter().map(|f| f.f1).collect());
    let mcc = summary(figures.iter().map(|f| f.mcc).collect());
    let lift = summary(figures.iter().map(|f| f.lift).collect());
    let coverage = summary(figures.iter().map(|f| f.category_coverage).collect());
    let categorised: Vec<f64> = figures.iter().filter_map(|f| f.category_accuracy).collect();
    let category = (!categorised.is_empty()).then(|| summary(categorised));
    let build = |pick: fn((f64, f64)) -> f64| Figures {
        precision: pick(precision),
        recall: pick(recall),
        f1: pick(f1),
        mcc: pick(mcc),
        lift: pick(lift),
        category_accuracy: category.map(pick),
        category_coverage: pick(coverage),
    };
    (build(|pair| pair.0), build(|pair| pair.1))
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_follow_their_definitions() {
        let counts = Counts {
            true_positives: 6,
            false_positives: 2,
            false_negatives: 4,
            true_negatives: 88,
            ..Counts::default()
        };
        let figures = counts.figures();
        assert_eq!(figures.precision, 0.75);
        assert_eq!(figures.recall, 0.6);
        assert!((figures.f1 - 2.0 * 0.75 * 0.6 / 1.35).abs() < 1e-12);
        let mcc = (6.0 * 88.0 - 2.0 * 4.0) / (8.0f64 * 10.0 * 90.0 * 92.0).sqrt();
        assert!((figures.mcc - mcc).abs() < 1e-12);
        assert!((figures.lift - 0.75 / 0.1).abs() < 1e-12);
        assert_eq!(figures.category_accuracy, None);
    }

    #[test]
    fn empty_denominators_give_zero_not_nan() {
        let figures = Counts {
            true_negatives: 5,
            ..Counts::default()
        }
        .figures();
        assert_eq!(
            (
                figures.precision,
                figures.recall,
                figures.f1,
                figures.mcc,
                figures.lift
            ),
            (0.0, 0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn mean_and_median_per_field() {
        let figures: Vec<Figures> = [0.2, 0.4, 0.9]
            .iter()
            .map(|&f1| Figures {
                f1,
                category_accuracy: (f1 > 0.3).then_some(f1),
                ..Figures::default()
            })
            .collect();
        let (mean, median) = mean_and_median(&figures);
        assert!((mean.f1 - 0.5).abs() < 1e-12);
        assert_eq!(median.f1, 0.4);
        assert_eq!(median.category_accuracy, Some((0.4 + 0.9) / 2.0));
    }
}
