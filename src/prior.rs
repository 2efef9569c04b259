//! The signal prior of a shipped model: a logistic regression over the catalogue's signals,
//! fitted on many projects, that estimates how likely a test of an unseen project is flaky.
//! Nearest neighbours say little across projects; this is what carries over.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::dataset::LabeledTest;
use crate::language::Language;
use crate::prevalence::Prevalence;
use crate::signals::{self, Signals};

/// Candidate strengths of the pull of the weights to zero (the inverse of scikit-learn's `C`).
/// The one whose held-out predictions separate flaky tests best is kept: measured on the shared
/// data, Java's 22,000 tests want little, Python's and Rust's 10,000, dominated by a few large
/// projects, want much more.
const L2_PENALTIES: [f64; 3] = [1.0, 10.0, 100.0];

/// A project's share of tests matching a risk is drawn toward the typical share as if this many
/// more tests had it: a project of three tests, or a single file, says little about what is
/// common in it.
const SHARE_PSEUDO_TESTS: f64 = 10.0;

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
    /// when the training data could not teach it (see `share_weights_learnable`).
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

    /// Fits the prior on labelled tests of many projects, and calibrates its warning threshold
    /// on predictions for projects held out of the fit.
    pub fn fit(language: Language, examples: &[Example<'_>]) -> SignalPrior {
        let names = signals::feature_names(language);
        // Risks in the test and risks in its context; mitigations follow them.
        let risks = 2 * signals::patterns(language).count();
        // A project with flaky tests only (a list of known flaky tests) says nothing about how
        // often a signal sits in stable code, so it stays out of the fit; its tests remain
        // neighbours in the index. Leaving it out raised the held-out recall of Java's fixtrain
        // repositories from 21.5% to 23.9% at the same 3% alarm rate (models/README.md).
        let mut groups = group(examples);
        let projects = tally(&names[..risks], &groups);
        groups.retain(|group| projects[group.example.project].stable);
        let tallies = tally(&names[..risks], &groups);
        let scaled = if share_weights_learnable(&tallies, &groups) {
            risks
        } else {
            0
        };
        // Choose the penalty and the thresholds on predictions for held-out projects, then fit
        // on everything with that penalty. With whole repositories in the data, the thresholds
        // are where their held-out tests would be warned at the alarm rates above, and the
        // penalty is the one that catches most of their flaky tests there; without, the
        // thresholds are those of the best Matthews correlation and F1, as for FLAST's data.
        let whole = examples.iter().any(|example| example.whole_repository);
        let calibration = L2_PENALTIES
            .iter()
            .filter_map(|&penalty| {
                let predictions = held_out_predictions(&names, scaled, &tallies, &groups, penalty)?;
                if whole {
                    let repositories: Vec<Prediction> = predictions
                        .iter()
                        .zip(&groups)
                        .filter(|(_, group)| group.example.whole_repository)
                        .map(|(prediction, _)| *prediction)
                        .collect();
                    let warning = alarm_threshold(&repositories, WARNING_ALARM_RATE)?;
                    let information = alarm_threshold(&repositories, INFORMATION_ALARM_RATE)?;
                    let caught = recall_above(&repositories, warning);
                    Some((penalty, information.min(warning), warning, caught))
                } else {
                    let (warning, mcc) = best_threshold(&predictions, 0.5, matthews)?;
                    let (information, _) = best_threshold(&predictions, 0.5, f1)?;
                    Some((penalty, information.min(warning), warning, mcc))
                }
            })
            .max_by(|a, b| a.3.total_cmp(&b.3).then(b.0.total_cmp(&a.0)));
        let (penalty, information_probability, warning_probability) = calibration.map_or(
            (L2_PENALTIES[0], 0.5, 0.95),
            |(penalty, information, warning, _)| (penalty, information, warning),
        );
        let typical = typical_shares(&tallies, None);
        let rows = design(&names, scaled, &tallies, &typical, &groups);
        let (bias, weights) = fit_logistic(
            &aggregate(rows.iter().zip(&groups)),
            names.len() + scaled,
            penalty,
        );
        let named = |names: &[&str], weights: &[f64]| -> Vec<(String, f64)> {
            names
                .iter()
                .map(|name| name.to_string())
                .zip(weights.iter().copied())
                .collect()
        };
        SignalPrior {
            language,
            bias,
            weights: named(&names, &weights[..names.len()]),
            share_weights: named(&names[..scaled], &weights[names.len()..]),
            typical_shares: named(&names[..scaled], &typical[..scaled]),
            information_probability,
            warning_probability,
            category_evidence: Vec::new(),
        }
    }
}

