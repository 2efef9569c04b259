//! Mechanisms: how a test can pass on one run and fail on the next, matched as code. A construct
//! alone (a sleep, an atomic, a URL, a clock read) cannot fail a test; a mechanism is the parts
//! that together can: work started on another thread, a fixed wait, and an assertion that reads
//! what the work does with nothing waiting for it between; a clock difference compared with a
//! tight upper bound; shared state written and never restored. A warning needs a whole
//! mechanism, and its evidence names each part with its line.
//!
//! The parts are catalogue entries ([`super::catalogue`]) matched when a file is scanned, with
//! what [`Traits`](super::scan::traits::Traits) says of each; here they are put in the order a
//! test runs them (set-up, the test and the helpers it calls, tear-down) and related by the
//! entry's [`Shape`].

pub mod entry;

use std::ops::Range;

pub use entry::{Link, MechanismEntry, Shape};

use super::scan::Hit;
use super::scan::traits::{AFTER_YIELD, CLEANUP, DEFERRED, IN_LOOP};
use super::{Place, Region};
use crate::category::Category;
use crate::signals::catalogue::Catalogue;

/// A mechanism found in a test and what it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MechanismHit {
    /// The entry's stable id.
    pub id: &'static str,
    pub category: Category,
    /// What it is: "asserts what a thread does after a fixed sleep".
    pub message: &'static str,
    /// Its parts, in the order the test runs them.
    pub parts: Vec<PartHit>,
    /// The entry's evidence, with a placeholder per role (see [`MechanismHit::evidence`]).
    pub template: &'static str,
}

impl MechanismHit {
    /// The parts told as one sentence: "starts `executor.submit(...)` (line 41), sleeps
    /// `Thread.sleep(500)` (line 44), then asserts `received.size()` (line 45) without waiting
    /// for it".
    pub fn evidence(&self) -> String {
        let mut evidence = self.template.to_string();
        for part in &self.parts {
            evidence = evidence.replace(&format!("{{{}}}", part.role), &part.shown());
        }
        evidence
    }
}

/// One part of a mechanism found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartHit {
    /// Its role in the mechanism: `start`, `wait`, `check`, `write`.
    pub role: &'static str,
    /// The catalogue entry it matched.
    pub id: &'static str,
    pub text: String,
    /// The line, from 1, in the file the code lives in.
    pub line: u32,
    /// Its byte range in that file.
    pub range: Range<usize>,
    pub place: Place,
}

impl PartHit {
    /// The part as evidence reads it: "`Thread.sleep(500)` (line 12)", or "`server.start()` in
    /// set-up `setUp` (line 12)".
    pub fn shown(&self) -> String {
        let text = self.text.replace('`', "'");
        match &self.place {
            Place::Test => format!("`{text}` (line {})", self.line),
            Place::Context { kind, name, path } => match path {
                Some(path) => format!("`{text}` in {kind} `{name}` ({path}:{})", self.line),
                None => format!("`{text}` in {kind} `{name}` (line {})", self.line),
            },
        }
    }
}

/// Where in a test's run a region's code runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Before,
    Test,
    After,
}

/// A part found in one of the regions a test runs, placed in the order of the run.
struct Event<'a> {
    entry: usize,
    hit: &'a Hit,
    region: usize,
    phase: Phase,
    /// Sorts events in the order the test runs them: set-up regions, then the test (a helper
    /// where the test calls it), then tear-down.
    order: (Phase, usize, usize, usize),
    /// The code runs as clean-up: in a `finally` block, or in a helper called from one.
    cleanup: bool,
}

impl Event<'_> {
    fn has(&self, flag: u8) -> bool {
        self.hit.traits.flags & flag != 0
    }

    fn range(&self) -> &Range<usize> {
        &self.hit.range
    }
}

