//! Matching patterns against a syntax tree: every node is tried against the patterns whose top
//! node can have its kind, and a pattern's children are matched in order against the node's
//! children, backtracking so that every way a pattern matches is found, as tree-sitter does.
//! Predicates are checked as soon as their capture is bound.

use std::cell::Cell;

use tree_sitter::Node;

use super::super::values::text_of;
use super::{
    Capture, Child, Key, Kinds, Matcher, NodePattern, Pattern, Predicate, Query, Step, Test,
};

/// How deep below the root of a walk nodes are matched: far deeper than tests are found (32
/// nested classes are about 100 levels).
const MAX_DEPTH: u32 = 256;

/// What to do with a match so far: the rest of the pattern, or reporting it.
type Then<'r, 'q, 'a, 'tree> = dyn FnMut(&mut Run<'q, 'a, 'tree>) + 'r;

struct Run<'q, 'a, 'tree> {
    pattern: &'q Pattern,
    text: &'a str,
    work: &'a Cell<u64>,
    binds: Vec<Capture<'tree>>,
    /// Emptied lists of children, kept for reuse.
    spare: Vec<Vec<Kid<'tree>>>,
    /// The children of nodes below the node being matched, read once for all its patterns
    /// (38 Python patterns read the `attribute` of the same call), by node id.
    /// A list being used is taken out (`None`) until it is given back.
    read: Vec<(usize, Option<Vec<Kid<'tree>>>)>,
}

/// A child of the node being matched.
#[derive(Clone, Copy)]
struct Kid<'tree> {
    node: Node<'tree>,
    field: Option<u16>,
    named: bool,
}

