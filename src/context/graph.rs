//! Following a test's references breadth first, so that each unit keeps the smallest depth at
//! which it is reached and the bounds drop the farthest units first.

use std::hash::Hash;
use std::ops::Range;

use rustc_hash::FxHashSet as HashSet;

use super::{Anchor, ContextKind, ContextUnit, MAX_DEPTH, MAX_HELPER_DEPTH, MAX_UNITS};

/// How far units of `kind` are followed.
fn max_depth(kind: ContextKind) -> u8 {
    match kind {
        ContextKind::Helper => MAX_HELPER_DEPTH,
        _ => MAX_DEPTH,
    }
}

/// A unit found while following a test's references, before it is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Step<K> {
    pub(super) key: K,
    pub(super) kind: ContextKind,
    /// Where in the test the unit runs, for a helper the test calls (see [`Anchor`]).
    pub(super) anchor: Option<Anchor>,
}

/// The definitions of one language's files as a graph: what a unit is, and what it runs.
pub(super) trait Graph {
    /// Identifies a definition across the files a [`Resolver`](super::Resolver) reads.
    type Key: Copy + Eq + Hash;

    /// The file, name and whole range of a definition.
    fn locate(&self, key: Self::Key) -> (Option<usize>, &str, Range<usize>);

    /// Whether the definition is one of the tests: a test is never a unit of another test.
    fn is_test(&self, key: Self::Key) -> bool;

    /// Appends the units that `step` runs, to be placed one level deeper.
    fn runs(&self, step: Step<Self::Key>, found: &mut Vec<Step<Self::Key>>);
}

/// Follows `roots` (the units a test uses directly) breadth first, so that each unit keeps its
/// smallest depth and the caps drop the farthest units. `test` is the test's own definition, when
/// it has one.
pub(super) fn breadth_first<G: Graph>(
    graph: &G,
    test: Option<G::Key>,
    roots: Vec<Step<G::Key>>,
) -> Vec<ContextUnit> {
    let mut seen: HashSet<G::Key> = test.into_iter().collect();
    let mut units = Vec::new();
    // Each step with the kind of the unit the test uses directly that it runs within.
    let mut level: Vec<(Step<G::Key>, ContextKind)> =
        roots.into_iter().map(|step| (step, step.kind)).collect();
    let mut next: Vec<(Step<G::Key>, ContextKind)> = Vec::new();
    let mut found = Vec::new();
    let mut depth: u8 = 1;
    'levels: while !level.is_empty() {
        for (step, runs_in) in level.drain(..) {
            if depth > max_depth(step.kind) || graph.is_test(step.key) || !seen.insert(step.key) {
                continue;
            }
            if units.len() == MAX_UNITS {
                break 'levels;
            }
            let (file, name, range) = graph.locate(step.key);
            units.push(ContextUnit {
                kind: step.kind,
                name: name.to_owned(),
                file,
                range,
                depth,
                anchor: step.anchor,
                runs_in,
            });
            // What a unit runs, runs where the unit does.
            graph.runs(step, &mut found);
            next.extend(found.drain(..).map(|mut child| {
                child.anchor = step.anchor;
                (child, runs_in)
            }));
        }
        std::mem::swap(&mut level, &mut next);
        depth = depth.saturating_add(1);
    }
    units.sort_by_key(|unit| (unit.depth, unit.file, unit.range.start));
    units
}

/// The items of `items` (sorted by offset) whose offset lies in `range`.
pub(super) fn within<'a, T>(
    items: &'a [T],
    offset: impl Fn(&T) -> usize,
    range: &Range<usize>,
) -> &'a [T] {
    let start = items.partition_point(|item| offset(item) < range.start);
    let end = items.partition_point(|item| offset(item) < range.end);
    items.get(start..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain 0 -> 1 -> 2 -> ... of helpers, with 1 -> 0 closing a cycle through the test.
    struct Chain {
        length: usize,
        names: Vec<String>,
    }

    impl Graph for Chain {
        type Key = usize;
        fn locate(&self, key: usize) -> (Option<usize>, &str, Range<usize>) {
            (None, &self.names[key], key * 10..key * 10 + 5)
        }
        fn is_test(&self, _: usize) -> bool {
            false
        }
        fn runs(&self, step: Step<usize>, found: &mut Vec<Step<usize>>) {
            for key in [step.key + 1, 0] {
                if key < self.length {
                    found.push(Step {
                        key,
                        kind: ContextKind::Helper,
                        anchor: None,
                    });
                }
            }
        }
    }

    fn chain(length: usize) -> Chain {
        let names = (0..length).map(|key| format!("helper{key}")).collect();
        Chain { length, names }
    }

    fn helper(key: usize) -> Step<usize> {
        Step {
            key,
            kind: ContextKind::Helper,
            anchor: None,
        }
    }

    #[test]
    fn helpers_stop_at_the_depth_bound_and_the_test_is_never_its_own_unit() {
        let units = breadth_first(&chain(10), Some(0), vec![helper(1)]);
        let found: Vec<(&str, u8)> = units
            .iter()
            .map(|unit| (unit.name.as_str(), unit.depth))
            .collect();
        assert_eq!(found, [("helper1", 1), ("helper2", 2), ("helper3", 3)]);
    }

    #[test]
    fn a_fixture_chain_goes_deeper_than_helpers() {
        struct Fixtures;
        impl Graph for Fixtures {
            type Key = u8;
            fn locate(&self, key: u8) -> (Option<usize>, &str, Range<usize>) {
                (Some(0), "fixture", usize::from(key)..usize::from(key) + 1)
            }
            fn is_test(&self, _: u8) -> bool {
                false
            }
            fn runs(&self, step: Step<u8>, found: &mut Vec<Step<u8>>) {
                found.push(Step {
                    key: step.key + 1,
                    kind: ContextKind::Fixture,
                    anchor: None,
                });
            }
        }
        let root = Step {
            key: 0,
            kind: ContextKind::Fixture,
            anchor: None,
        };
        let units = breadth_first(&Fixtures, None, vec![root]);
        assert_eq!(units.len(), usize::from(MAX_DEPTH));
        assert_eq!(units.last().map(|unit| unit.depth), Some(MAX_DEPTH));
    }

    #[test]
    fn the_cap_keeps_the_nearest_units() {
        // Forty helpers called directly, each calling one more: the direct ones fill the cap.
        struct Wide;
        impl Graph for Wide {
            type Key = usize;
            fn locate(&self, key: usize) -> (Option<usize>, &str, Range<usize>) {
                (None, "helper", key..key + 1)
            }
            fn is_test(&self, key: usize) -> bool {
                key == 7
            }
            fn runs(&self, step: Step<usize>, found: &mut Vec<Step<usize>>) {
                found.push(helper(step.key + 100));
            }
        }
        let units = breadth_first(&Wide, None, (0..40).map(helper).collect());
        assert_eq!(units.len(), MAX_UNITS);
        assert!(units.iter().all(|unit| unit.depth == 1));
        assert!(
            units.iter().all(|unit| unit.range.start != 7),
            "a test is no helper"
        );
    }

    #[test]
    fn a_unit_reached_twice_keeps_its_smallest_depth() {
        // helper1 -> helper2 and helper2 used directly: helper2 is listed once, at depth 1.
        let units = breadth_first(&chain(3), None, vec![helper(1), helper(2)]);
        let found: Vec<(&str, u8)> = units
            .iter()
            .map(|unit| (unit.name.as_str(), unit.depth))
            .collect();
        assert_eq!(found, [("helper1", 1), ("helper2", 1), ("helper0", 2)]);
    }
}
