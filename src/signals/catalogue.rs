//! The catalogue as data: one entry per signal in `grammars/signals/<language>.toml`, with its
//! stable id, category, message, documentation, tree-sitter query, the conditions on the values
//! it captures, and examples that must and must not match. Adding a signal means adding an entry.

use std::sync::OnceLock;

use regex::Regex;
use serde::Deserialize;

use super::mechanism::{Mechanism, MechanismEntry, Roles};
use super::query::Query;
use crate::autofix::FixEntry;
use crate::category::Category;
use crate::language::Language;

/// Whether an entry speaks for flakiness or against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A risk: evidence of flakiness, shown to users.
    Risk,
    /// A mitigation (mocks, a frozen clock, a seeded generator): the prior reads it, users never
    /// see it as evidence.
    Mitigation,
    /// A condition (random draws): neither evidence nor a feature, only what a risk that
    /// `requires` it needs to count.
    Condition,
    /// A part of a mechanism (an assertion, a join, a thread started): neither evidence nor a
    /// feature alone, only what a [`MechanismEntry`] is made of.
    Part,
}

/// One signal of the catalogue, as written in its TOML file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Entry {
    /// Stable within a language: models key their weights on it, never on the message.
    pub id: String,
    /// The cause it points to; mitigations have none.
    #[serde(default, deserialize_with = "category")]
    pub category: Option<Category>,
    /// What a user reads next to the matched code: "fixed sleep".
    pub message: String,
    /// What it matches.
    pub what: String,
    /// Why it makes tests flaky, with the study behind it (empty for a part).
    #[serde(default)]
    pub why: String,
    /// How to fix it (risks) or why it helps (mitigations); empty for a part.
    #[serde(default)]
    pub fix: String,
    /// The query, in tree-sitter's query language (see [`super::query`] for the subset). It
    /// must capture the reported node as `@hit`; the captures named in [`crate::signals`]
    /// (`@duration`, `@unit`, `@port`, `@address`, `@receiver`, `@hash-receiver`, `@program`)
    /// add conditions on values.
    pub query: String,
    /// The unit of a bare number captured as `@duration`: `ns`, `us`, `ms`, `s` or `min`.
    #[serde(default)]
    pub unit: Option<String>,
    /// A duration shorter than this does not match (a sleep of zero only yields); an unknown
    /// duration passes.
    #[serde(default)]
    pub min_ms: Option<f64>,
    /// A duration longer than this does not match (a generous timeout is not tight); an unknown
    /// duration fails.
    #[serde(default)]
    pub max_ms: Option<f64>,
    /// Node kinds the hit must not be inside (a platform check in a `skipif` decorator states
    /// the condition instead of depending on it). Like [`Entry::not_inside_call`], it is looked
    /// for up to the nearest enclosing lambda or closure, whose body runs when it is called.
    #[serde(default)]
    pub not_inside: Vec<String>,
    /// Node kinds the hit must be inside, looked for the same way as [`Entry::not_inside`]: a
    /// sleep inside a loop polls a condition.
    #[serde(default)]
    pub inside: Vec<String>,
    /// A regular expression on the names of calls the hit must not be an argument of (a URL
    /// compared in an assertion is not fetched); a lambda given to such a call still runs
    /// (`assertThrows(E.class, () -> new ServerSocket(8080))` binds a port).
    #[serde(default)]
    pub not_inside_call: Option<String>,
    /// The hit does not count where its value only becomes part of a string: an operand of a
    /// string concatenation (`"table_" + System.currentTimeMillis()`) or an f-string's
    /// interpolation (`f"run-{time.time()}"`) is a unique name, not a time the test depends on.
    #[serde(default)]
    pub not_in_text: bool,
    /// The hit does not count in the condition of an `if` whose body skips the test
    /// (`if sys.platform == "win32": pytest.skip(...)`, `if (IS_OS_WINDOWS) return;`): the
    /// condition is stated, as a `skipif` decorator states it.
    #[serde(default)]
    pub not_in_skip_condition: bool,
    /// Mitigations of the same language that make this entry no risk when the test or what it
    /// runs has one: a tokio sleep under a paused clock does not wait, randomness after a seed
    /// repeats.
    #[serde(default)]
    pub unless: Vec<String>,
    /// Conditions of the same language the test or what it runs must have for this entry to
    /// count: a tolerance is a risk where the values compared were drawn at random.
    #[serde(default)]
    pub requires: Vec<String>,
    /// The entry says what kind of test this is (an async test), not what the test does: it is
    /// weighed and shown like any risk, but after the risks that are acts, and it names a
    /// warning's cause only when no act does.
    #[serde(default)]
    pub setting: bool,
    /// Code that must match, each a whole test (Java: a method, wrapped in a class for parsing).
    #[serde(default)]
    pub matches: Vec<String>,
    /// Code that must not match.
    #[serde(default)]
    pub ignores: Vec<String>,
    #[serde(skip)]
    pub kind: Option<Kind>,
    /// The prior's feature for a hit found only in a test's context: `fixed-sleep@context`.
    #[serde(skip)]
    pub context_feature: String,
    #[serde(skip)]
    pub not_inside_call_regex: Option<Regex>,
}

