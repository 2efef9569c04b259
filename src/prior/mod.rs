//! The signal prior of a shipped model: a logistic regression over the catalogue's signals,
//! fitted on many projects, that estimates how likely a test of an unseen project is flaky.
//! Nearest neighbours say little across projects; this is what carries over.

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::dataset::LabeledTest;
use crate::language::Language;
use crate::prevalence::Prevalence;
use crate::signals::{self, Signals};

mod calibration;
mod fit;
mod projects;
mod regression;
#[cfg(test)]
mod tests;

pub use calibration::{Candidate, Choice};

/// Candidate strengths of the pull of the weights to zero (the inverse of scikit-learn's `C`).
/// The strongest whose held-out predictions separate flaky tests as well as the best, within
/// the noise of the measure, is kept (`calibration::simplest_within_noise`).
const L2_PENALTIES: [f64; 3] = [1.0, 10.0, 100.0];

/// A project's share of tests matching a risk is drawn toward the typical share as if this many
/// more tests had it: a project of three tests, or a single file, says little about what is
/// common in it.
const SHARE_PSEUDO_TESTS: f64 = 10.0;

/// The pull to zero of each project's own intercept, where the fit gives projects one: their
/// base rates then absorb what sets projects apart, and the signals' weights are learned from
/// the differences between tests of the same project, the ranking a user sees in one repository.
/// Whether to is chosen with the penalty; without is the simpler choice (see `models/HISTORY.md`
/// for what it changed).
const INTERCEPT_PENALTY: f64 = 10.0;

/// A fitted prior. Its score is calibrated so the default thresholds keep their meaning: 0.5
/// where the balanced regression is undecided, 0.95 where it separated flaky tests best on
/// projects it had not seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignalPrior {
    pub language: Language,
    pub bias: f64,
    /// A weight per feature of the catalogue (its risks and mitigations), by name.
    pub weights: Vec<(String, f64)>,
    /// Per risk, by name: the weight of the risk times its share among the project's tests.
    /// Negative where a signal common in a project says less about each of its tests. Empty
    /// when the training data has no flaky test of a project with stable tests to teach it.
    pub share_weights: Vec<(String, f64)>,
    /// Per risk, by name: its mean share among the training projects' tests. It stands in for a
    /// project whose tests are unknown, and a small project's shares are drawn toward it. Empty
    /// when `share_weights` is.
    pub typical_shares: Vec<(String, f64)>,
    /// The probability that maps to a score of 0.5 (the information threshold): where held-out
    /// tests of whole repositories are warned at [`INFORMATION_ALARM_RATE`], or, without such
    /// data, where held-out predictions had the best F1.
    pub information_probability: f64,
    /// The probability that maps to a score of 0.95 (the warning threshold): where held-out tests
    /// of whole repositories are warned at [`WARNING_ALARM_RATE`], or, without such data, where
    /// held-out predictions had the best Matthews correlation.
    pub warning_probability: f64,
    /// Written empty and never read since a warning's category is that of its strongest evidence;
    /// kept so that model files of format 2, which hold it, still decode.
    pub category_evidence: Vec<CategoryEvidence>,
}

/// How far the labelled data backed a pattern's category (format 2; see `category_evidence`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryEvidence {
    pub pattern: String,
    pub agreeing: u32,
    pub labelled: u32,
    pub trusted: bool,
}

/// With whole repositories among the training data, the warning threshold is where this share of
/// their tests, held out of the fit, would be warned: a user judges the tool by the warnings on
/// their own repository, so warnings must be rare there, and the thresholds mean the same in every
/// language.
pub const WARNING_ALARM_RATE: f64 = 0.03;
/// The same for the information threshold, the recall setting.
pub const INFORMATION_ALARM_RATE: f64 = 0.10;

/// One labelled test as the prior sees it.
#[derive(Debug, Clone)]
pub struct Example<'a> {
    /// The features of the risks and mitigations the catalogue finds in it and what it runs.
    pub hits: Vec<&'static str>,
    pub flaky: bool,
    pub categories: &'a [Category],
    pub project: &'a str,
    /// The test comes with its whole repository (set-up, fixtures, helpers, every other test):
    /// such tests calibrate the thresholds, by the share of a repository's tests warned.
    pub whole_repository: bool,
}

