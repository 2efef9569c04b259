//! Runs a language's catalogue over one parsed file: the fact queries (names and their values,
//! mocks, hash collections) and every signal's pattern in one walk, keeping the matches whose
//! values meet the entry's conditions once the file's facts are known. Rust macro bodies, which
//! tree-sitter leaves as token trees, are parsed again as code so that
//! `assert!(start.elapsed() < ...)` is read too.

use std::cell::Cell;
use std::ops::Range;

use tree_sitter::{Node, Tree};

use super::catalogue::{Catalogue, Entry, Fact, catalogue};
use super::layout::{Layout, layout};
use super::placement::{
    FUNCTION_BODIES, call_name, in_skip_condition, in_text, is_fixed_local_port, is_known_local,
    is_parameter, string_or_bound,
};
use super::query::{Capture, Query};
use super::values::{self, Facts, text_of};
use crate::language::Language;

/// One file's work is bounded: matching stops after this many steps (a node visited or a child
/// tried against a pattern), and a pathological file yields the signals found so far, never a
/// hang. Counted, not timed, so that a loaded machine finds what an idle one finds: a time limit
/// made training give different weights from one run to the next. The most a real file took,
/// over every source file of fixtrain and fixbench, is 2.6 million steps (a Python file).
pub(super) const QUERY_WORK: u64 = 25_000_000;
/// Macro bodies parsed again, per file, and how deep macros inside macros are followed.
pub(super) const MAX_MACRO_BODIES: usize = 4_000;
const MAX_MACRO_DEPTH: u8 = 3;
/// A macro body longer than this is left as tokens (generated tables, embedded data).
const MAX_MACRO_BYTES: usize = 64 * 1024;

/// A match of a catalogue entry in a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The entry's position in its catalogue.
    pub entry: usize,
    /// Byte range of the matched code in the file.
    pub range: Range<usize>,
    /// The line of its start in the file, from 1.
    pub line: u32,
    /// The matched code as shown to a user: its first line, shortened.
    pub text: String,
}

/// Every match of a language's catalogue in one file, sorted by position.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileScan {
    pub hits: Vec<Hit>,
    /// What a scan of the file's next version can keep ([`super::rescan`]); `None` where
    /// matching stopped early.
    pub(super) kept: Option<Kept>,
}

/// What a scan found besides its hits: the file's layout, and its facts in the order of the walk.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Kept {
    pub layout: Layout,
    pub facts: Vec<FactFound>,
    /// The names the hits' conditions looked up, and where (see [`Facts::reads`]).
    pub reads: Vec<(usize, String)>,
    /// The work the scan took, and the macro bodies it parsed.
    pub work: u64,
    pub macro_bodies: usize,
}

/// A match of the fact queries: its name, and for a binding the value's range and node kind.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FactFound {
    pub fact: Fact,
    pub name: Range<usize>,
    pub value: Option<(Range<usize>, u16)>,
}

impl FileScan {
    /// The matches inside a byte range of the file.
    pub fn within(&self, range: Range<usize>) -> impl Iterator<Item = &Hit> {
        let first = self
            .hits
            .partition_point(|hit| hit.range.start < range.start);
        self.hits[first..]
            .iter()
            .take_while(move |hit| hit.range.start < range.end)
            .filter(move |hit| hit.range.end <= range.end)
    }
}

/// Finds every match of the catalogue of `language` in a parsed file.
pub fn scan(language: Language, source: &str, tree: &Tree) -> FileScan {
    let root = tree.root_node();
    let mut scanned = Scanned::walk(language, source, root, QUERY_WORK, MAX_MACRO_BODIES);
    let facts = facts_from(&scanned.facts, source, |at, _| scanned.node_of_fact(at));
    let hits = scanned.hits(language, source, &facts);
    let kept = scanned.complete().then(|| Kept {
        layout: layout(language, root),
        work: QUERY_WORK - scanned.work.get(),
        macro_bodies: MAX_MACRO_BODIES - scanned.macro_budget,
        reads: facts.reads.take(),
        facts: scanned.facts,
    });
    FileScan { hits, kept }
}

/// The facts and the raw matches of the signals' patterns found under one node of a tree: the
/// root, or an edited function.
pub(super) struct Scanned<'tree> {
    pub facts: Vec<FactFound>,
    /// The node of each binding's value in `facts`.
    fact_nodes: Vec<Option<Node<'tree>>>,
    /// The signals' matches, judged once the file's facts are known: a signal's conditions read
    /// facts from anywhere in the file (a field declared below the test).
    matched: Vec<(usize, Vec<Capture<'tree>>)>,
    /// The node walked, whose Rust macro bodies are read too.
    root: Node<'tree>,
    pub work: Cell<u64>,
    pub macro_budget: usize,
}

