//! The facade both front ends call: a file's text and the models in, a judgement of each test out.
//! The language server and `flakesense check` differ only in how they present it.

use std::sync::Arc;

use crate::extract::{self, Extraction, TestMethod};
use crate::index::Index;
use crate::language::Language;
use crate::predict::{self, Prediction};
use crate::prevalence::Prevalence;

/// Files larger than this are skipped: generated code, not tests someone is writing.
pub const MAX_FILE_BYTES: usize = 2 * 1024 * 1024;

/// When a prediction is worth reporting, and how loudly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Neighbours that vote.
    pub k: usize,
    /// A score at or above this is a warning: the paper's precision setting. False alarms cost
    /// trust fast, so editors warn only here by default.
    pub warning: f64,
    /// A score above this and below `warning` is reported as information: the recall setting.
    pub information: f64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            k: 7,
            warning: 0.95,
            information: 0.5,
        }
    }
}

/// How loudly a test is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Information,
    Warning,
}

impl Thresholds {
    pub fn severity(&self, score: f64) -> Option<Severity> {
        if score >= self.warning {
            Some(Severity::Warning)
        } else if score > self.information {
            Some(Severity::Information)
        } else {
            None
        }
    }
}

/// The models a prediction consults: the shipped default of the language, the project's own
/// index, and any others the user configured. Neighbours are drawn from all of them at once.
#[derive(Debug, Clone, Default)]
pub struct Models {
    pub defaults: Vec<Arc<Index>>,
    pub project: Option<Arc<Index>>,
    pub extra: Vec<Arc<Index>>,
    /// How common each signal is among the project's tests; a shipped model's prior weighs
    /// signals by it. Empty until the project's tests are known: the prior then assumes the
    /// typical project of its training data.
    pub prevalence: Arc<Prevalence>,
}

impl Models {
    /// Whether a model weighs signals by how common they are in the project (a signal prior).
    pub fn has_prior(&self) -> bool {
        self.defaults
            .iter()
            .chain(&self.project)
            .chain(&self.extra)
            .any(|index| !index.params().priors.is_empty())
    }

    /// The models that hold tests of `language`.
    pub fn for_language(&self, language: Language) -> Vec<&Index> {
        self.defaults
            .iter()
            .chain(&self.project)
            .chain(&self.extra)
            .map(|index| &**index)
            .filter(|index| {
                index
                    .entries()
                    .iter()
                    .any(|entry| entry.language == language)
                    || index.is_empty()
            })
            .collect()
    }
}

/// A test and what the models say about it.
#[derive(Debug, Clone)]
pub struct TestReport {
    pub test: TestMethod,
    pub prediction: Prediction,
    /// `None` when the test is not reported: below the thresholds, or marked `flakesense: ignore`.
    pub severity: Option<Severity>,
}

/// Judges one test's code.
pub fn judge(
    models: &Models,
    thresholds: &Thresholds,
    language: Language,
    code: &str,
) -> Prediction {
    let indexes = models.for_language(language);
    predict::predict(
        &indexes,
        language,
        code,
        predict::Settings {
            k: thresholds.k,
            sigma: thresholds.information,
        },
        &models.prevalence,
    )
}

/// Judges every test of an extraction.
pub fn judge_tests(
    models: &Models,
    thresholds: &Thresholds,
    extraction: Extraction,
) -> Vec<TestReport> {
    extraction
        .tests
        .into_iter()
        .map(|test| {
            let prediction = judge(models, thresholds, test.language, &test.code);
            let severity = if test.ignored {
                None
            } else {
                thresholds.severity(prediction.score)
            };
            TestReport {
                test,
                prediction,
                severity,
            }
        })
        .collect()
}

/// Extracts, by the project's rules in `discovery`, and judges the tests of a file's text.
pub fn analyze_source(
    models: &Models,
    thresholds: &Thresholds,
    language: Language,
    path: &str,
    source: &str,
    discovery: &extract::Discovery,
) -> (Vec<TestReport>, bool) {
    let extraction = extract::extract_tests_with(language, path, source, discovery);
    let has_syntax_errors = extraction.has_syntax_errors;
    (
        judge_tests(models, thresholds, extraction),
        has_syntax_errors,
    )
}
