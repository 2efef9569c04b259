//! The facade both front ends call: a file's text and the models in, a judgement of each test out.
//! The language server and `flakesense check` differ only in how they present it.

use std::sync::Arc;

use rayon::prelude::*;

use crate::extract::{self, TestMethod};
use crate::index::Index;
use crate::language::Language;
use crate::predict::{self, Prediction};
use crate::prevalence::Prevalence;
use crate::signals::{self, Signals};

/// Files larger than this are skipped: generated code, not tests someone is writing.
pub const MAX_FILE_BYTES: usize = 2 * 1024 * 1024;

mod in_context;

pub use in_context::{
    ParsedFile, SourceTree, base_files, other_files, resolver, signals_in_context, signals_of,
};

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

/// The hint at a fix for a judged test, one wording everywhere, phrased for `language`'s tests:
/// the fix of its first mechanism, else of its strongest signal, else of its category; for a test
/// judged by its neighbours alone, the known flaky test it resembles; else general advice.
pub fn hint(language: Language, prediction: &Prediction) -> String {
    if let Some(fix) = prediction
        .mechanisms
        .first()
        .and_then(|mechanism| signals::mechanism_fix(language, mechanism.id))
    {
        return fix.to_string();
    }
    if let Some(fix) = prediction
        .signals
        .first()
        .and_then(|hit| signals::fix(language, hit.id))
    {
        return fix.to_string();
    }
    if let Some(category) = prediction.category {
        return category.fix_hint(Some(language)).to_string();
    }
    match prediction.neighbors.iter().find(|neighbor| neighbor.flaky) {
        Some(twin) => format!(
            "It resembles `{}` ({}), a test known to be flaky: read what made that one flaky, and confirm this one by running it many times (`flakesense confirm --test ...`).",
            twin.id, twin.project
        ),
        None => GENERAL_HINT.to_string(),
    }
}

/// The hint for a test whose flakiness has no known cause.
pub const GENERAL_HINT: &str = "Consider what the test waits for or shares with other tests (time, threads, network, files, global state), and confirm by rerunning it many times.";

/// A score as every output writes it: two decimals, cut rather than rounded, so that a score
/// below a threshold never reads as the threshold itself (0.4959, not flagged at 0.5, is
/// "0.49", not "0.50"; 0.9999 is "0.99", never a certain "1.00").
pub fn score_text(score: f64) -> String {
    // Rounded at the ninth decimal first, so that a score of exactly 0.95 (stored as
    // 0.94999999999999996) still reads 0.95.
    let text = format!("{score:.9}");
    match text.split_once('.') {
        Some((whole, decimals)) => format!("{whole}.{}", &decimals[..2]),
        None => text,
    }
}

