//! Fisher's exact test, one-sided: whether one group of runs failed more often than another by a
//! margin their counts support, whatever their sizes (Fisher 1922; the test for two binomial
//! counts when the counts are small, as a few runs under each condition are).

/// The significance level of every comparison of counts: a condition is a cause when runs as
/// alike as plain ones would fail at least as often as it did with a probability of at most 5%.
pub const SIGNIFICANCE: f64 = 0.05;

/// Failed runs out of runs with an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub failed: u32,
    pub runs: u32,
}

impl Counts {
    pub fn new(failed: u32, runs: u32) -> Counts {
        Counts {
            failed: failed.min(runs),
            runs,
        }
    }

    pub fn pooled_with(self, other: Counts) -> Counts {
        Counts::new(
            self.failed.saturating_add(other.failed),
            self.runs.saturating_add(other.runs),
        )
    }
}

/// The one-sided p-value that `exposed` failed more often than `baseline` by chance alone: with
/// the failures of both groups fixed, the probability that `exposed`'s runs hold as many of them
/// as they do, or more (the hypergeometric tail). 1 when either group has no run, or `exposed`
/// no failure: counts that show nothing.
pub fn p_value(exposed: Counts, baseline: Counts) -> f64 {
    if exposed.runs == 0 || baseline.runs == 0 || exposed.failed == 0 {
        return 1.0;
    }
    let all = u64::from(exposed.runs) + u64::from(baseline.runs);
    let failures = u64::from(exposed.failed) + u64::from(baseline.failed);
    let drawn = u64::from(exposed.runs);
    let first = u64::from(exposed.failed);
    let last = failures.min(drawn);
    // The probability of exactly `first` failures among the drawn runs, then each next one from
    // the ratio of consecutive terms, which keeps every step in floating point's range.
    let mut term = (ln_choose(failures, first) + ln_choose(all - failures, drawn - first)
        - ln_choose(all, drawn))
    .exp();
    let mut sum = term;
    for x in first..last {
        let ratio = ((failures - x) * (drawn - x)) as f64
            / ((x + 1) * (all - failures - drawn + x + 1)) as f64;
        term *= ratio;
        sum += term;
    }
    sum.min(1.0)
}

/// Whether a p-value is significant at [`SIGNIFICANCE`] (p <= 5%, with room for rounding: three
/// failed runs of three against three passed ones give exactly 0.05).
pub fn significant(p_value: f64) -> bool {
    p_value <= SIGNIFICANCE * (1.0 + 1e-9)
}

/// ln of the binomial coefficient, as a sum of logarithms (exact enough for any count of runs).
fn ln_choose(n: u64, k: u64) -> f64 {
    let k = k.min(n - k);
    (1..=k)
        .map(|i| ((n - k + i) as f64).ln() - (i as f64).ln())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(failed: u32, runs: u32, base_failed: u32, base_runs: u32) -> f64 {
        p_value(
            Counts::new(failed, runs),
            Counts::new(base_failed, base_runs),
        )
    }

    #[test]
    fn p_values_are_the_hypergeometric_tail() {
        // scipy.stats.fisher_exact([[3, 0], [0, 3]], alternative="greater") is 0.05.
        assert!((p(3, 3, 0, 3) - 0.05).abs() < 1e-12);
        // 1 / C(40, 20): twenty of twenty against none of twenty.
        assert!((p(20, 20, 0, 20) - 1.0 / 137_846_528_820.0).abs() < 1e-18);
        // 1 - C(38, 20) / C(40, 20): one failure each.
        assert!((p(1, 20, 1, 20) - (1.0 - 380.0 / 1560.0)).abs() < 1e-12);
        // C(20, 5) / C(40, 5).
        assert!((p(5, 20, 0, 20) - 15_504.0 / 658_008.0).abs() < 1e-12);
        assert_eq!(p(0, 20, 5, 20), 1.0);
        assert_eq!(p(2, 2, 0, 0), 1.0);
        assert!(p(1_000, 1_000, 0, 1_000) < 1e-100);
    }

    #[test]
    fn the_margin_grows_with_the_plain_failures_and_shrinks_with_more_runs() {
        assert!(significant(p(3, 3, 0, 3)));
        assert!(!significant(p(2, 2, 0, 2)));
        assert!(!significant(p(1, 20, 1, 20)));
        assert!(!significant(p(4, 20, 0, 20)));
        assert!(significant(p(5, 20, 0, 20)));
        assert!(!significant(p(8, 20, 3, 20)));
        assert!(significant(p(12, 20, 3, 20)));
    }
}
