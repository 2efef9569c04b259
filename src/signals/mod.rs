//! The catalogue of static flakiness signals: code that research links to each cause of
//! flakiness (Luo et al.'s taxonomy and the studies after it; see the design notes), read from
//! the syntax tree with its values, never from comments or words. On projects a model has never
//! seen, signals carry more information than raw token similarity, and they are the clearest
//! explanation to show a user. Mitigations (mocks, a frozen clock) are matched too: they count
//! against flakiness and are never shown.
//!
//! Each signal is one entry of `grammars/signals/<language>.toml` ([`catalogue`](mod@catalogue)): a stable id,
//! a category, a message, its documentation, a query in tree-sitter's query language (the subset
//! [`query`] reads and matches) and examples. A query captures the reported node as `@hit`;
//! these captures add conditions on values ([`scan`](mod@scan)):
//!
//! - `@duration`: a duration (a number in the entry's `unit`, or a duration built with its own
//!   unit, or a name bound to one) that must lie within the entry's `min-ms` and `max-ms`;
//!   `@duration.ms` and `@duration.s` fix the unit of a bare number for one pattern, and `@unit`
//!   overrides it (`TimeUnit.SECONDS`);
//! - `@target`: where a connection goes, which must not be known to be local;
//! - `@port`: a number from 1 to 65535, or a local address with such a port;
//! - `@address`: a string (or a name bound to one) naming a host that is not local;
//! - `@receiver`: the object a call is made on, which must not be a mock;
//! - `@owner`: the object whose state is changed, which must not be a parameter of the enclosing
//!   function (a pytest fixture such as pytest-django's `settings` undoes what is set on it);
//! - `@hash-receiver`: the object a call is made on, which must hold a hash-ordered collection;
//! - `@program`: the program a command starts, which must not be the crate's own binary
//!   (`env!("CARGO_BIN_EXE_app")`, `cargo_bin!("app")`, or a name bound to one);
//! - `@elapsed`: the difference of two readings of a clock (or a name bound to one), whose unit
//!   a bare `@bound` is read in;
//! - `@bound`: an upper bound on it, kept as the hit's duration, within the entry's `max-ms`;
//! - `@remote`: where a connection goes, which must name a host outside the machine;
//! - `@shared`: a Python container bound at the top of the module or in a class body;
//! - `@global`: a Python name imported at the top of the module, or a class defined there;
//! - `@places`: unittest's `places=N`, a tolerance of half a unit of the N-th decimal second;
//! - `@thread`: a Java receiver that holds a thread;
//! - `@names` and `@key`: what a mechanism links parts by ([`scan::traits`]).

pub mod catalogue;
pub mod layout;
pub mod mechanism;
mod placement;
mod query;
mod rescan;
mod scan;
#[cfg(test)]
mod tests;
pub(crate) mod values;

use std::ops::Range;

pub use catalogue::{Catalogue, Kind, catalogue};
pub use mechanism::{MechanismHit, PartHit};
pub use rescan::{Splice, rescan};
pub use scan::{FileScan, Hit, scan};

/// The catalogue's own spelling of a risk feature of `language` (a risk's id, or its
/// `id@context`), as hits name it.
pub fn feature_name(language: crate::language::Language, name: &str) -> Option<&'static str> {
    catalogue(language).risks().find_map(|entry| {
        if entry.id == name {
            Some(entry.id.as_str())
        } else if entry.context_feature == name {
            Some(entry.context_feature.as_str())
        } else {
            None
        }
    })
}

use crate::category::Category;
use crate::language::Language;

/// The captures a catalogue query may use besides those starting with `_`.
pub const CAPTURES: [&str; 21] = [
    "hit",
    "duration",
    "duration.ms",
    "duration.s",
    "unit",
    "target",
    "port",
    "address",
    "receiver",
    "owner",
    "hash-receiver",
    "program",
    "names",
    "key",
    "elapsed",
    "bound",
    "remote",
    "shared",
    "global",
    "places",
    "thread",
];

