//! The catalogue's queries, matched in Rust. They are written in tree-sitter's query language
//! (a subset: see [`parse`]), but compiling them with tree-sitter took about 110 ms per language,
//! most of a short check, because tree-sitter analyses every pattern against the whole grammar.
//! Reading the same text into plain patterns takes well under a millisecond, and matching them
//! is a walk of the tree. A test holds the two engines to the same matches.

mod parse;
mod run;
#[cfg(test)]
mod tests;

use std::cell::Cell;

use regex::bytes::Regex;
use tree_sitter::{Language, Node};

pub use parse::QueryError;

/// The patterns of a query text, ready to match.
#[derive(Debug)]
pub struct Query {
    patterns: Vec<Pattern>,
    capture_names: Vec<String>,
    /// The patterns whose top node can be of each node kind, by kind id.
    by_kind: Vec<Vec<usize>>,
    /// The patterns whose top node can be of any kind (a wildcard).
    any_kind: Vec<usize>,
}

/// One top-level pattern.
#[derive(Debug)]
struct Pattern {
    step: Step,
    /// Conditions on captured text; a capture that matched no node meets them all, as in
    /// tree-sitter.
    predicates: Vec<Predicate>,
    /// Where the pattern starts in the query text.
    start: usize,
    /// A text the pattern needs, checked before it is tried (see [`Key`]).
    key: Option<Key>,
}

/// A cheap way to rule a pattern out: some node reached from the top node through the fields of
/// `path` must have one of `texts`, because a capture on it is compared with them (`(call
/// function: (attribute attribute: (identifier) @f (#eq? @f "sleep")))` needs a `sleep` at
/// `function`, `attribute`). Every child of a pattern must match, so a node without it cannot
/// match; the 44 Java patterns on a method call are mostly ruled out by its name.
#[derive(Debug)]
struct Key {
    path: Vec<u16>,
    texts: Vec<String>,
}

/// A pattern for one node, with the captures it binds.
#[derive(Debug)]
struct Step {
    matcher: Matcher,
    captures: Vec<u32>,
}

#[derive(Debug)]
enum Matcher {
    Node(NodePattern),
    /// `[a b c]`: any one of them.
    Alternatives(Vec<Step>),
}

#[derive(Debug)]
struct NodePattern {
    kinds: Kinds,
    /// Child patterns, matched in order against the node's children.
    children: Vec<Child>,
    /// `!field`: fields the node must not have.
    absent_fields: Vec<u16>,
    /// A `.` after the last child: it must be the last named child.
    anchored_end: bool,
}

impl NodePattern {
    fn leaf(kinds: Kinds) -> Self {
        NodePattern {
            kinds,
            children: Vec::new(),
            absent_fields: Vec::new(),
            anchored_end: false,
        }
    }
}

#[derive(Debug)]
enum Kinds {
    /// `_`: any node, named or not.
    AnyNode,
    /// `(_)`: any named node.
    AnyNamed,
    /// `(kind)` (named) or `"text"` (anonymous): every id the grammar gives that name.
    Of { ids: Vec<u16>, named: bool },
}

#[derive(Debug)]
struct Child {
    field: Option<u16>,
    /// A `.` before it: it must be the first named child, or the named sibling right after the
    /// previous child's match.
    anchored: bool,
    step: Step,
}

#[derive(Debug)]
struct Predicate {
    capture: u32,
    test: Test,
    /// False for the `not-` forms.
    positive: bool,
}

#[derive(Debug)]
enum Test {
    Eq(String),
    EqCapture(u32),
    AnyOf(Vec<String>),
    Match(Regex),
}

/// A capture of a match: the capture's index and the node.
pub type Capture<'tree> = (u32, Node<'tree>);

impl Query {
    /// Reads a query text against a grammar: unknown node kinds and fields, and syntax outside
    /// the subset, are errors.
    pub fn new(language: &Language, text: &str) -> Result<Query, QueryError> {
        let mut parser = parse::Parser::new(language, text);
        let mut patterns = parser.patterns()?;
        for pattern in &mut patterns {
            pattern.key = key_of(&pattern.step, &pattern.predicates);
        }
        let mut by_kind = vec![Vec::new(); language.node_kind_count()];
        let mut any_kind = Vec::new();
        for (index, pattern) in patterns.iter().enumerate() {
            let mut ids = Vec::new();
            if top_kinds(&pattern.step, &mut ids) {
                for id in ids {
                    if let Some(list) = by_kind.get_mut(usize::from(id))
                        && list.last() != Some(&index)
                    {
                        list.push(index);
                    }
                }
            } else {
                any_kind.push(index);
            }
        }
        Ok(Query {
            patterns,
            capture_names: parser.capture_names,
            by_kind,
            any_kind,
        })
    }