/// The mechanisms of `catalogue` in a test (the first region) and what it runs (the others), each
/// at most once, in catalogue order.
pub fn find(catalogue: &'static Catalogue, regions: &[Region<'_>]) -> Vec<MechanismHit> {
    if catalogue.mechanisms.is_empty() {
        return Vec::new();
    }
    let events = events(catalogue, regions);
    let mut found = Vec::new();
    for mechanism in &catalogue.mechanisms {
        let roles = &mechanism.roles;
        if events
            .iter()
            .any(|event| roles.unless.contains(&event.entry))
        {
            continue;
        }
        let parts = match mechanism.entry.shape {
            Shape::Single => single(&events, roles, mechanism.entry.slack_below_ms),
            Shape::Sequence => sequence(&events, roles, mechanism.entry.link),
            Shape::Unrestored => unrestored(&events, roles),
            Shape::Race => race(&events, roles),
        };
        if let Some(parts) = parts {
            found.push(hit(catalogue, mechanism, regions, &events, &parts));
        }
    }
    found
}

/// The catalogue indices of the entries that play each role of a mechanism.
#[derive(Debug, Default)]
pub struct Roles {
    pub start: Vec<usize>,
    pub wait: Vec<usize>,
    pub check: Vec<usize>,
    pub write: Vec<usize>,
    pub restore: Vec<usize>,
    pub cures: Vec<usize>,
    pub unless: Vec<usize>,
}

/// A compiled mechanism: its entry and the catalogue indices of its parts.
#[derive(Debug)]
pub struct Mechanism {
    pub entry: MechanismEntry,
    pub roles: Roles,
}

fn events<'a>(catalogue: &Catalogue, regions: &'a [Region<'a>]) -> Vec<Event<'a>> {
    let mut events = Vec::new();
    for (index, region) in regions.iter().enumerate() {
        let phase = match &region.place {
            Place::Test => Phase::Test,
            Place::Context { kind, .. } => match *kind {
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
            });
        }
    }
    events.sort_by_key(|event| event.order);
    events
}