/// Where a signal was found: in the test's own code, or in what it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Test,
    Context {
        /// What the code is to the test: "set-up", "fixture", "helper", ...
        kind: &'static str,
        /// Its name: `setUp`, `server`, `startServer`.
        name: String,
        /// The file it lives in when that is not the test's own (a `conftest.py`).
        path: Option<String>,
    },
}

/// A place where code matches a catalogue entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalHit {
    /// The entry's stable id, unique within its language.
    pub id: &'static str,
    /// What a signal prior keys on: the id when the hit is in the test's own code, the id's
    /// context feature (`fixed-sleep@context`) when it is only in what the test runs: set-up
    /// shared by every test of a class says less about each of them than the test's own sleep.
    pub feature: &'static str,
    pub category: Category,
    /// What it means, shown to users: "fixed sleep".
    pub message: &'static str,
    /// The matched code, e.g. `Thread.sleep(500)`.
    pub text: String,
    /// The line, from 1, in the file the code lives in.
    pub line: u32,
    pub place: Place,
    /// The entry is a setting ([`catalogue::Entry::setting`]): shown after the acts.
    pub setting: bool,
}

impl SignalHit {
    /// Where the hit is, as evidence reads it: "in set-up `setUp` (line 12)", or "line 12" for
    /// the test's own code.
    pub fn whereabouts(&self) -> String {
        match &self.place {
            Place::Test => format!("line {}", self.line),
            Place::Context { kind, name, path } => match path {
                Some(path) => format!("in {kind} `{name}` ({path}:{})", self.line),
                None => format!("in {kind} `{name}` (line {})", self.line),
            },
        }
    }

    /// The hit as every output shows it: "fixed sleep `Thread.sleep(500)` (line 12)", "fixed
    /// sleep `Thread.sleep(500)` in set-up `setUp` (line 12)".
    pub fn evidence(&self) -> String {
        let text = self.text.replace('`', "'");
        match self.place {
            Place::Test => format!("{} `{text}` ({})", self.message, self.whereabouts()),
            Place::Context { .. } => format!("{} `{text}` {}", self.message, self.whereabouts()),
        }
    }

    /// What the hit's place is, for machine-readable output: `None` for the test's own code.
    pub fn context(&self) -> Option<SignalContext<'_>> {
        self.place.context()
    }
}

impl Place {
    /// The place as machine-readable output names it: `None` for the test's own code.
    pub fn context(&self) -> Option<SignalContext<'_>> {
        match self {
            Place::Test => None,
            Place::Context { kind, name, path } => Some(SignalContext {
                kind,
                name,
                path: path.as_deref(),
            }),
        }
    }
}

/// Where in a test's context a signal was found, as JSON shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SignalContext<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    /// The file, when it is not the test's own.
    pub path: Option<&'a str>,
}

/// What the catalogue finds in a test and what it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signals {
    /// Risks, at most one hit per entry (so a test that sleeps ten times is not ten times as
    /// suspicious): in the test's own code when there, else in the nearest context.
    pub risks: Vec<SignalHit>,
    /// Ids of the mitigations found.
    pub mitigations: Vec<&'static str>,
    /// Ids of the conditions found: neither features nor evidence.
    pub conditions: Vec<&'static str>,
    /// The [`SIZE_FEATURES`] the test's own code reaches.
    pub size: Vec<&'static str>,
    /// The whole mechanisms found: what a warning rests on ([`mechanism`]).
    pub mechanisms: Vec<MechanismHit>,
}

/// Features of a test's length: its own code has at least this many non-blank lines. Flaky tests
/// are long (in fixtrain's Python repositories the median test a maintainer later fixed for
/// flakiness has 25 lines, the median test 13; 30% of the fixed ones have 40 or more, 10% of all),
/// so among tests with the same risks the longer one is likelier flaky. The prior reads them;
/// evidence never shows them: a long test is no risk by itself, and one without a risk is never
/// warned.
pub const SIZE_FEATURES: [(usize, &str); 2] = [(20, "lines>=20"), (40, "lines>=40")];