    /// Whether some pattern's top node can be of kind `id`.
    pub fn may_start_at(&self, id: u16) -> bool {
        !self.any_kind.is_empty()
            || self
                .by_kind
                .get(usize::from(id))
                .is_some_and(|patterns| !patterns.is_empty())
    }

    pub fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    /// Where pattern `index` starts in the query text.
    pub fn start_byte_for_pattern(&self, index: usize) -> usize {
        self.patterns[index].start
    }

    pub fn capture_names(&self) -> &[String] {
        &self.capture_names
    }

    pub fn capture_index_for_name(&self, name: &str) -> Option<u32> {
        let index = self.capture_names.iter().position(|known| known == name)?;
        u32::try_from(index).ok()
    }

    /// Whether pattern `index` can bind capture `capture` (in one of its alternatives at least).
    pub fn pattern_captures(&self, index: usize, capture: u32) -> bool {
        fn binds(step: &Step, capture: u32) -> bool {
            step.captures.contains(&capture)
                || match &step.matcher {
                    Matcher::Alternatives(list) => list.iter().any(|step| binds(step, capture)),
                    Matcher::Node(node) => node
                        .children
                        .iter()
                        .any(|child| binds(&child.step, capture)),
                }
        }
        binds(&self.patterns[index].step, capture)
    }

    /// Calls `found` with the pattern index and captures of every match in `root` and below,
    /// in the order of their top nodes, every way a pattern matches one node. Each node visited
    /// and each child tried takes one unit of `work`; when none is left, matching stops.
    pub fn matches<'tree>(
        &self,
        root: Node<'tree>,
        text: &str,
        work: &Cell<u64>,
        found: &mut dyn FnMut(usize, &[Capture<'tree>]),
    ) {
        run::matches(&[self], root, text, work, &mut |_, pattern, captures| {
            found(pattern, captures)
        });
    }

    /// As [`Query::matches`] for several queries in one walk of the tree: `found` also gets the
    /// query's position in `queries`. On each node the queries are tried in their order.
    pub fn matches_each<'tree>(
        queries: &[&Query],
        root: Node<'tree>,
        text: &str,
        work: &Cell<u64>,
        found: &mut dyn FnMut(usize, usize, &[Capture<'tree>]),
    ) {
        run::matches(queries, root, text, work, found);
    }
}

/// The node kinds a pattern's top node can have; false if any kind can do.
fn top_kinds(step: &Step, ids: &mut Vec<u16>) -> bool {
    match &step.matcher {
        Matcher::Alternatives(list) => list.iter().all(|step| top_kinds(step, ids)),
        Matcher::Node(node) => match &node.kinds {
            Kinds::Of { ids: own, .. } => {
                ids.extend(own);
                true
            }
            Kinds::AnyNode | Kinds::AnyNamed => false,
        },
    }
}

/// The shortest [`Key`] of a pattern: a capture under fields only, outside any alternatives,
/// whose text a predicate compares with fixed texts.
fn key_of(step: &Step, predicates: &[Predicate]) -> Option<Key> {
    let Matcher::Node(node) = &step.matcher else {
        return None;
    };
    let mut level: Vec<(Vec<u16>, &NodePattern)> = vec![(Vec::new(), node)];
    while !level.is_empty() {
        let mut next = Vec::new();
        for (path, node) in level {
            for child in &node.children {
                let (Some(field), Matcher::Node(below)) = (child.field, &child.step.matcher) else {
                    continue;
                };
                let mut path = path.clone();
                path.push(field);
                let texts = child.step.captures.iter().find_map(|&capture| {
                    predicates
                        .iter()
                        .filter(|predicate| predicate.capture == capture && predicate.positive)
                        .find_map(|predicate| match &predicate.test {
                            Test::Eq(value) => Some(vec![value.clone()]),
                            Test::AnyOf(values) => Some(values.clone()),
                            Test::EqCapture(_) | Test::Match(_) => None,
                        })
                });
                match texts {
                    Some(texts) => return Some(Key { path, texts }),
                    None => next.push((path, below)),
                }
            }
        }
        level = next;
    }
    None
}
