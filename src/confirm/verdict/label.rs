//! Labels from verdicts: what `--record` writes for a test, the evidence a flaky label cites, and
//! how many passing runs a stable label needs.

use super::{CategoryFrom, TestVerdict, Verdict};
use crate::category::Category;
use crate::confirm::condition::Condition;

/// The passing runs a stable label needs: the fewest after which a test that fails 5% of its
/// runs would have failed at least once with 95% confidence (0.95^59 = 0.048 <= 0.05 <
/// 0.95^58 = 0.051). Runs under every condition count, each once (a `twice` run is one run),
/// and only runs with a result.
pub const STABLE_RUNS: u32 = 59;

/// A label a verdict gives a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelKind {
    /// Confirmed flaky, with its category and what showed it (`failed 7 of 20 runs under noise`).
    /// The category is kept only where runs support it (a condition, or the failure messages),
    /// not where it is only the code's suspicion.
    Flaky {
        category: Option<Category>,
        evidence: String,
    },
    /// No failure in `runs` runs, at least [`STABLE_RUNS`].
    Stable { runs: u32 },
}

/// Why a verdict gives no label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoLabel {
    Broken,
    NotRun,
    /// No failure, but fewer passing runs than [`STABLE_RUNS`].
    TooFewRuns {
        passed: u32,
    },
}

impl NoLabel {
    /// The reason, in words.
    pub fn reason(&self) -> String {
        match self {
            NoLabel::Broken => "broken, not flaky: it failed every run".to_string(),
            NoLabel::NotRun => "no run gave it a result".to_string(),
            NoLabel::TooFewRuns { passed } => format!(
                "{passed} passing run{}; a stable label needs {STABLE_RUNS} (a test failing 5% of its runs fails within {STABLE_RUNS} with 95% confidence)",
                if *passed == 1 { "" } else { "s" }
            ),
        }
    }
}

/// What `--record` writes for one test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The test as extraction found it: the label store tokenises it as `train --repo` does.
    pub test: crate::extract::TestMethod,
    /// The file, relative to the workspace root, `/`-separated.
    pub path: String,
    pub kind: LabelKind,
}

impl LabelKind {
    /// The `source` an index entry keeps: where the label comes from, in words.
    pub fn source(&self) -> String {
        match self {
            LabelKind::Flaky { evidence, .. } => format!("confirm: {evidence}"),
            LabelKind::Stable { runs } => format!("confirm: not flaky after {runs} runs"),
        }
    }
}

/// The label of a verdict: a confirmed flaky test is flaky with its category, a test with no
/// failure in at least [`STABLE_RUNS`] runs is stable ("not flaky after N runs"); a broken or
/// unrun test, or one with too few runs, gets none, and the reason says why.
pub fn label_of(verdict: &TestVerdict) -> Result<LabelKind, NoLabel> {
    match verdict.verdict {
        Verdict::Flaky => Ok(LabelKind::Flaky {
            category: verdict
                .category
                .filter(|_| verdict.category_from != Some(CategoryFrom::Code)),
            evidence: evidence(verdict),
        }),
        Verdict::NoFlakinessSeen if verdict.passed >= STABLE_RUNS => Ok(LabelKind::Stable {
            runs: verdict.passed,
        }),
        Verdict::NoFlakinessSeen => Err(NoLabel::TooFewRuns {
            passed: verdict.passed,
        }),
        Verdict::Broken => Err(NoLabel::Broken),
        Verdict::NotRun => Err(NoLabel::NotRun),
    }
}

/// `failed 7 of 20 runs under noise, 20 of 20 offline`: the causing conditions' counts; where no
/// condition is a cause, the counts of every condition the test failed under.
pub fn evidence(verdict: &TestVerdict) -> String {
    let shown: Vec<&super::Tally> = if verdict.exposed_by.is_empty() {
        verdict
            .tallies
            .iter()
            .filter(|tally| tally.failed > 0)
            .collect()
    } else {
        verdict
            .exposed_by
            .iter()
            .filter_map(|condition| {
                verdict
                    .tallies
                    .iter()
                    .find(|tally| tally.condition == *condition)
            })
            .collect()
    };
    let parts: Vec<String> = shown
        .into_iter()
        .map(|tally| {
            let decided = tally.decided();
            match tally.condition {
                Condition::Plain => format!("failed {} of {decided} runs plainly", tally.failed),
                Condition::Twice if tally.non_idempotent > 0 => format!(
                    "passed then failed in one process in {} of {} runs",
                    tally.non_idempotent, tally.first_passed
                ),
                Condition::Twice => {
                    format!(
                        "failed {} of {decided} runs twice in one process",
                        tally.failed
                    )
                }
                Condition::Offline => format!("failed {} of {decided} runs offline", tally.failed),
                condition => format!(
                    "failed {} of {decided} runs under {condition}",
                    tally.failed
                ),
            }
        })
        .collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confirm::outcome::Outcome;
    use crate::confirm::verdict::judge;
    use crate::confirm::verdict::tests::{case, tally};

    #[test]
    fn fifty_nine_runs_would_show_a_five_percent_flake_rate_with_95_percent_confidence() {
        assert!(0.95f64.powi(STABLE_RUNS as i32) <= 0.05);
        assert!(0.95f64.powi(STABLE_RUNS as i32 - 1) > 0.05);
    }

    #[test]
    fn a_flaky_label_carries_its_category_and_evidence() {
        let pass = [case("t", Outcome::Passed, "")];
        let fail = [case("t", Outcome::Failed, "Connection refused")];
        let verdict = judge(
            vec![
                tally(Condition::Plain, &[&pass, &pass, &pass]),
                tally(Condition::Noise, &[&fail, &fail, &fail]),
            ],
            &[],
        );
        let Ok(LabelKind::Flaky { category, evidence }) = label_of(&verdict) else {
            panic!("flaky: {verdict:?}");
        };
        assert_eq!(category, Some(Category::Network));
        assert_eq!(evidence, "failed 3 of 3 runs under noise");
    }
}