impl<'tree> Scanned<'tree> {
    /// Walks `root` and everything below it, the facts and the signals in one walk, within
    /// `work` steps (and later `macro_bodies` Rust macro bodies).
    pub fn walk(
        language: Language,
        source: &str,
        root: Node<'tree>,
        work: u64,
        macro_bodies: usize,
    ) -> Scanned<'tree> {
        let catalogue = catalogue(language);
        let captures = FactCaptures {
            name: catalogue.facts.capture_index_for_name("name"),
            value: catalogue.facts.capture_index_for_name("value"),
        };
        let mut scanned = Scanned {
            facts: Vec::new(),
            fact_nodes: Vec::new(),
            matched: Vec::new(),
            root,
            work: Cell::new(work),
            macro_budget: macro_bodies,
        };
        let Scanned {
            facts,
            fact_nodes,
            matched,
            work,
            ..
        } = &mut scanned;
        Query::matches_each(
            &[&catalogue.facts, &catalogue.query],
            root,
            source,
            work,
            &mut |query, pattern, found| {
                if query == 1 {
                    matched.push((pattern, found.to_vec()));
                } else if let Some((fact, node)) =
                    fact_found(catalogue.pattern_fact[pattern], &captures, found)
                {
                    facts.push(fact);
                    fact_nodes.push(node);
                }
            },
        );
        scanned
    }

    /// The hits of the walked node whose values meet their entries' conditions under `facts`,
    /// sorted by position.
    pub fn hits(&mut self, language: Language, source: &str, facts: &Facts<'_>) -> Vec<Hit> {
        let catalogue = catalogue(language);
        let mut hits = Vec::new();
        let part = Part::whole(source, self.root);
        for (pattern, captures) in &self.matched {
            add_hit(catalogue, &part, facts, *pattern, captures, &mut hits);
        }
        if language == Language::Rust {
            expand_macros(
                catalogue,
                &part,
                facts,
                &self.work,
                0,
                &mut self.macro_budget,
                &mut hits,
            );
        }
        hits.sort_by(|a, b| {
            (a.range.start, a.range.end, a.entry).cmp(&(b.range.start, b.range.end, b.entry))
        });
        hits.dedup();
        hits
    }

    /// The node of the value of the `at`-th fact found.
    pub fn node_of_fact(&self, at: usize) -> Option<Node<'tree>> {
        self.fact_nodes.get(at).copied().flatten()
    }

    /// Whether nothing was cut short by the budgets.
    pub fn complete(&self) -> bool {
        self.work.get() > 0 && self.macro_budget > 0
    }
}

/// A parsed piece of a file: the file itself, or a macro body parsed on its own, whose text is
/// `prefix` bytes of wrapping (one line) followed by the file's bytes from `start_in_file`, which
/// lie on the file's row `first_row_in_file`.
struct Part<'a> {
    text: &'a str,
    root: Node<'a>,
    prefix: usize,
    start_in_file: usize,
    first_row_in_file: usize,
    /// For a macro body: the whole invocation in the file, with its line and text, which a match
    /// that covers the wrapping (`assert(...)` standing for `assert!(...)`) reports instead.
    invocation: Option<(Range<usize>, u32, &'a str)>,
}

impl<'a> Part<'a> {
    /// The file's own text, walked from `root`.
    fn whole(text: &'a str, root: Node<'a>) -> Part<'a> {
        Part {
            text,
            root,
            prefix: 0,
            start_in_file: 0,
            first_row_in_file: 0,
            invocation: None,
        }
    }

    /// Where a range of this part lies in the file; `None` for the wrapping.
    fn in_file(&self, range: Range<usize>) -> Option<Range<usize>> {
        let start = range.start.checked_sub(self.prefix)? + self.start_in_file;
        let end = range.end.checked_sub(self.prefix)? + self.start_in_file;
        Some(start..end)
    }

    /// The file's line, from 1, of a node of this part.
    fn line(&self, node: Node<'_>) -> u32 {
        let row = node.start_position().row;
        let row = if self.prefix == 0 {
            row
        } else {
            self.first_row_in_file + row.saturating_sub(1)
        };
        u32::try_from(row + 1).unwrap_or(u32::MAX)
    }
}

/// The indices of the fact queries' captures `@name` and `@value`.
struct FactCaptures {
    name: Option<u32>,
    value: Option<u32>,
}