/// The [`SIZE_FEATURES`] a test's own code reaches.
pub fn size_features(code: &str) -> Vec<&'static str> {
    let lines = code.lines().filter(|line| !line.trim().is_empty()).count();
    SIZE_FEATURES
        .iter()
        .filter(|(bound, _)| lines >= *bound)
        .map(|(_, name)| *name)
        .collect()
}

impl Signals {
    /// The features a signal prior reads: each risk's [`SignalHit::feature`], each
    /// mitigation's id and the test's size.
    pub fn features(&self) -> Vec<&'static str> {
        self.risks
            .iter()
            .map(|hit| hit.feature)
            .chain(self.mitigations.iter().copied())
            .chain(self.size.iter().copied())
            .collect()
    }
}

/// A stretch of a scanned file that a test runs.
#[derive(Debug, Clone)]
pub struct Region<'a> {
    pub scan: &'a FileScan,
    pub range: Range<usize>,
    /// `Place::Test` for the test's own code.
    pub place: Place,
    /// For a helper: the byte offset of the call in the test that runs it, so that what it does
    /// is put where the test does it.
    pub called_at: Option<usize>,
    /// The region runs as clean-up: a helper called from a `finally` block.
    pub cleanup: bool,
    /// The region is the code under test: a file of the workspace that is no test code
    /// ([`crate::context::is_test_code`]). Its state is its own to keep: a cache it fills or a
    /// registry it writes is no state the test forgot to restore.
    pub under_test: bool,
    /// For a method the test calls on an object (`indexer.start()`): the object's name, which
    /// the test's later code reads to see what the method did (`indexer.isDone()`).
    pub receiver: Option<String>,
    /// When the region runs, as the kind of the unit the test uses directly that it runs within
    /// ([`crate::context::ContextUnit::runs_in`] described: "set-up", "tear-down", "helper",
    /// ...): a helper a set-up calls runs before the test. `None`: as its own place says.
    pub runs_in: Option<&'static str>,
}