/// Matches several queries in one walk of the tree; `found` gets the query's position in
/// `queries`, the pattern's index and the captures. On each node the queries are tried in order.
pub(super) fn matches<'tree>(
    queries: &[&Query],
    root: Node<'tree>,
    text: &str,
    work: &Cell<u64>,
    found: &mut dyn FnMut(usize, usize, &[Capture<'tree>]),
) {
    let Some(first) = queries.iter().find_map(|query| query.patterns.first()) else {
        return;
    };
    let mut run = Run {
        pattern: first,
        text,
        work,
        binds: Vec::new(),
        spare: Vec::new(),
        read: Vec::new(),
    };
    let mut candidates: Vec<Vec<usize>> = vec![Vec::new(); queries.len()];
    // The texts at each key's path on the current node, read once for all its patterns.
    let mut keyed: Vec<(&[u16], Vec<&str>)> = Vec::new();
    let mut cursor = root.walk();
    loop {
        if !spend(work) {
            return;
        }
        let node = cursor.node();
        for (query, candidates) in queries.iter().zip(&mut candidates) {
            let own = query
                .by_kind
                .get(usize::from(node.kind_id()))
                .map_or(&[][..], Vec::as_slice);
            candidates.clear();
            candidates.extend_from_slice(own);
            if !query.any_kind.is_empty() {
                candidates.extend_from_slice(&query.any_kind);
                candidates.sort_unstable();
            }
        }
        if candidates.iter().any(|candidates| !candidates.is_empty()) {
            // The node's children are read once for all the patterns tried on it.
            let kids = run.kids_of(node);
            keyed.clear();
            for (at, (query, candidates)) in queries.iter().zip(&candidates).enumerate() {
                for &index in candidates {
                    let pattern = &query.patterns[index];
                    if let Some(key) = &pattern.key
                        && !run.key_holds(key, &kids, &mut keyed)
                    {
                        continue;
                    }
                    run.pattern = pattern;
                    run.step(&pattern.step, node, Some(&kids), &mut |run| {
                        let binds = &run.binds;
                        if pattern
                            .predicates
                            .iter()
                            .all(|predicate| capture_pair_holds(predicate, binds, text))
                        {
                            found(at, index, binds);
                        }
                    });
                }
            }
            run.spare.push(kids);
            run.spare
                .extend(run.read.drain(..).filter_map(|(_, kids)| kids));
        }
        // Code nested deeper than `MAX_DEPTH` is not matched: each hit is read with walks up
        // its ancestors, and tree-sitter finds a node's parent by walking down from the root,
        // so a hit under 20,000 nested classes took seconds.
        if cursor.depth() < MAX_DEPTH && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn spend(work: &Cell<u64>) -> bool {
    let left = work.get();
    if left == 0 {
        return false;
    }
    work.set(left - 1);
    true
}

/// A predicate comparing two captures, checked once the whole pattern has matched: every pair
/// of their nodes, in order, must compare as the predicate says.
fn capture_pair_holds(predicate: &Predicate, binds: &[Capture<'_>], text: &str) -> bool {
    let Test::EqCapture(other) = predicate.test else {
        return true;
    };
    let nodes = |capture: u32| {
        binds
            .iter()
            .filter(move |(index, _)| *index == capture)
            .map(|(_, node)| text_of(*node, text))
    };
    nodes(predicate.capture)
        .zip(nodes(other))
        .all(|(a, b)| (a == b) == predicate.positive)
}

impl<'q, 'a, 'tree> Run<'q, 'a, 'tree> {
    /// Matches `step` on `node`, calling `then` for every way it matches, with the captures
    /// bound so far in `self.binds`.
    /// `kids` are the node's children when the caller has read them already.
    fn step(
        &mut self,
        step: &Step,
        node: Node<'tree>,
        kids: Option<&[Kid<'tree>]>,
        then: &mut Then<'_, 'q, 'a, 'tree>,
    ) {
        let text = self.text;
        let holds = step
            .captures
            .iter()
            .all(|&capture| self.holds(capture, text_of(node, text)));
        if !holds {
            return;
        }
        let mark = self.binds.len();
        self.binds
            .extend(step.captures.iter().map(|&capture| (capture, node)));
        match &step.matcher {
            Matcher::Alternatives(list) => {
                for alternative in list {
                    self.step(alternative, node, kids, then);
                }
            }
            Matcher::Node(pattern) => {
                if !accepts(pattern, node) {
                } else if pattern.children.is_empty() && !pattern.anchored_end {
                    then(self);
                } else if let Some(kids) = kids {
                    self.sequence(pattern, kids, 0, 0, then);
                } else {
                    let kids = self.read_kids(node);
                    self.sequence(pattern, &kids, 0, 0, then);
                    self.keep_read(node, kids);
                }
            }
        }
        self.binds.truncate(mark);
    }

    /// Whether the text of a node bound to `capture` meets the predicates on it.
    fn holds(&self, capture: u32, text: &str) -> bool {
        self.pattern
            .predicates
            .iter()
            .filter(|predicate| predicate.capture == capture)
            .all(|predicate| {
                let meets = match &predicate.test {
                    Test::Eq(value) => text == value,
                    Test::AnyOf(values) => values.iter().any(|value| value == text),
                    Test::Match(regex) => regex.is_match(text.as_bytes()),
                    Test::EqCapture(_) => return true,
                };
                meets == predicate.positive
            })
    }

    /// Whether the node whose children are `kids` has one of the key's texts at its path.
    fn key_holds<'k>(
        &mut self,
        key: &'k Key,
        kids: &[Kid<'tree>],
        keyed: &mut Vec<(&'k [u16], Vec<&'a str>)>,
    ) -> bool {
        let at = match keyed
            .iter()
            .position(|(path, _)| *path == key.path.as_slice())
        {
            Some(at) => at,
            None => {
                let mut texts = Vec::new();
                self.texts_at(kids, &key.path, &mut texts);
                keyed.push((&key.path, texts));
                keyed.len() - 1
            }
        };
        keyed[at]
            .1
            .iter()
            .any(|text| key.texts.iter().any(|wanted| wanted == text))
    }

    /// The texts of the nodes reached from `kids` through the fields of `path`.
    fn texts_at(&mut self, kids: &[Kid<'tree>], path: &[u16], texts: &mut Vec<&'a str>) {
        let Some((&field, rest)) = path.split_first() else {
            return;
        };
        for kid in kids.iter().filter(|kid| kid.field == Some(field)) {
            if rest.is_empty() {
                texts.push(text_of(kid.node, self.text));
            } else {
                let below = self.read_kids(kid.node);
                self.texts_at(&below, rest, texts);
                self.keep_read(kid.node, below);
            }
        }
    }

    /// The children of a node below the one being matched: read before for another pattern, or
    /// now. Give them back with [`Self::keep_read`].
    fn read_kids(&mut self, node: Node<'tree>) -> Vec<Kid<'tree>> {
        let id = node.id();
        let kept = self.read.iter_mut().find(|(read, _)| *read == id);
        match kept.and_then(|(_, kids)| kids.take()) {
            Some(kids) => kids,
            None => self.kids_of(node),
        }
    }

    /// Keeps the children of a node for the other patterns tried on the same node.
    fn keep_read(&mut self, node: Node<'tree>, kids: Vec<Kid<'tree>>) {
        let id = node.id();
        match self.read.iter_mut().find(|(read, _)| *read == id) {
            Some((_, kept @ None)) => *kept = Some(kids),
            Some(_) => self.spare.push(kids),
            None => self.read.push((id, Some(kids))),
        }
    }

    /// The children of a node with their fields, in a list taken from the spare ones.
    fn kids_of(&mut self, node: Node<'tree>) -> Vec<Kid<'tree>> {
        let mut kids = self.spare.pop().unwrap_or_default();
        kids.clear();
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                let kid = cursor.node();
                kids.push(Kid {
                    node: kid,
                    field: cursor.field_id().map(|id| id.get()),
                    named: kid.is_named(),
                });
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        kids
    }

    /// Matches the child patterns from `index` on against the kids from `from` on.
    fn sequence(
        &mut self,
        pattern: &NodePattern,
        kids: &[Kid<'tree>],
        index: usize,
        from: usize,
        then: &mut Then<'_, 'q, 'a, 'tree>,
    ) {
        let Some(child) = pattern.children.get(index) else {
            if !pattern.anchored_end || kids[from..].iter().all(|kid| !kid.named) {
                then(self);
            }
            return;
        };
        for (offset, kid) in kids[from..].iter().enumerate() {
            if !spend(self.work) {
                return;
            }
            if child.field.is_none_or(|field| kid.field == Some(field)) {
                let next = from + offset + 1;
                self.step(&child.step, kid.node, None, &mut |run: &mut Self| {
                    run.sequence(pattern, kids, index + 1, next, then);
                });
            }
            if child.anchored && (kid.named || !child_is_named(child)) {
                // Only the first named child after the previous match may match an anchored one.
                return;
            }
        }
    }
}

/// Whether a child pattern matches named nodes only (anchors skip anonymous nodes for it).
fn child_is_named(child: &Child) -> bool {
    match &child.step.matcher {
        Matcher::Node(node) => {
            !matches!(node.kinds, Kinds::AnyNode | Kinds::Of { named: false, .. })
        }
        Matcher::Alternatives(_) => true,
    }
}

/// Whether a node has the pattern's kind and none of its absent fields.
fn accepts(pattern: &NodePattern, node: Node<'_>) -> bool {
    let kind = match &pattern.kinds {
        Kinds::AnyNode => true,
        Kinds::AnyNamed => node.is_named(),
        Kinds::Of { ids, named } => node.is_named() == *named && ids.contains(&node.kind_id()),
    };
    kind && pattern
        .absent_fields
        .iter()
        .all(|&field| node.child_by_field_id(field).is_none())
}