/// What a match of the fact queries says (a name's value, a mock, a hash collection), with the
/// node of a binding's value.
fn fact_found<'tree>(
    fact: Fact,
    indices: &FactCaptures,
    captures: &[Capture<'tree>],
) -> Option<(FactFound, Option<Node<'tree>>)> {
    let capture = |index: Option<u32>| {
        captures
            .iter()
            .find(|(capture, _)| Some(*capture) == index)
            .map(|(_, node)| *node)
    };
    let name = capture(indices.name)?.byte_range();
    let value = match fact {
        Fact::Binding => Some(capture(indices.value)?),
        Fact::Mock | Fact::HashCollection => None,
    };
    let found = FactFound {
        fact,
        name,
        value: value.map(|node| (node.byte_range(), node.kind_id())),
    };
    Some((found, value))
}

/// The file's facts from what the walk found, in its order: the first value bound to a name
/// wins. `node_of` gives the node of the `at`-th fact's value.
pub(super) fn facts_from<'tree>(
    found: &[FactFound],
    text: &'tree str,
    mut node_of: impl FnMut(usize, &FactFound) -> Option<Node<'tree>>,
) -> Facts<'tree> {
    let mut facts = Facts {
        text,
        ..Facts::default()
    };
    for (at, fact) in found.iter().enumerate() {
        let name = text.get(fact.name.clone()).unwrap_or("");
        match fact.fact {
            Fact::Binding => {
                if !facts.bindings.contains_key(name)
                    && let Some(node) = node_of(at, fact)
                {
                    facts.bindings.insert(name, node);
                }
            }
            Fact::Mock => {
                facts.mocks.insert(name);
            }
            Fact::HashCollection => {
                facts.hash_collections.insert(name);
            }
        }
    }
    facts
}

fn matches(
    catalogue: &Catalogue,
    part: &Part<'_>,
    facts: &Facts<'_>,
    work: &Cell<u64>,
    hits: &mut Vec<Hit>,
) {
    catalogue
        .query
        .matches(part.root, part.text, work, &mut |pattern, captures| {
            add_hit(catalogue, part, facts, pattern, captures, hits);
        });
}

/// Records a match of the signals' patterns whose values meet its entry's conditions.
fn add_hit(
    catalogue: &Catalogue,
    part: &Part<'_>,
    facts: &Facts<'_>,
    pattern: usize,
    captures: &[Capture<'_>],
    hits: &mut Vec<Hit>,
) {
    let entry_index = catalogue.pattern_entry[pattern];
    let entry = &catalogue.entries[entry_index];
    let at = captures
        .first()
        .and_then(|(_, node)| part.in_file(node.byte_range()))
        .or_else(|| part.invocation.as_ref().map(|(range, _, _)| range.clone()))
        .map_or(0, |range| range.start);
    facts.reading_at.set(at);
    let Some(hit) = accepted(catalogue, entry, captures, part, facts) else {
        return;
    };
    match (part.in_file(hit.byte_range()), &part.invocation) {
        (Some(range), _) => hits.push(Hit {
            entry: entry_index,
            range,
            line: part.line(hit),
            text: shown(text_of(hit, part.text)),
        }),
        (None, Some((range, line, text))) => hits.push(Hit {
            entry: entry_index,
            range: range.clone(),
            line: *line,
            text: shown(text),
        }),
        (None, None) => {}
    }
}

/// The reported node of a match whose values meet its entry's conditions.
fn accepted<'tree>(
    catalogue: &Catalogue,
    entry: &Entry,
    captures: &[Capture<'tree>],
    part: &Part<'_>,
    facts: &Facts<'_>,
) -> Option<Node<'tree>> {
    let names = catalogue.query.capture_names();
    let text = part.text;
    let mut hit = None;
    let mut unit_override = None;
    for &(index, node) in captures {
        if names[index as usize] == "unit" {
            unit_override = Some(values::unit_ms(text_of(node, text))?);
        }
    }
    for &(index, node) in captures {
        match names[index as usize].as_str() {
            "hit" => hit = Some(node),
            name @ ("duration" | "duration.ms" | "duration.s") => {
                let own_unit = match name {
                    "duration.ms" => Some(1.0),
                    "duration.s" => Some(1000.0),
                    _ => entry.unit.as_deref().and_then(values::default_unit_ms),
                };
                let default_ms = unit_override.or(own_unit).unwrap_or(1.0);
                let duration = facts.duration_ms(node, text, default_ms);
                if let (Some(min), Some(duration)) = (entry.min_ms, duration)
                    && duration < min
                {
                    return None;
                }
                if let Some(max) = entry.max_ms
                    && duration.is_none_or(|duration| duration > max)
                {
                    return None;
                }
            }
            "port" if !is_fixed_local_port(node, text, facts) => return None,
            "address" => {
                let value = string_or_bound(node, text, facts)?;
                let (host, _) = values::host_of(&value)?;
                if values::is_local(host) || values::is_placeholder(host) {
                    return None;
                }
            }
            "target" if is_known_local(node, text, facts) => return None,
            "receiver" if facts.is_mock(node, text) => return None,
            "owner" if is_parameter(node, text) => return None,
            "hash-receiver" if !facts.is_hash_collection(node, text) => return None,
            _ => {}
        }
    }
    let hit = hit?;
    if entry.not_in_text && in_text(hit, text) {
        return None;
    }
    if entry.not_in_skip_condition && in_skip_condition(hit, text) {
        return None;
    }
    let mut ancestor = hit.parent();
    while let Some(node) = ancestor {
        // A lambda's body runs when it is called, not as the surrounding call's argument:
        // `assertThrows(E.class, () -> new Socket("10.1.1.1", 80))` connects.
        if FUNCTION_BODIES.contains(&node.kind()) {
            break;
        }
        if entry.not_inside.iter().any(|kind| kind == node.kind()) {
            return None;
        }
        if let Some(regex) = &entry.not_inside_call_regex
            && call_name(node, text).is_some_and(|name| regex.is_match(name))
        {
            return None;
        }
        ancestor = node.parent();
    }
    Some(hit)
}