/// How alike two tests are, as every output shows it: 1 - the cosine distance of their vectors.
pub fn similarity(neighbor: &predict::Neighbor) -> f64 {
    1.0 - neighbor.distance
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
            .filter(|index| index.has_language(language) || index.is_empty())
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

/// Judges one test: its code finds the neighbours, its signals (see [`signals_of`]) feed the
/// prior.
pub fn judge(
    models: &Models,
    thresholds: &Thresholds,
    language: Language,
    code: &str,
    signals: &Signals,
) -> Prediction {
    let indexes = models.for_language(language);
    predict::predict(
        &indexes,
        language,
        code,
        signals,
        predict::Settings {
            k: thresholds.k,
            sigma: thresholds.information,
        },
        &models.prevalence,
    )
}

/// Judges one test's code out of its file (a snippet, a labelled example): its signals are
/// those of its own code alone.
pub fn judge_code(
    models: &Models,
    thresholds: &Thresholds,
    language: Language,
    code: &str,
) -> Prediction {
    let signals = signals::detect(language, code);
    judge(models, thresholds, language, code, &signals)
}

/// A file with at least this many tests is judged on every core: the search of each test's
/// neighbours is most of the time an editor waits for a large file's first diagnostics. Fewer
/// are judged on the calling thread, which spares a short check the start of a thread pool.
const PARALLEL_TESTS: usize = 32;

/// Judges tests of one file, each with its signals, in their order.
pub fn judge_tests(
    models: &Models,
    thresholds: &Thresholds,
    tests: Vec<TestMethod>,
    signals: &[Signals],
) -> Vec<TestReport> {
    let codes: Vec<(Language, &str)> = tests
        .iter()
        .map(|test| (test.language, test.code.as_str()))
        .collect();
    let signals: Vec<&Signals> = signals.iter().collect();
    let predictions = judge_all(models, thresholds, &codes, &signals);
    tests
        .into_iter()
        .zip(predictions)
        .map(|(test, prediction)| {
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

/// Judges each test code with the signals of the same place in `signals`, in their order: on
/// every core when there are [`PARALLEL_TESTS`] or more.
pub fn judge_all(
    models: &Models,
    thresholds: &Thresholds,
    codes: &[(Language, &str)],
    signals: &[&Signals],
) -> Vec<Prediction> {
    let one = |(&(language, code), signals): (&(Language, &str), &&Signals)| {
        judge(models, thresholds, language, code, signals)
    };
    if codes.len() >= PARALLEL_TESTS {
        codes.par_iter().zip(signals).map(one).collect()
    } else {
        codes.iter().zip(signals).map(one).collect()
    }
}

/// What reading a file's tests takes from its workspace: how the test runner finds tests there,
/// for Python the `conftest.py` files that apply to it, nearest first, and where the other files
/// its code reaches are found (none: the file is read alone, as counting signal shares does).
#[derive(Debug, Clone, Default)]
pub struct Surroundings {
    pub discovery: Arc<extract::Discovery>,
    pub conftests: Vec<Arc<ParsedFile>>,
    pub others: Option<Arc<crate::workspace::OtherFiles>>,
}

impl Surroundings {
    /// The other files of the workspace that the `language` file at `path` reaches, read as its
    /// text `source` (parsed as `tree`) uses them; none when the file is read alone.
    pub fn elsewhere(
        &self,
        language: Language,
        path: &str,
        source: &str,
        tree: &tree_sitter::Tree,
    ) -> Vec<Arc<ParsedFile>> {
        match &self.others {
            Some(others) => others.reached(language, path, source, tree, &self.conftests),
            None => Vec::new(),
        }
    }
}

/// A file's tests and the signals of each (in the same order), ready to be judged or counted.
#[derive(Debug, Clone, Default)]
pub struct ReadTests {
    pub tests: Vec<TestMethod>,
    pub signals: Vec<Signals>,
    /// The file has syntax errors; the tests in its intact parts are still listed.
    pub has_syntax_errors: bool,
    /// Why the file was not read whole (too slow, too deep, too many tests), if it was not.
    pub incomplete: Option<extract::Incomplete>,
}

/// Parses a file's text and finds its tests, by the project's rules, with the signals in what
/// each runs (see [`signals_of`]).
pub fn read_tests(
    language: Language,
    path: &str,
    source: &str,
    surroundings: &Surroundings,
) -> ReadTests {
    let (extraction, tree) = extract::read_file(language, path, source, &surroundings.discovery);
    let signals = match &tree {
        Some(tree) => {
            let file = SourceTree::new(language, path, source, tree);
            let elsewhere = surroundings.elsewhere(language, path, source, tree);
            signals_of(
                &file,
                &surroundings.conftests,
                &elsewhere,
                &extraction.tests,
            )
        }
        None => vec![Signals::default(); extraction.tests.len()],
    };
    ReadTests {
        tests: extraction.tests,
        signals,
        has_syntax_errors: extraction.has_syntax_errors,
        incomplete: extraction.incomplete,
    }
}

/// Parses a file's text, finds its tests by the project's rules and judges each in its context.
pub fn analyze_source(
    models: &Models,
    thresholds: &Thresholds,
    language: Language,
    path: &str,
    source: &str,
    surroundings: &Surroundings,
) -> (Vec<TestReport>, bool) {
    let read = read_tests(language, path, source, surroundings);
    (
        judge_tests(models, thresholds, read.tests, &read.signals),
        read.has_syntax_errors,
    )
}