/// What the catalogue finds in a test (the first region) and what it runs (the others,
/// nearest first).
pub fn detect_regions(language: Language, regions: &[Region<'_>]) -> Signals {
    let catalogue = catalogue(language);
    let mut signals = Signals::default();
    let hits = || {
        regions.iter().flat_map(|region| {
            let hits = region.scan.within(region.range.clone());
            hits.map(move |hit| (region, &catalogue.entries[hit.entry], hit))
        })
    };
    // Mitigations and conditions first, from every region: a mitigation anywhere in what the
    // test runs cancels the risks that name it in `unless`; a risk counts only where every
    // condition it `requires` is somewhere.
    for (_, entry, _) in hits() {
        let found = match entry.kind() {
            Kind::Risk | Kind::Part => continue,
            Kind::Mitigation => &mut signals.mitigations,
            Kind::Condition => &mut signals.conditions,
        };
        if !found.contains(&entry.id.as_str()) {
            found.push(&entry.id);
        }
    }
    for (region, entry, hit) in hits() {
        let Some(category) = entry.category.filter(|_| entry.kind() == Kind::Risk) else {
            continue;
        };
        let has = |ids: &[&str], id: &String| ids.contains(&id.as_str());
        let mitigated = entry.unless.iter().any(|id| has(&signals.mitigations, id));
        let unmet = !entry.requires.iter().all(|id| has(&signals.conditions, id));
        if mitigated || unmet || signals.risks.iter().any(|found| found.id == entry.id) {
            continue;
        }
        let feature = match region.place {
            Place::Test => &entry.id,
            Place::Context { .. } => &entry.context_feature,
        };
        signals.risks.push(SignalHit {
            id: &entry.id,
            feature,
            category,
            message: &entry.message,
            text: hit.text.clone(),
            line: hit.line,
            place: region.place.clone(),
            setting: entry.setting,
        });
    }
    signals.mechanisms = mechanism::find(catalogue, regions);
    // Catalogue order, so features and evidence do not depend on where in the code a hit is.
    let position = |id: &str| catalogue.entries.iter().position(|entry| entry.id == id);
    signals.risks.sort_by_key(|hit| position(hit.id));
    signals.mitigations.sort_by_key(|id| position(id));
    signals.conditions.sort_by_key(|id| position(id));
    signals
}

/// How a snippet of one test's code (a method out of its file, as the labelled data holds it) is
/// made a file the grammar parses: Java methods need a class around them.
fn snippet_file(language: Language, code: &str) -> (String, usize) {
    match language {
        Language::Java => {
            let prefix = "class FlakesenseSnippet {\n";
            (format!("{prefix}{code}\n}}\n"), prefix.len())
        }
        Language::Python | Language::Rust => (code.to_string(), 0),
    }
}

/// What the catalogue finds in one test's code alone, without its file: the labelled data holds
/// test methods out of their files.
pub fn detect(language: Language, code: &str) -> Signals {
    let (file, start) = snippet_file(language, code);
    let mut signals = match crate::extract::parse(language, &file, None) {
        Some(tree) => {
            let scanned = scan(language, &file, &tree);
            detect_regions(
                language,
                &[Region {
                    scan: &scanned,
                    range: start..start + code.len(),
                    place: Place::Test,
                    called_at: None,
                    cleanup: false,
                    under_test: false,
                    receiver: None,
                    runs_in: None,
                }],
            )
        }
        None => Signals::default(),
    };
    // Lines count from the snippet's first line.
    let shift = u32::from(start > 0);
    for hit in &mut signals.risks {
        hit.line = hit.line.saturating_sub(shift).max(1);
    }
    for part in signals
        .mechanisms
        .iter_mut()
        .flat_map(|mechanism| &mut mechanism.parts)
    {
        part.line = part.line.saturating_sub(shift).max(1);
        part.range = part.range.start.saturating_sub(start)..part.range.end.saturating_sub(start);
    }
    signals.size = size_features(code);
    signals
}

/// A language's risks as `(id, category)`, in catalogue order.
pub fn patterns(language: Language) -> impl Iterator<Item = (&'static str, Category)> {
    catalogue(language)
        .risks()
        .filter_map(|entry| Some((entry.id.as_str(), entry.category?)))
}

/// The features of a signal prior for `language`: each risk's id, then each risk's context
/// feature, then each mitigation's id, then the [`SIZE_FEATURES`]. Unique within a language.
pub fn feature_names(language: Language) -> Vec<&'static str> {
    let catalogue = catalogue(language);
    catalogue
        .risks()
        .map(|entry| entry.id.as_str())
        .chain(
            catalogue
                .risks()
                .map(|entry| entry.context_feature.as_str()),
        )
        .chain(catalogue.mitigations().map(|entry| entry.id.as_str()))
        .chain(SIZE_FEATURES.iter().map(|(_, name)| *name))
        .collect()
}

/// The fix a language's entry suggests, by id, phrased for that language's tests.
pub fn fix(language: Language, id: &str) -> Option<&'static str> {
    let id = id.strip_suffix("@context").unwrap_or(id);
    catalogue(language)
        .entry(id)
        .map(|entry| entry.fix.as_str())
        .filter(|fix| !fix.is_empty())
}

/// The fix a language's mechanism suggests, by id.
pub fn mechanism_fix(language: Language, id: &str) -> Option<&'static str> {
    catalogue(language)
        .mechanisms
        .iter()
        .find(|mechanism| mechanism.entry.id == id)
        .map(|mechanism| mechanism.entry.fix.as_str())
}

/// The message of a language's entry, by id: what evidence shows for a feature.
pub fn message(language: Language, id: &str) -> Option<&'static str> {
    let id = id.strip_suffix("@context").unwrap_or(id);
    catalogue(language)
        .entry(id)
        .map(|entry| entry.message.as_str())
}
