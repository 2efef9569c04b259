//! Labels from verdicts: what `--record` writes for a test, and the evidence a flaky label
//! cites.

use super::{TestVerdict, Verdict};
use crate::category::Category;
use crate::confirm::condition::Condition;

/// A label a verdict gives a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelKind {
    /// Confirmed flaky, with its category and what showed it (`failed 7 of 20 runs under noise`).
    Flaky {
        category: Option<Category>,
        evidence: String,
    },
    /// No failure in `runs` runs.
    Stable { runs: u32 },
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
/// failure in its runs is stable ("not flaky after N runs"); a broken or unrun test gets none.
pub fn label_of(verdict: &TestVerdict) -> Option<LabelKind> {
    match verdict.verdict {
        Verdict::Flaky => Some(LabelKind::Flaky {
            category: verdict.category,
            evidence: evidence(verdict),
        }),
        Verdict::NoFlakinessSeen => Some(LabelKind::Stable {
            runs: verdict.passed,
        }),
        Verdict::Broken | Verdict::NotRun => None,
    }
}

/// `failed 7 of 20 runs under noise, 20 of 20 offline`: the exposing conditions' counts.
pub fn evidence(verdict: &TestVerdict) -> String {
    let parts: Vec<String> = verdict
        .exposed_by
        .iter()
        .filter_map(|condition| {
            verdict
                .tallies
                .iter()
                .find(|tally| tally.condition == *condition)
        })
        .map(|tally| {
            let decided = tally.passed + tally.failed;
            match tally.condition {
                Condition::Plain => format!("{} of {decided} runs plainly", tally.failed),
                Condition::Twice => {
                    format!("{} of {decided} runs twice in one process", tally.failed)
                }
                Condition::Offline => format!("{} of {decided} runs offline", tally.failed),
                condition => format!("{} of {decided} runs under {condition}", tally.failed),
            }
        })
        .collect();
    format!("failed {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confirm::outcome::Outcome;
    use crate::confirm::verdict::judge;
    use crate::confirm::verdict::tests::{case, tally};

    #[test]
    fn a_flaky_label_carries_its_category_and_evidence() {
        let pass = [case("t", Outcome::Passed, "")];
        let fail = [case("t", Outcome::Failed, "Connection refused")];
        let verdict = judge(
            vec![
                tally(Condition::Plain, &[&pass, &pass]),
                tally(Condition::Noise, &[&fail, &pass]),
            ],
            &[],
        );
        let Some(LabelKind::Flaky { category, evidence }) = label_of(&verdict) else {
            panic!("flaky");
        };
        assert_eq!(category, Some(Category::Network));
        assert_eq!(evidence, "failed 1 of 2 runs under noise");
    }
}
