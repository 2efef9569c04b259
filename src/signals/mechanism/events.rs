//! The parts a test runs, put in the order it runs them: set-up, the test's own code and the
//! helpers where it calls them, tear-down; with what each is (in a loop, in work that runs later,
//! clean-up).

use std::ops::Range;

use super::super::scan::Hit;
use super::super::scan::traits::{AFTER_YIELD, CLEANUP};
use super::super::{Place, Region};
use crate::signals::catalogue::Catalogue;

/// Where in a test's run a region's code runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Phase {
    Before,
    Test,
    After,
}

/// A part found in one of the regions a test runs, placed in the order of the run.
pub(super) struct Event<'a> {
    pub(super) entry: usize,
    pub(super) hit: &'a Hit,
    pub(super) region: usize,
    pub(super) phase: Phase,
    /// Sorts events in the order the test runs them: set-up regions, then the test (a helper
    /// where the test calls it), then tear-down.
    pub(super) order: (Phase, usize, usize, usize),
    /// The code runs as clean-up: in a `finally` block, or in a helper called from one.
    pub(super) cleanup: bool,
    /// The code is the code under test ([`Region::under_test`]).
    pub(super) under_test: bool,
    /// The object the test called the code's method on ([`Region::receiver`]).
    pub(super) receiver: Option<&'a str>,
}

impl Event<'_> {
    pub(super) fn has(&self, flag: u8) -> bool {
        self.hit.traits.flags & flag != 0
    }

    pub(super) fn range(&self) -> &Range<usize> {
        &self.hit.range
    }
}

/// The parts of `catalogue`'s mechanisms in `regions`, in the order the test runs them.
pub(super) fn events<'a>(catalogue: &Catalogue, regions: &'a [Region<'a>]) -> Vec<Event<'a>> {
    let mut events = Vec::new();
    for (index, region) in regions.iter().enumerate() {
        // A unit runs when the unit the test uses directly that it runs within does: a helper
        // called from a set-up method runs before the test.
        let phase = match &region.place {
            Place::Test => Phase::Test,
            Place::Context { kind, .. } => match region.runs_in.unwrap_or(kind) {
                "tear-down" => Phase::After,
                "helper" => Phase::Test,
                _ => Phase::Before,
            },
        };
        for hit in region.scan.within(region.range.clone()) {
            if !catalogue.in_mechanism[hit.entry] {
                continue;
            }
            let phase = if hit.traits.flags & AFTER_YIELD != 0 {
                Phase::After
            } else {
                phase
            };
            // The test's own code in its order; a helper where the test calls it (at the start
            // when the call is not known); set-up before, tear-down after.
            let order = match (&region.place, phase, region.called_at) {
                (Place::Test, _, _) => (Phase::Test, hit.range.start, 0, 0),
                (_, Phase::Test, called_at) => (
                    Phase::Test,
                    called_at.unwrap_or(0),
                    index + 1,
                    hit.range.start,
                ),
                (_, phase, _) => (phase, index, hit.range.start, 0),
            };
            events.push(Event {
                entry: hit.entry,
                hit,
                region: index,
                phase,
                order,
                cleanup: region.cleanup || hit.traits.flags & CLEANUP != 0,
                under_test: region.under_test,
                receiver: region.receiver.as_deref(),
            });
        }
    }
    events.sort_by_key(|event| event.order);
    events
}
