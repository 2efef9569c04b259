//! Mechanisms: how a test can pass on one run and fail on the next, matched as code. A construct
//! alone (a sleep, an atomic, a URL, a clock read) cannot fail a test; a mechanism is the parts
//! that together can: work started on another thread, a fixed wait, and an assertion that reads
//! what the work does with nothing waiting for it between; a clock difference compared with a
//! tight upper bound; shared state written and never restored. A warning needs a whole
//! mechanism, and its evidence names each part with its line.
//!
//! The parts are catalogue entries ([`mod@super::catalogue`]) matched when a file is scanned, with
//! what [`Traits`](super::scan::traits::Traits) says of each; here they are put in the order a
//! test runs them (set-up, the test and the helpers it calls, tear-down) and related by the
//! entry's [`Shape`].

pub mod entry;
mod events;
mod shapes;

use std::ops::Range;

pub use entry::{Link, MechanismEntry, Shape};

use super::{Place, Region};
use crate::category::Category;
use crate::signals::catalogue::Catalogue;
use events::{Event, events};
use shapes::{Parts, race, sequence, single, unrestored};

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
        if events.iter().any(|event| {
            roles.unless.contains(&event.entry)
                || (roles.expects.contains(&event.entry) && in_own_file(&regions[event.region]))
        }) {
            continue;
        }
        let parts = match mechanism.entry.shape {
            Shape::Single => single(
                &events,
                roles,
                mechanism.entry.slack_below_ms,
                mechanism.entry.category == Category::AsyncWait,
            ),
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
    pub expects: Vec<usize>,
}

/// The region is written in the test's own file: the test, or its set-up, fixtures and helpers
/// there.
fn in_own_file(region: &Region<'_>) -> bool {
    match &region.place {
        Place::Test => true,
        Place::Context { path, .. } => path.is_none(),
    }
}

/// A compiled mechanism: its entry and the catalogue indices of its parts.
#[derive(Debug)]
pub struct Mechanism {
    pub entry: MechanismEntry,
    pub roles: Roles,
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