impl Entry {
    pub fn kind(&self) -> Kind {
        self.kind.unwrap_or(Kind::Risk)
    }
}

/// A fact query: names bound to values, mocks, hash-ordered collections.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FactEntry {
    pub fact: Fact,
    /// Captures `@name`, and `@value` for a binding.
    pub query: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fact {
    Binding,
    Mock,
    HashCollection,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    fact: Vec<FactEntry>,
    #[serde(default)]
    signal: Vec<Entry>,
    #[serde(default)]
    mitigation: Vec<Entry>,
    #[serde(default)]
    condition: Vec<Entry>,
    #[serde(default)]
    part: Vec<Entry>,
    #[serde(default)]
    mechanism: Vec<MechanismEntry>,
    #[serde(default)]
    fix: Vec<FixEntry>,
}

fn category<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Category>, D::Error> {
    let name = String::deserialize(deserializer)?;
    Category::from_name(&name)
        .map(Some)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown category {name:?}")))
}

/// A language's catalogue, compiled: its entries (risks first, in file order, then mitigations,
/// then conditions) and one query holding every pattern, so a file is walked once.
#[derive(Debug)]
pub struct Catalogue {
    pub language: Language,
    pub entries: Vec<Entry>,
    pub query: Query,
    /// The entry of each pattern of `query`.
    pub pattern_entry: Vec<usize>,
    pub facts: Query,
    /// The fact of each pattern of `facts`.
    pub pattern_fact: Vec<Fact>,
    /// The mechanisms, each with the entries it is made of.
    pub mechanisms: Vec<Mechanism>,
    /// Per entry: whether some mechanism names it.
    pub in_mechanism: Vec<bool>,
    /// The fixes of the mechanisms whose cure is mechanical ([`crate::autofix`]).
    pub fixes: Vec<FixEntry>,
}

pub(crate) fn source_of(language: Language) -> &'static str {
    match language {
        Language::Java => include_str!("../../grammars/signals/java.toml"),
        Language::Python => include_str!("../../grammars/signals/python.toml"),
        Language::Rust => include_str!("../../grammars/signals/rust.toml"),
    }
}

/// The catalogue of `language`, compiled on first use. The files are part of the binary, and
/// `every_catalogue_compiles` guards them.
pub fn catalogue(language: Language) -> &'static Catalogue {
    static JAVA: OnceLock<Catalogue> = OnceLock::new();
    static PYTHON: OnceLock<Catalogue> = OnceLock::new();
    static RUST: OnceLock<Catalogue> = OnceLock::new();
    let cell = match language {
        Language::Java => &JAVA,
        Language::Python => &PYTHON,
        Language::Rust => &RUST,
    };
    cell.get_or_init(|| compile(language).unwrap_or_else(|error| panic!("{error}")))
}