/// Whether the share weights can be learned: only from flaky tests whose project's shares are
/// known, so most flaky tests must come from projects with stable tests too. Java's training
/// data is mostly sets of flaky tests alone (IDoFT, FlakyCat): there the weights would be fitted
/// on imputed shares, and measured, they cost Java what they gave Rust (models/README.md).
fn share_weights_learnable(tallies: &BTreeMap<&str, ProjectTally>, groups: &[Group<'_>]) -> bool {
    let flaky: f64 = groups
        .iter()
        .filter(|group| group.example.flaky)
        .map(|group| group.count)
        .sum();
    let known: f64 = groups
        .iter()
        .filter(|group| group.example.flaky && tallies[group.example.project].stable)
        .map(|group| group.count)
        .sum();
    2.0 * known > flaky
}

/// Examples of one project with the same features and label, counted: the fit, the held-out
/// predictions and the calibration work on these, many times fewer than the tests.
#[derive(Debug, Clone)]
struct Group<'a> {
    example: Example<'a>,
    count: f64,
}

fn group<'a>(examples: &[Example<'a>]) -> Vec<Group<'a>> {
    let mut groups: BTreeMap<(&str, Vec<&str>, bool, bool), Group<'a>> = BTreeMap::new();
    for example in examples {
        let mut hits = example.hits.clone();
        hits.sort_unstable();
        let key = (
            example.project,
            hits,
            example.flaky,
            example.whole_repository,
        );
        groups
            .entry(key)
            .or_insert_with(|| Group {
                example: example.clone(),
                count: 0.0,
            })
            .count += 1.0;
    }
    groups.into_values().collect()
}

/// A held-out probability, its label and how many tests it stands for.
#[derive(Debug, Clone, Copy)]
struct Prediction {
    probability: f64,
    flaky: bool,
    count: f64,
}

/// A project's tests and how many of them match each risk.
#[derive(Debug, Clone)]
struct ProjectTally {
    tests: f64,
    hits: Vec<f64>,
    /// Whether the project has a test not labelled flaky: sets of flaky tests alone (IDoFT,
    /// FlakyCat) say nothing about how common a signal is in their projects.
    stable: bool,
    /// Whether the project has a test labelled flaky.
    flaky: bool,
}

fn tally<'a>(risks: &[&str], groups: &[Group<'a>]) -> BTreeMap<&'a str, ProjectTally> {
    let mut tallies: BTreeMap<&str, ProjectTally> = BTreeMap::new();
    for Group { example, count } in groups {
        let tally = tallies.entry(example.project).or_insert(ProjectTally {
            tests: 0.0,
            hits: vec![0.0; risks.len()],
            stable: false,
            flaky: false,
        });
        tally.tests += count;
        tally.stable |= !example.flaky;
        tally.flaky |= example.flaky;
        for (hits, risk) in tally.hits.iter_mut().zip(risks) {
            if example.hits.contains(risk) {
                *hits += count;
            }
        }
    }
    tallies
}

/// Per risk, the mean over projects with stable tests (but `except`) of its share of their
/// tests: every project counts alike, however large.
fn typical_shares(tallies: &BTreeMap<&str, ProjectTally>, except: Option<&str>) -> Vec<f64> {
    let projects: Vec<&ProjectTally> = tallies
        .iter()
        .filter(|(project, tally)| tally.stable && Some(**project) != except)
        .map(|(_, tally)| tally)
        .collect();
    let risks = tallies.values().next().map_or(0, |tally| tally.hits.len());
    (0..risks)
        .map(|risk| {
            let sum: f64 = projects
                .iter()
                .map(|tally| tally.hits[risk] / tally.tests)
                .sum();
            if projects.is_empty() {
                0.0
            } else {
                sum / projects.len() as f64
            }
        })
        .collect()
}

fn shrunk(hits: f64, tests: f64, typical: f64) -> f64 {
    (hits + SHARE_PSEUDO_TESTS * typical) / (tests + SHARE_PSEUDO_TESTS)
}

