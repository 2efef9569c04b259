//! Leave one repository out on whole repositories ([`crate::fixes`]): each repository's tests
//! are judged by a signal prior fitted without it (on the labelled CSVs and the other
//! repositories), and the figures are those a user of that repository would see: the share of
//! its tests warned (the alarm rate) and the share of its tests later fixed for flakiness that
//! were flagged before their fix (the recall). Only the prior judges, through the same
//! [`predict::prior_opinion`] as `check` (no warning without evidence): across projects the
//! neighbours almost never come near enough to vote (models/README.md).

use rayon::prelude::*;
use serde::Serialize;

use crate::dataset::LabeledTest;
use crate::fixes::Repository;
use crate::language::Language;
use crate::predict;
use crate::prevalence::Prevalence;
use crate::prior::{Example, SignalPrior};
use crate::signals::{self, SignalHit, Signals};

/// What one held-out repository showed at each threshold.
#[derive(Debug, Clone, Serialize)]
pub struct RepositoryFigures {
    pub project: String,
    pub language: Language,
    /// Tests not known to be flaky (the snapshot's).
    pub tests: usize,
    /// Tests fixed for flakiness, as they were before their fix.
    pub fixed: usize,
    /// Per threshold (in the order given): snapshot tests flagged, fixed tests flagged.
    pub flagged: Vec<(usize, usize)>,
    /// Every test's verdict, for `eval --predictions`.
    #[serde(skip)]
    pub judged: Vec<JudgedTest>,
}

/// One test of a held-out repository as the prior judged it.
#[derive(Debug, Clone)]
pub struct JudgedTest {
    pub id: String,
    /// Fixed for flakiness (as it was before its fix), or a test of the snapshot.
    pub fixed: bool,
    pub score: f64,
    pub category: Option<crate::category::Category>,
    /// The evidence, strongest first, as `check` shows it.
    pub evidence: Vec<String>,
}

/// Judges every repository of `language` with a prior that did not see it, at each of `sigmas`.
pub fn leave_one_repository_out(
    language: Language,
    labelled: &[LabeledTest],
    repositories: &[Repository],
    sigmas: &[f64],
) -> Vec<RepositoryFigures> {
    let labelled: Vec<&LabeledTest> = labelled
        .iter()
        .filter(|test| test.language == language)
        .collect();
    let detected: Vec<Signals> = labelled
        .par_iter()
        .map(|test| signals::detect(language, &test.code))
        .collect();
    let repositories: Vec<&Repository> = repositories
        .iter()
        .filter(|repository| repository.language == language)
        .collect();
    repositories
        .par_iter()
        .map(|held_out| {
            let examples: Vec<Example<'_>> = labelled
                .iter()
                .zip(&detected)
                .map(|(test, signals)| Example::new(test, signals))
                .chain(
                    repositories
                        .iter()
                        .filter(|repository| repository.project != held_out.project)
                        .flat_map(|repository| &repository.tests)
                        .map(|test| Example::in_repository(&test.test, &test.signals)),
                )
                .collect();
            let (prior, _) = SignalPrior::fit(language, &examples);
            // The repository's own tests say how common each signal is in it, as a workspace
            // count does for a user.
            let prevalence: Prevalence = held_out
                .tests
                .iter()
                .map(|test| (language, &test.signals))
                .collect();
            let judged: Vec<JudgedTest> = held_out
                .tests
                .iter()
                .map(|test| {
                    let (opinion, evidence) =
                        predict::prior_opinion(&prior, &test.signals, &prevalence);
                    JudgedTest {
                        id: test.test.id.clone(),
                        fixed: test.test.flaky,
                        score: opinion.score,
                        category: opinion.category,
                        evidence: evidence.iter().map(SignalHit::evidence).collect(),
                    }
                })
                .collect();
            let fixed = judged.iter().filter(|test| test.fixed).count();
            RepositoryFigures {
                project: held_out.project.clone(),
                language,
                tests: judged.len() - fixed,
                fixed,
                flagged: sigmas
                    .iter()
                    .map(|&sigma| {
                        let count = |flaky: bool| {
                            judged
                                .iter()
                                .filter(|test| test.fixed == flaky && test.score > sigma)
                                .count()
                        };
                        (count(false), count(true))
                    })
                    .collect(),
                judged,
            }
        })
        .collect()
}
