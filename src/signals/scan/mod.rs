//! Runs a language's catalogue over one parsed file: the fact queries (names and their values,
//! mocks, hash collections) and every signal's pattern in one walk, keeping the matches whose
//! values meet the entry's conditions once the file's facts are known ([`part`]). Rust macro
//! bodies, which tree-sitter leaves as token trees, are parsed again as code ([`macros`]).

mod macros;
mod names;
mod part;
pub mod traits;

use std::cell::Cell;
use std::ops::Range;

use tree_sitter::{Node, Tree};

use super::catalogue::{Fact, catalogue};
use super::layout::{Layout, layout};
use super::query::{Capture, Query};
use super::values::Facts;
use crate::language::Language;
use macros::expand_macros;
use part::{Part, add_hit};

/// One file's work is bounded: matching stops after this many steps (a node visited or a child
/// tried against a pattern), and a pathological file yields the signals found so far, never a
/// hang. Counted, not timed, so that a loaded machine finds what an idle one finds: a time limit
/// made training give different weights from one run to the next. The most a real file took,
/// over every source file of fixtrain and fixbench, is 2.6 million steps (a Python file).
pub(super) const QUERY_WORK: u64 = 25_000_000;
/// Macro bodies parsed again, per file.
pub(super) const MAX_MACRO_BODIES: usize = 4_000;

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
    /// What a mechanism reads of it.
    pub traits: traits::Traits,
}

/// Every match of a language's catalogue in one file, sorted by position.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileScan {
    pub hits: Vec<Hit>,
    /// What a scan of the file's next version can keep ([`rescan`](mod@super::rescan)); `None` where
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

/// Sorts hits by position (then entry) and drops repeats: the order of a [`FileScan`], which a
/// rescan must give as a whole scan does.
pub(super) fn in_file_order(hits: &mut Vec<Hit>) {
    hits.sort_by(|a, b| {
        (a.range.start, a.range.end, a.entry).cmp(&(b.range.start, b.range.end, b.entry))
    });
    hits.dedup();
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
        in_file_order(&mut hits);
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

/// The file's facts from what the walk found, in its order: every value bound to a name, with
/// the function it is bound in. `node_of` gives the node of the `at`-th fact's value.
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
                if let Some(node) = node_of(at, fact) {
                    let scope = super::values::function_scope(node);
                    facts.bindings.entry(name).or_default().push((scope, node));
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