/// Compiles a catalogue file, checking what a query cannot say about itself.
pub fn compile(language: Language) -> Result<Catalogue, String> {
    let where_ = format!("grammars/signals/{language}.toml");
    let file: File =
        toml::from_str(source_of(language)).map_err(|error| format!("{where_}: {error}"))?;
    let mut entries = Vec::new();
    for (kind, list) in [
        (Kind::Risk, file.signal),
        (Kind::Mitigation, file.mitigation),
        (Kind::Condition, file.condition),
        (Kind::Part, file.part),
    ] {
        for mut entry in list {
            entry.kind = Some(kind);
            entry.context_feature = format!("{}@context", entry.id);
            if (kind == Kind::Risk) != entry.category.is_some() {
                return Err(format!(
                    "{where_}: {} must have a category if and only if it is a signal",
                    entry.id
                ));
            }
            if let Some(unit) = &entry.unit
                && super::values::default_unit_ms(unit).is_none()
            {
                return Err(format!("{where_}: {}: unknown unit {unit:?}", entry.id));
            }
            entry.not_inside_call_regex = match &entry.not_inside_call {
                Some(pattern) => Some(
                    Regex::new(pattern)
                        .map_err(|error| format!("{where_}: {}: {error}", entry.id))?,
                ),
                None => None,
            };
            entries.push(entry);
        }
    }
    for entry in &entries {
        let named = entry
            .unless
            .iter()
            .map(|id| ("unless", id, Kind::Mitigation));
        let required = entry
            .requires
            .iter()
            .map(|id| ("requires", id, Kind::Condition));
        for (field, id, kind) in named.chain(required) {
            if !entries
                .iter()
                .any(|other| other.id == *id && other.kind() == kind)
            {
                let kind = format!("{kind:?}").to_lowercase();
                return Err(format!(
                    "{where_}: {}: `{field}` names {id:?}, which is not a {kind}",
                    entry.id
                ));
            }
        }
    }
    let mut ids: Vec<&str> = entries.iter().map(|entry| entry.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(pair) = ids.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(format!("{where_}: the id {} is used twice", pair[0]));
    }
    let grammar = language.grammar();
    // One query for the whole catalogue, so that a file is walked once; a pattern's entry is
    // the one whose text holds the pattern's first byte.
    let mut combined = String::new();
    let mut entry_ends = Vec::new();
    for entry in &entries {
        combined.push_str(&entry.query);
        combined.push('\n');
        entry_ends.push(combined.len());
    }
    let query = Query::new(&grammar, &combined).map_err(|error| {
        let at = entry_ends.partition_point(|&end| end <= error.offset);
        let id = entries.get(at).map_or("?", |entry| entry.id.as_str());
        let start = if at == 0 { 0 } else { entry_ends[at - 1] };
        let offset = error.offset - start;
        format!(
            "{where_}: {id}: {} (at byte {offset} of its query)",
            error.message
        )
    })?;
    let hit = query.capture_index_for_name("hit");
    let mut pattern_entry = Vec::with_capacity(query.pattern_count());
    for pattern in 0..query.pattern_count() {
        let start = query.start_byte_for_pattern(pattern);
        let position = entry_ends.partition_point(|&end| end <= start);
        let captures_hit = hit.is_some_and(|hit| query.pattern_captures(pattern, hit));
        if !captures_hit {
            return Err(format!(
                "{where_}: {} has a pattern that captures no @hit",
                entries[position].id
            ));
        }
        pattern_entry.push(position);
    }
    if let Some(unknown) = query
        .capture_names()
        .iter()
        .find(|name| !name.starts_with('_') && !super::CAPTURES.contains(&name.as_str()))
    {
        return Err(format!(
            "{where_}: a query uses an unknown capture @{unknown}"
        ));
    }
    let mut facts_source = String::new();
    let mut fact_ends = Vec::new();
    for fact in &file.fact {
        facts_source.push_str(&fact.query);
        facts_source.push('\n');
        fact_ends.push(facts_source.len());
    }
    let facts =
        Query::new(&grammar, &facts_source).map_err(|error| format!("{where_}: {error}"))?;
    let uses = |pattern: usize, capture: &str| {
        facts
            .capture_index_for_name(capture)
            .is_some_and(|index| facts.pattern_captures(pattern, index))
    };
    let mut pattern_fact = Vec::with_capacity(facts.pattern_count());
    for pattern in 0..facts.pattern_count() {
        let start = facts.start_byte_for_pattern(pattern);
        let fact = file.fact[fact_ends.partition_point(|&end| end <= start)].fact;
        if !uses(pattern, "name") || (fact == Fact::Binding) != uses(pattern, "value") {
            return Err(format!(
                "{where_}: a {fact:?} fact captures @name (and @value for a binding)"
            ));
        }
        pattern_fact.push(fact);
    }
    let (mechanisms, in_mechanism) = compile_mechanisms(&where_, &entries, file.mechanism)?;
    let mut fixes = file.fix;
    let mechanism_ids: Vec<&str> = mechanisms.iter().map(|m| m.entry.id.as_str()).collect();
    for fix in &mut fixes {
        fix.compile(&mechanism_ids)
            .map_err(|error| format!("{where_}: {error}"))?;
    }
    if let Some(id) = duplicate_id(fixes.iter().map(|fix| fix.id.as_str())) {
        return Err(format!("{where_}: the fix id {id} is used twice"));
    }
    Ok(Catalogue {
        language,
        entries,
        query,
        pattern_entry,
        facts,
        pattern_fact,
        mechanisms,
        in_mechanism,
        fixes,
    })
}