/// The chosen parts of a mechanism: (role, event position).
type Parts = Vec<(&'static str, usize)>;

fn single(events: &[Event<'_>], roles: &Roles, slack_below_ms: Option<f64>) -> Option<Parts> {
    let at = events.iter().enumerate().position(|(at, event)| {
        roles.check.contains(&event.entry)
            && slack_below_ms.is_none_or(|most| slack(events, roles, at) < most)
    })?;
    Some(vec![("check", at)])
}

/// What a bound on time leaves the machine: the bound, less the longest wait shorter than it in
/// what the test runs (a wait longer than the bound cannot have been waited out when the bound
/// holds). Infinite for a check without a bound.
fn slack(events: &[Event<'_>], roles: &Roles, at: usize) -> f64 {
    let check = &events[at];
    let Some(bound) = check.hit.traits.value_ms else {
        return f64::INFINITY;
    };
    let waited = events
        .iter()
        .filter(|event| {
            roles.wait.contains(&event.entry)
                && !(event.region == check.region && contains(check.range(), event.range()))
        })
        .filter_map(|event| event.hit.traits.value_ms)
        .filter(|&wait| wait < bound)
        .fold(0.0, f64::max);
    bound - waited
}

fn sequence(events: &[Event<'_>], roles: &Roles, link: Link) -> Option<Parts> {
    for (check_at, check) in events.iter().enumerate() {
        if !roles.check.contains(&check.entry) || check.has(DEFERRED) || check.phase != Phase::Test
        {
            continue;
        }
        // An assertion on a wait (`assertTrue(latch.await(1, SECONDS))`) waits for the work.
        let waits_itself = events.iter().any(|event| {
            roles.cures.contains(&event.entry)
                && event.region == check.region
                && contains(check.range(), event.range())
        });
        if waits_itself {
            continue;
        }
        // The nearest start before the check that the check reads.
        for start_at in (0..check_at).rev() {
            let start = &events[start_at];
            if !roles.start.contains(&start.entry)
                || start.range() == check.range()
                || !linked(start, check, link)
            {
                continue;
            }
            // An assertion in a loop that also sleeps or waits polls the condition.
            let polled = check.has(IN_LOOP)
                && events[start_at + 1..].iter().any(|event| {
                    event.region == check.region
                        && event.has(IN_LOOP)
                        && !event.has(DEFERRED)
                        && (roles.cures.contains(&event.entry) || roles.wait.contains(&event.entry))
                });
            if polled {
                break;
            }
            let between = &events[start_at + 1..check_at];
            let waits_on_work = between.iter().any(|event| {
                !event.has(DEFERRED)
                    && (roles.cures.contains(&event.entry)
                        || (roles.wait.contains(&event.entry) && event.has(IN_LOOP)))
            });
            if waits_on_work {
                // A wait for the work lies between: an earlier start is waited for too.
                break;
            }
            if roles.wait.is_empty() {
                return Some(vec![("start", start_at), ("check", check_at)]);
            }
            let wait = between.iter().rposition(|event| {
                roles.wait.contains(&event.entry) && !event.has(DEFERRED) && !event.has(IN_LOOP)
            });
            if let Some(wait) = wait {
                let wait_at = start_at + 1 + wait;
                return Some(vec![
                    ("start", start_at),
                    ("wait", wait_at),
                    ("check", check_at),
                ]);
            }
        }
    }
    None
}

fn unrestored(events: &[Event<'_>], roles: &Roles) -> Option<Parts> {
    let restoring =
        |event: &Event<'_>| event.phase == Phase::After || event.cleanup || event.has(AFTER_YIELD);
    for (write_at, write) in events.iter().enumerate() {
        // A write in set-up, a field or a fixture is made afresh before every test that runs
        // it: it cannot change this test's outcome, only later tests'. The test's own writes
        // (and its helpers') are what another test can see.
        if !roles.write.contains(&write.entry) || restoring(write) || write.phase != Phase::Test {
            continue;
        }
        let Some(key) = &write.hit.traits.key else {
            continue;
        };
        let restored = events[write_at + 1..].iter().any(|later| {
            let same_key = later
                .hit
                .traits
                .key
                .as_ref()
                .is_none_or(|other| other == key);
            same_key
                && (roles.restore.contains(&later.entry)
                    || (roles.write.contains(&later.entry) && restoring(later)))
        });
        if !restored {
            return Some(vec![("write", write_at)]);
        }
    }
    None
}

fn race(events: &[Event<'_>], roles: &Roles) -> Option<Parts> {
    for (check_at, check) in events.iter().enumerate() {
        if !roles.check.contains(&check.entry) || check.has(DEFERRED) || check.phase != Phase::Test
        {
            continue;
        }
        for (start_at, start) in events[..check_at].iter().enumerate() {
            if !roles.start.contains(&start.entry) {
                continue;
            }
            let shared = start
                .hit
                .traits
                .names
                .iter()
                .filter(|name| name.written && name.plain && mentions(check, &name.text));
            let repeated = start.has(IN_LOOP)
                || events[..check_at]
                    .iter()
                    .enumerate()
                    .any(|(other_at, other)| {
                        other_at != start_at
                            && roles.start.contains(&other.entry)
                            && other.hit.traits.names.iter().any(|name| {
                                name.written && start.hit.traits.names.iter().any(|own| own == name)
                            })
                    });
            if repeated && shared.count() > 0 {
                return Some(vec![("start", start_at), ("check", check_at)]);
            }
        }
    }
    None
}

/// Whether the check reads what the start does, as the link asks.
fn linked(start: &Event<'_>, check: &Event<'_>, link: Link) -> bool {
    let names = &start.hit.traits.names;
    match link {
        Link::None => true,
        Link::Names => names.iter().any(|name| mentions(check, &name.text)),
        Link::Written => names
            .iter()
            .any(|name| name.written && mentions(check, &name.text)),
        Link::Flow => {
            (start.region == check.region && contains(check.range(), start.range()))
                || names
                    .iter()
                    .any(|name| name.written && mentions(check, &name.text))
        }
    }
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

fn mentions(event: &Event<'_>, text: &str) -> bool {
    event.hit.traits.names.iter().any(|name| name.text == text)
}

fn hit(
    catalogue: &'static Catalogue,
    mechanism: &'static Mechanism,
    regions: &[Region<'_>],
    events: &[Event<'_>],
    parts: &Parts,
) -> MechanismHit {
    let entry = &mechanism.entry;
    let parts: Vec<PartHit> = parts
        .iter()
        .map(|&(role, at)| {
            let event = &events[at];
            PartHit {
                role,
                id: &catalogue.entries[event.entry].id,
                text: event.hit.text.clone(),
                line: event.hit.line,
                range: event.hit.range.clone(),
                place: regions[event.region].place.clone(),
            }
        })
        .collect();
    MechanismHit {
        id: &entry.id,
        category: entry.category,
        message: &entry.message,
        template: &entry.evidence,
        parts,
    }
}
