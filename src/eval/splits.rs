//! The splits of a protocol into training and testing sides: stratified folds within each
//! project, or each project against all the others. The folds are dealt from a seed, the same on
//! every platform.

use rand::{Rng, SeedableRng};
use rand_xoshiro::SplitMix64;

use crate::dataset::LabeledTest;

use super::{EvalSettings, Protocol};

pub(super) struct Split {
    pub(super) project: String,
    pub(super) train: Vec<usize>,
    pub(super) test: Vec<usize>,
}

pub(super) fn make_splits(
    tests: &[LabeledTest],
    pool: &[&LabeledTest],
    settings: &EvalSettings,
) -> (Vec<Split>, Vec<String>) {
    let mut projects: Vec<&str> = tests.iter().map(|test| test.project.as_str()).collect();
    projects.sort_unstable();
    projects.dedup();
    let mut splits = Vec::new();
    let mut skipped = Vec::new();
    match settings.protocol {
        Protocol::PerProject { folds, min_flaky } => {
            for project in projects {
                let members: Vec<usize> = (0..tests.len())
                    .filter(|&i| tests[i].project == project)
                    .collect();
                let flaky = members.iter().filter(|&&i| tests[i].flaky).count();
                if flaky < min_flaky {
                    skipped.push(project.to_string());
                    continue;
                }
                let fold_of = stratified_folds(
                    &members,
                    |i| tests[i].flaky,
                    folds,
                    settings.split_seed ^ text_seed(project),
                );
                for fold in 0..folds {
                    let (mut train, mut test) = (Vec::new(), Vec::new());
                    for (&member, &member_fold) in members.iter().zip(&fold_of) {
                        if member_fold == fold {
                            test.push(member)
                        } else {
                            train.push(member)
                        }
                    }
                    if !test.is_empty() {
                        splits.push(Split {
                            project: project.to_string(),
                            train,
                            test,
                        });
                    }
                }
            }
        }
        Protocol::LeaveOneProjectOut => {
            for project in projects {
                let test: Vec<usize> = (0..tests.len())
                    .filter(|&i| tests[i].project == project)
                    .collect();
                let train: Vec<usize> = (0..pool.len())
                    .filter(|&i| pool[i].project != project)
                    .collect();
                splits.push(Split {
                    project: project.to_string(),
                    train,
                    test,
                });
            }
        }
    }
    (splits, skipped)
}

/// Assigns each member a fold so that every fold gets its share of each class: each class is
/// shuffled, then dealt round-robin, the second class continuing where the first stopped.
fn stratified_folds(
    members: &[usize],
    is_positive: impl Fn(usize) -> bool,
    folds: usize,
    seed: u64,
) -> Vec<usize> {
    let mut rng = SplitMix64::seed_from_u64(seed);
    let mut fold_of = vec![0; members.len()];
    let mut dealt = 0;
    for class in [true, false] {
        let mut positions: Vec<usize> = (0..members.len())
            .filter(|&p| is_positive(members[p]) == class)
            .collect();
        shuffle(&mut positions, &mut rng);
        for position in positions {
            fold_of[position] = dealt % folds;
            dealt += 1;
        }
    }
    fold_of
}

/// Fisher-Yates with integer-only bounded draws, the same on every platform.
fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
        items.swap(i, j);
    }
}

fn text_seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_are_stratified_and_seeded() {
        let members: Vec<usize> = (0..100).collect();
        let folds = stratified_folds(&members, |i| i < 20, 10, 5);
        for fold in 0..10 {
            let positives = (0..20).filter(|&i| folds[i] == fold).count();
            let all = folds.iter().filter(|&&f| f == fold).count();
            assert_eq!((positives, all), (2, 10));
        }
        assert_eq!(folds, stratified_folds(&members, |i| i < 20, 10, 5));
        assert_ne!(folds, stratified_folds(&members, |i| i < 20, 10, 6));
    }
}