/// The first id that comes twice.
fn duplicate_id<'a>(ids: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = std::collections::HashSet::new();
    ids.into_iter().find(|id| !seen.insert(*id))
}

/// Resolves each mechanism's parts to the entries they name, checking that each exists, that
/// the shape has what it needs, and that no id is used twice.
fn compile_mechanisms(
    where_: &str,
    entries: &[Entry],
    written: Vec<MechanismEntry>,
) -> Result<(Vec<Mechanism>, Vec<bool>), String> {
    let mut in_mechanism = vec![false; entries.len()];
    let mut mechanisms: Vec<Mechanism> = Vec::new();
    for entry in written {
        entry
            .check_shape()
            .map_err(|error| format!("{where_}: {error}"))?;
        if entries.iter().any(|other| other.id == entry.id)
            || mechanisms.iter().any(|other| other.entry.id == entry.id)
        {
            return Err(format!("{where_}: the id {} is used twice", entry.id));
        }
        let mut roles = Roles::default();
        for (field, id) in entry.named_ids() {
            let Some(index) = entries.iter().position(|other| other.id == id) else {
                return Err(format!(
                    "{where_}: {}: `{field}` names {id:?}, which is no entry",
                    entry.id
                ));
            };
            in_mechanism[index] = true;
            let list = match field {
                "start" => &mut roles.start,
                "wait" => &mut roles.wait,
                "check" => &mut roles.check,
                "write" => &mut roles.write,
                "restore" => &mut roles.restore,
                "cures" => &mut roles.cures,
                "expects" => &mut roles.expects,
                _ => &mut roles.unless,
            };
            list.push(index);
        }
        mechanisms.push(Mechanism { entry, roles });
    }
    Ok((mechanisms, in_mechanism))
}

impl Catalogue {
    pub fn risks(&self) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(|entry| entry.kind() == Kind::Risk)
    }

    pub fn mitigations(&self) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(|entry| entry.kind() == Kind::Mitigation)
    }

    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.id == id)
    }
}