/// The matched code as a user reads it: the first line, at most 60 characters.
fn shown(code: &str) -> String {
    let line = code.lines().next().unwrap_or("").trim();
    let mut shown: String = line.chars().take(60).collect();
    if shown.len() < line.len() || code.trim().lines().nth(1).is_some() {
        shown.push_str("...");
    }
    shown
}

/// Parses the bodies of Rust macro invocations as code and runs the catalogue over them.
fn expand_macros(
    catalogue: &Catalogue,
    part: &Part<'_>,
    facts: &Facts<'_>,
    work: &Cell<u64>,
    depth: u8,
    budget: &mut usize,
    hits: &mut Vec<Hit>,
) {
    if depth >= MAX_MACRO_DEPTH {
        return;
    }
    let mut invocations = Vec::new();
    collect_macro_invocations(part.root, &mut invocations);
    for invocation in invocations {
        if *budget == 0 || work.get() == 0 {
            return;
        }
        *budget -= 1;
        let Some(body) = invocation
            .named_children(&mut invocation.walk())
            .find(|child| child.kind() == "token_tree")
        else {
            continue;
        };
        let range = body.byte_range();
        if range.len() < 2 || range.len() > MAX_MACRO_BYTES {
            continue;
        }
        let Some(inner) = part.text.get(range.start + 1..range.end - 1) else {
            continue;
        };
        let name = call_name(invocation, part.text).unwrap_or("m");
        // A braced body holds statements or items; a parenthesised or bracketed one holds
        // arguments, parsed as those of a call named after the macro, so that a hit inside
        // `assert!(...)` knows it is inside an assertion.
        let braced = part.text.as_bytes()[range.start] == b'{';
        let prefix = if braced {
            "fn flakesense_macro_body() {\n".to_string()
        } else {
            format!("fn flakesense_macro_body() {{\n{name}(")
        };
        let wrapped = format!("{prefix}{inner}{}", if braced { "\n}" } else { ");\n}" });
        let Some(tree) = crate::extract::parse(Language::Rust, &wrapped, None) else {
            continue;
        };
        let Some(start_in_file) = part.in_file(range.start + 1..range.start + 1) else {
            continue;
        };
        let Some(invocation_range) = part.in_file(invocation.byte_range()).or_else(|| {
            // An invocation inside another's wrapping stands for that one.
            part.invocation.as_ref().map(|(range, _, _)| range.clone())
        }) else {
            continue;
        };
        let invocation_line = part.line(invocation);
        let expanded = Part {
            invocation: Some((
                invocation_range,
                invocation_line,
                text_of(invocation, part.text),
            )),
            text: &wrapped,
            root: tree.root_node(),
            prefix: prefix.len(),
            start_in_file: start_in_file.start,
            first_row_in_file: usize::try_from(part.line(body)).unwrap_or(1) - 1,
        };
        matches(catalogue, &expanded, facts, work, hits);
        expand_macros(catalogue, &expanded, facts, work, depth + 1, budget, hits);
    }
}

/// The macro invocations under a node, outermost only (inner ones are found when the outer
/// body is parsed), `macro_rules!` definitions excluded.
fn collect_macro_invocations<'tree>(root: Node<'tree>, found: &mut Vec<Node<'tree>>) {
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "macro_invocation" {
            found.push(node);
            continue;
        }
        if node.kind() == "macro_definition" {
            continue;
        }
        cursor.reset(node);
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    found.sort_by_key(|node| node.start_byte());
}