/// The regression's rows: each risk and mitigation found (1), then each of the first `scaled`
/// features (risks) found times its share among its project's tests.
fn design(
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

/// Identical rows of the same label, counted: most tests have the same few signals, so a fit
/// over distinct rows is many times faster than one over tests.
type Aggregated = Vec<(Vec<(usize, f64)>, bool, f64)>;
/// Rows by their rounded features and label: the summed features and weight.
type Counts = BTreeMap<(Vec<(usize, u64)>, bool), (Vec<(usize, f64)>, f64)>;

fn aggregate<'r, 'e: 'r>(
    rows: impl Iterator<Item = (&'r Vec<(usize, f64)>, &'r Group<'e>)>,
) -> Aggregated {
    let mut counts: Counts = BTreeMap::new();
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

/// Maximum-likelihood logistic regression with an L2 penalty and balanced class weights, by
/// Newton's method, on sparse rows of `(feature, value)` with their label and count.
fn fit_logistic(rows: &Aggregated, features: usize, penalty: f64) -> (f64, Vec<f64>) {
    let positives: f64 = rows
        .iter()
        .filter(|(_, flaky, _)| *flaky)
        .map(|(_, _, count)| count)
        .sum();
    let total: f64 = rows.iter().map(|(_, _, count)| count).sum();
    let negatives = total - positives;
    if positives == 0.0 || negatives == 0.0 {
        let bias = if positives == 0.0 { -10.0 } else { 10.0 };
        return (bias, vec![0.0; features]);
    }
    let class_weight = |flaky: bool| {
        if flaky {
            total / (2.0 * positives)
        } else {
            total / (2.0 * negatives)
        }
    };
    // Parameters: bias at 0, weights at 1..=features.
    let size = features + 1;
    let mut theta = vec![0.0; size];
    for _ in 0..50 {
        let mut gradient = vec![0.0; size];
        let mut hessian = vec![vec![0.0; size]; size];
        for (row, flaky, count) in rows {
            let logit = theta[0] + row.iter().map(|&(i, x)| theta[i + 1] * x).sum::<f64>();
            let p = sigmoid(logit);
            let weight = class_weight(*flaky) * count;
            let residual = weight * (p - if *flaky { 1.0 } else { 0.0 });
            let curvature = weight * p * (1.0 - p);
            let active: Vec<(usize, f64)> = std::iter::once((0, 1.0))
                .chain(row.iter().map(|&(i, x)| (i + 1, x)))
                .collect();
            for &(a, x_a) in &active {
                gradient[a] += residual * x_a;
                for &(b, x_b) in &active {
                    hessian[a][b] += curvature * x_a * x_b;
                }
            }
        }
        for i in 1..size {
            gradient[i] += penalty * theta[i];
            hessian[i][i] += penalty;
        }
        hessian[0][0] += 1e-9;
        let Some(step) = solve(hessian, gradient) else {
            break;
        };
        let mut largest = 0.0f64;
        for (parameter, delta) in theta.iter_mut().zip(&step) {
            *parameter -= delta;
            largest = largest.max(delta.abs());
        }
        if largest < 1e-10 {
            break;
        }
    }
    (theta[0], theta[1..].to_vec())
}

/// Solves `matrix * x = vector` by Gaussian elimination with partial pivoting.
fn solve(mut matrix: Vec<Vec<f64>>, mut vector: Vec<f64>) -> Option<Vec<f64>> {
    let size = vector.len();
    for column in 0..size {
        let pivot = (column..size)
            .max_by(|&a, &b| matrix[a][column].abs().total_cmp(&matrix[b][column].abs()))?;
        if matrix[pivot][column].abs() < 1e-12 {
            return None;
        }
        matrix.swap(column, pivot);
        vector.swap(column, pivot);
        let pivot_row = matrix[column].clone();
        for row in column + 1..size {
            let factor = matrix[row][column] / pivot_row[column];
            for (entry, pivot_entry) in matrix[row][column..].iter_mut().zip(&pivot_row[column..]) {
                *entry -= factor * pivot_entry;
            }
            vector[row] -= factor * vector[column];
        }
    }
    let mut solution = vec![0.0; size];
    for row in (0..size).rev() {
        let known: f64 = (row + 1..size).map(|k| matrix[row][k] * solution[k]).sum();
        solution[row] = (vector[row] - known) / matrix[row][row];
    }
    Some(solution)
}

/// For every group (in order), the probability a fit with `penalty` that did not see its project
/// gives it; groups of projects without both flaky and other tests get none (NaN). `None` with
/// fewer than two projects with both.
fn held_out_predictions(
    names: &[&'static str],
    scaled: usize,
    tallies: &BTreeMap<&str, ProjectTally>,
    groups: &[Group<'_>],
    penalty: f64,
) -> Option<Vec<Prediction>> {
    // Only projects with both flaky and other tests can show where the line between them lies;
    // each is held out in turn, as the leave-one-project-out protocol does. Sets of flaky tests
    // alone (IDoFT, FlakyCat) always stay in the fit: they still teach the regression.
    let mixed: Vec<&str> = tallies
        .iter()
        .filter(|(_, tally)| tally.stable && tally.flaky)
        .map(|(project, _)| *project)
        .collect();
    if mixed.len() < 2 {
        return None;
    }
    let mut predictions: Vec<Prediction> = groups
        .iter()
        .map(|group| Prediction {
            probability: f64::NAN,
            flaky: group.example.flaky,
            count: group.count,
        })
        .collect();
    let held_out: Vec<Vec<(usize, f64)>> = mixed
        .par_iter()
        .map(|held_out| {
            // The typical shares, too, come from the projects of the fit only.
            let typical = typical_shares(tallies, Some(held_out));
            let rows = design(names, scaled, tallies, &typical, groups);
            let training = aggregate(
                rows.iter()
                    .zip(groups)
                    .filter(|(_, group)| group.example.project != *held_out),
            );
            let (bias, weights) = fit_logistic(&training, names.len() + scaled, penalty);
            rows.iter()
                .zip(groups)
                .enumerate()
                .filter(|(_, (_, group))| group.example.project == *held_out)
                .map(|(position, (row, _))| {
                    let logit = bias + row.iter().map(|&(i, x)| weights[i] * x).sum::<f64>();
                    (position, sigmoid(logit))
                })
                .collect()
        })
        .collect();
    for (position, probability) in held_out.into_iter().flatten() {
        predictions[position].probability = probability;
    }
    Some(predictions)
}

/// The held-out predictions that have a probability, most probable first.
fn ranked(predictions: &[Prediction]) -> Vec<Prediction> {
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
fn alarm_threshold(predictions: &[Prediction], rate: f64) -> Option<f64> {
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
fn recall_above(predictions: &[Prediction], threshold: f64) -> f64 {
    let flaky: f64 = predictions
        .iter()
        .filter(|prediction| prediction.flaky)
        .map(|prediction| prediction.count)
        .sum();
    let caught: f64 = predictions
        .iter()
        .filter(|prediction| prediction.flaky && prediction.probability > threshold)
        .map(|prediction| prediction.count)
        .sum();
    if flaky == 0.0 { 0.0 } else { caught / flaky }
}

/// Matthews correlation of confusion counts (true and false positives, false and true negatives).
fn matthews(tp: f64, fp: f64, fn_: f64, tn: f64) -> f64 {
    let denominator = ((tp + fp) * (tp + fn_) * (tn + fp) * (tn + fn_)).sqrt();
    if denominator > 0.0 {
        (tp * tn - fp * fn_) / denominator
    } else {
        0.0
    }
}

/// F1 of confusion counts.
fn f1(tp: f64, fp: f64, fn_: f64, _tn: f64) -> f64 {
    if tp > 0.0 {
        2.0 * tp / (2.0 * tp + fp + fn_)
    } else {
        0.0
    }
}

/// The threshold at or above `floor` whose `probability > threshold` rule scores highest on
/// `metric`, and that score.
fn best_threshold(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn example(hits: &[&'static str], flaky: bool, project: &'static str) -> Example<'static> {
        Example {
            hits: hits.to_vec(),
            flaky,
            categories: &[],
            project,
            whole_repository: false,
        }
    }

    #[test]
    fn a_signal_seen_mostly_on_flaky_tests_gets_a_positive_weight() {
        let mut examples = Vec::new();
        for project in ["a", "b", "c", "d"] {
            for i in 0..50 {
                examples.push(example(&["fixed-sleep"], i % 2 == 0, project));
                examples.push(example(&[], i % 10 == 0, project));
                examples.push(example(&["unordered-iteration"], i % 10 == 0, project));
            }
        }
        let prior = SignalPrior::fit(Language::Java, &examples);
        let unknown = Prevalence::default();
        assert!(prior.weight("fixed-sleep", &unknown) > 1.0, "{prior:?}");
        assert!(
            prior.weight("unordered-iteration", &unknown).abs() < 0.3,
            "{prior:?}"
        );
        let sleep = prior.probability_of(&["fixed-sleep"], &unknown);
        let nothing = prior.probability_of(&[], &unknown);
        assert!(sleep > 0.5 && nothing < 0.5, "{sleep} {nothing}");
        assert!(prior.warning_probability > 0.5 && prior.warning_probability < 1.0);
    }

    #[test]
    fn a_signal_common_in_a_project_counts_less_there() {
        // Where few tests sleep, the sleeping ones are the flaky ones; where every test sleeps,
        // sleeping says nothing.
        let mut examples = Vec::new();
        for project in ["rare-1", "rare-2", "rare-3"] {
            for i in 0..60 {
                let sleeps = i % 10 == 0;
                let flaky = if sleeps { i % 20 == 0 } else { i % 29 == 0 };
                examples.push(example(
                    if sleeps { &["fixed-sleep"] } else { &[] },
                    flaky,
                    project,
                ));
            }
        }
        for project in ["common-1", "common-2", "common-3"] {
            for i in 0..60 {
                examples.push(example(&["fixed-sleep"], i % 12 == 0, project));
            }
        }
        let prior = SignalPrior::fit(Language::Java, &examples);
        assert!(
            prior
                .share_weights
                .iter()
                .any(|(name, weight)| name == "fixed-sleep" && *weight < 0.0),
            "{prior:?}"
        );
        let sleeps = signals::detect(Language::Java, "void t() { Thread.sleep(100); }");
        let plain = signals::detect(Language::Java, "void t() { assertEquals(1, 1); }");
        let project = |sleeping: usize| -> Prevalence {
            (0..100)
                .map(|i| (Language::Java, if i < sleeping { &sleeps } else { &plain }))
                .collect()
        };
        let (rare, common) = (project(5), project(100));
        assert!(
            prior.probability(&sleeps, &rare) > prior.probability(&sleeps, &common) + 0.1,
            "{} {}",
            prior.probability(&sleeps, &rare),
            prior.probability(&sleeps, &common)
        );
        assert!(prior.weight("fixed-sleep", &rare) > prior.weight("fixed-sleep", &common));
        // An unknown project is the typical one: between the two.
        let typical = prior.share("fixed-sleep", &Prevalence::default());
        assert!(typical > 0.3 && typical < 0.7, "{typical}");
        // A single test says little about its project: its share stays near the typical one.
        let alone: Prevalence = [(Language::Java, &sleeps)].into_iter().collect();
        let single = prior.share("fixed-sleep", &alone);
        assert!((single - typical).abs() < 0.1, "{single} {typical}");
    }

    #[test]
    fn the_calibration_keeps_its_fixed_points() {
        assert!((calibrated(0.3, 0.6, 0.8) - 0.25).abs() < 1e-9);
        assert!((calibrated(0.6, 0.6, 0.8) - 0.5).abs() < 1e-9);
        assert!((calibrated(0.8, 0.6, 0.8) - 0.95).abs() < 1e-9);
        assert!((calibrated(1.0, 0.6, 0.8) - 1.0).abs() < 1e-9);
        assert!(calibrated(0.7, 0.6, 0.8) < calibrated(0.75, 0.6, 0.8));
        assert_eq!(calibrated(0.0, 0.6, 0.8), 0.0);
    }

    #[test]
    fn the_best_threshold_separates_the_classes() {
        let predictions: Vec<Prediction> = [
            (0.9, true),
            (0.85, true),
            (0.7, false),
            (0.6, false),
            (0.55, true),
            (0.2, false),
        ]
        .into_iter()
        .map(|(probability, flaky)| Prediction {
            probability,
            flaky,
            count: 1.0,
        })
        .collect();
        let (threshold, _) = best_threshold(&predictions, 0.5, matthews).unwrap();
        assert!(threshold > 0.7 && threshold < 0.85, "{threshold}");
    }

    #[test]
    fn the_solver_solves() {
        let solution = solve(vec![vec![2.0, 1.0], vec![1.0, 3.0]], vec![3.0, 5.0]).unwrap();
        assert!((solution[0] - 0.8).abs() < 1e-12 && (solution[1] - 1.4).abs() < 1e-12);
        assert!(solve(vec![vec![0.0, 0.0], vec![0.0, 0.0]], vec![1.0, 1.0]).is_none());
    }
}
