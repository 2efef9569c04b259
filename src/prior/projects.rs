//! The training examples grouped and tallied per project: the fit, its held-out predictions
//! and the shares of risks among a project's tests work on these.

use std::collections::BTreeMap;

use super::Example;

/// Examples of one project with the same features and label, counted: the fit, the held-out
/// predictions and the calibration work on these, many times fewer than the tests.
#[derive(Debug, Clone)]
pub(super) struct Group<'a> {
    pub(super) example: Example<'a>,
    pub(super) count: f64,
}

pub(super) fn group<'a>(examples: &[Example<'a>]) -> Vec<Group<'a>> {
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

/// A project's tests and how many of them match each risk.
#[derive(Debug, Clone)]
pub(super) struct ProjectTally {
    pub(super) tests: f64,
    pub(super) hits: Vec<f64>,
    /// Whether the project has a test not labelled flaky: sets of flaky tests alone (IDoFT,
    /// FlakyCat) say nothing about how common a signal is in their projects.
    pub(super) stable: bool,
    /// Whether the project has a test labelled flaky.
    pub(super) flaky: bool,
}

pub(super) fn tally<'a>(risks: &[&str], groups: &[Group<'a>]) -> BTreeMap<&'a str, ProjectTally> {
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
pub(super) fn typical_shares(
    tallies: &BTreeMap<&str, ProjectTally>,
    except: Option<&str>,
) -> Vec<f64> {
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