impl<'a> Example<'a> {
    /// A labelled test and what the catalogue finds in it, out of its file (the CSV data).
    pub fn new(test: &'a LabeledTest, signals: &Signals) -> Example<'a> {
        Example {
            hits: signals.features(),
            flaky: test.flaky,
            categories: &test.categories,
            project: &test.project,
            whole_repository: false,
        }
    }

    /// A test of a whole repository (see [`crate::fixes`]) and the signals of what it runs.
    pub fn in_repository(test: &'a LabeledTest, signals: &Signals) -> Example<'a> {
        Example {
            whole_repository: true,
            ..Example::new(test, signals)
        }
    }
}

/// What models written before signals had stable ids keyed their weights on (the signals' display
/// names then), and the id of the signal that replaced each.
const RENAMED: &[(Language, &str, &str)] = &[
    (Language::Java, "fixed sleep", "fixed-sleep"),
    (
        Language::Java,
        "wait on a latch, future or condition",
        "tight-wait",
    ),
    (Language::Java, "threads or executors", "threads"),
    (
        Language::Java,
        "shared concurrent state",
        "concurrent-state",
    ),
    (Language::Java, "remote connection", "remote-connection"),
    (Language::Java, "remote URL", "remote-address"),
    (Language::Java, "fixed local port", "fixed-port"),
    (Language::Java, "wall-clock time", "wall-clock"),
    (
        Language::Java,
        "hash-ordered collection",
        "unordered-iteration",
    ),
    (Language::Java, "shared files", "fixed-path"),
    (Language::Java, "tight timeout", "tight-timeout"),
    (Language::Java, "platform-specific", "platform"),
    (Language::Java, "mocked collaborators", "mocks"),
    (Language::Python, "fixed sleep", "fixed-sleep"),
    (
        Language::Python,
        "wait on an event or condition",
        "tight-wait",
    ),
    (Language::Python, "threads, processes or tasks", "threads"),
    (Language::Python, "remote connection", "remote-connection"),
    (Language::Python, "remote URL", "remote-address"),
    (Language::Python, "local server or port", "fixed-port"),
    (Language::Python, "wall-clock time", "wall-clock"),
    (
        Language::Python,
        "set or directory order",
        "unordered-iteration",
    ),
    (Language::Python, "timeout", "tight-timeout"),
    (Language::Python, "platform-specific", "platform"),
    (Language::Python, "mocked collaborators", "mocks"),
    (Language::Rust, "fixed sleep or timeout", "fixed-sleep"),
    (Language::Rust, "threads, tasks or locks", "threads"),
    (
        Language::Rust,
        "multi-threaded async runtime",
        "multi-thread-runtime",
    ),
    (Language::Rust, "polling or retrying", "retries"),
    (Language::Rust, "child processes", "child-process"),
    (Language::Rust, "network connection", "remote-connection"),
    (Language::Rust, "async test", "async-test"),
    (Language::Rust, "remote URL", "remote-address"),
    (Language::Rust, "fixed local port", "fixed-port"),
    (Language::Rust, "wall-clock time", "wall-clock"),
    (
        Language::Rust,
        "hash-ordered collection",
        "unordered-iteration",
    ),
    (Language::Rust, "shared files", "fixed-path"),
    (Language::Rust, "timeout", "tight-wait"),
    (Language::Rust, "platform-specific", "platform"),
    (Language::Rust, "mocked collaborators", "mocks"),
];

impl SignalPrior {
    /// Keys a prior written before signals had stable ids on the ids of the signals that
    /// replaced its display names, so an older model file keeps what it learned (as far as the
    /// new signals mean the same).
    pub fn rename_old_features(&mut self) {
        let language = self.language;
        let renamed = |name: &mut String| {
            if let Some((_, _, id)) = RENAMED
                .iter()
                .find(|(of, old, _)| *of == language && old == name)
            {
                *name = id.to_string();
            }
        };
        for (name, _) in self
            .weights
            .iter_mut()
            .chain(&mut self.share_weights)
            .chain(&mut self.typical_shares)
        {
            renamed(name);
        }
    }

    /// The regression's probability (with balanced classes) that a test with these signals, in
    /// a project where signals are as common as `prevalence` says, is flaky.
    pub fn probability(&self, signals: &Signals, prevalence: &Prevalence) -> f64 {
        self.probability_of(&signals.features(), prevalence)
    }

    fn probability_of(&self, names: &[&str], prevalence: &Prevalence) -> f64 {
        let logit = self.bias
            + self
                .weights
                .iter()
                .filter(|(name, _)| names.contains(&name.as_str()))
                .map(|(_, weight)| weight)
                .sum::<f64>()
            + self
                .share_weights
                .iter()
                .filter(|(name, _)| names.contains(&name.as_str()))
                .map(|(name, weight)| weight * self.share(name, prevalence))
                .sum::<f64>();
        sigmoid(logit)
    }

    /// The calibrated score: piecewise linear in the probability, through (0, 0),
    /// (information_probability, 0.5), (warning_probability, 0.95) and (1, 1).
    pub fn score(&self, signals: &Signals, prevalence: &Prevalence) -> f64 {
        calibrated(
            self.probability(signals, prevalence),
            self.information_probability,
            self.warning_probability,
        )
    }

    /// hits with a positive weight are evidence of flakiness.
    pub fn weight(&self, name: &str, prevalence: &Prevalence) -> f64 {
        let find = |weights: &[(String, f64)]| {
            weights
                .iter()
                .find(|(pattern, _)| pattern == name)
                .map_or(0.0, |(_, weight)| *weight)
        };
        find(&self.weights) + find(&self.share_weights) * self.share(name, prevalence)
    }

    /// The share of the project's tests that match the risk `name`, drawn toward the typical
    /// share by [`SHARE_PSEUDO_TESTS`]; the typical share when the project's tests are unknown.
    pub fn share(&self, name: &str, prevalence: &Prevalence) -> f64 {
        let typical = self
            .typical_shares
            .iter()
            .find(|(pattern, _)| pattern == name)
            .map_or(0.0, |(_, share)| *share);
        let (hits, tests) = prevalence.count(self.language, name);
        shrunk(f64::from(hits), f64::from(tests), typical)
    }
}

fn shrunk(hits: f64, tests: f64, typical: f64) -> f64 {
    (hits + SHARE_PSEUDO_TESTS * typical) / (tests + SHARE_PSEUDO_TESTS)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn calibrated(probability: f64, information: f64, warning: f64) -> f64 {
    let information = information.clamp(1e-9, 1.0 - 2e-9);
    let warning = warning.clamp(information + 1e-9, 1.0 - 1e-9);
    if probability <= information {
        0.5 * probability / information
    } else if probability <= warning {
        0.5 + 0.45 * (probability - information) / (warning - information)
    } else {
        0.95 + 0.05 * (probability - warning) / (1.0 - warning)
    }
}
