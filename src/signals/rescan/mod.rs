//! Scanning a file again after an edit inside one of its functions, as the language server does
//! on a keystroke: what the last scan found outside that function is kept (moved by the edit's
//! length) and only the function is walked. The result is what a full [`scan`] of the new text
//! finds; where that cannot be shown cheaply (the edit reaches outside one function, changes the
//! file's facts, or the skeleton has syntax errors), the file is scanned whole.

use std::ops::Range;

use rustc_hash::{FxHashMap, FxHashSet};
use tree_sitter::Tree;

use super::catalogue::Fact;
use super::layout::{self, body_start, catalogue_allows_splicing, layout};
use super::scan::{FactFound, FileScan, Kept, Scanned, facts_from, in_file_order, scan};
use super::scan::{MAX_MACRO_BODIES, QUERY_WORK};
use crate::language::Language;

/// Where an edit lies: the function it was confined to, before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    /// The edited function's byte range in the last version of the file.
    pub before: Range<usize>,
    /// Its range in the new version.
    pub after: Range<usize>,
    /// Whether the edit lies in the function's body: its name, parameters, annotations and
    /// decorators are as they were.
    pub in_body: bool,
}

impl Splice {
    /// The splice of an unchanged text of `len` bytes: every range stays.
    fn unchanged(len: usize) -> Splice {
        Splice {
            before: len..len,
            after: len..len,
            in_body: true,
        }
    }

    /// Where a range of the last version that spans the whole edited function (a test with its
    /// doc comment, the function itself) lies in the new one; else as [`Splice::moved`].
    pub fn around(&self, range: &Range<usize>) -> Option<Range<usize>> {
        if range.start <= self.before.start && self.before.end <= range.end {
            Some(range.start..range.end - self.before.end + self.after.end)
        } else {
            self.moved(range)
        }
    }

    /// Where a range of the last version lies in the new one; `None` when it overlaps the edited
    /// function, whose insides changed.
    pub fn moved(&self, range: &Range<usize>) -> Option<Range<usize>> {
        if range.end <= self.before.start {
            Some(range.clone())
        } else if range.start >= self.before.end {
            let shift = |at: usize| at - self.before.end + self.after.end;
            Some(shift(range.start)..shift(range.end))
        } else {
            None
        }
    }
}

/// Scans `source` (parsed as `tree`), keeping what `previous`, the scan of `previous_text`, found
/// outside the one function the edit changed. The splice says which function that was, or is
/// `None` when the file was scanned whole.
pub fn rescan(
    language: Language,
    previous: &FileScan,
    previous_text: &str,
    source: &str,
    tree: &Tree,
) -> (FileScan, Option<Splice>) {
    match splice(language, previous, previous_text, source, tree) {
        Some((scanned, splice)) => (scanned, Some(splice)),
        None => (scan(language, source, tree), None),
    }
}

fn splice(
    language: Language,
    previous: &FileScan,
    previous_text: &str,
    source: &str,
    tree: &Tree,
) -> Option<(FileScan, Splice)> {
    let kept = previous.kept.as_ref()?;
    if kept.layout.skeleton_errors || !catalogue_allows_splicing(language) {
        return None;
    }
    if previous_text == source {
        return Some((previous.clone(), Splice::unchanged(source.len())));
    }
    // Half of each budget for what was kept, half for the function: where the sum fits, a full
    // scan is not cut short either, and finds the same.
    if kept.work > QUERY_WORK / 2 || kept.macro_bodies > MAX_MACRO_BODIES / 2 {
        return None;
    }
    let (start, old_end, new_end) = changed(previous_text.as_bytes(), source.as_bytes());
    let chunks = &kept.layout.chunks;
    let at = chunks
        .iter()
        .position(|chunk| chunk.start <= start && old_end <= chunk.end)?;
    let before = chunks[at].clone();
    let after = before.start..before.end + source.len() - previous_text.len();
    let splice = Splice {
        before: before.clone(),
        after: after.clone(),
        in_body: false,
    };
    let root = tree.root_node();
    let now = layout(language, root);
    let same_layout = now.chunks.len() == chunks.len()
        && now
            .chunks
            .iter()
            .zip(chunks)
            .enumerate()
            .all(|(index, (new, old))| {
                let expected = if index == at {
                    Some(after.clone())
                } else {
                    splice.moved(old)
                };
                expected.as_ref() == Some(new)
            });
    if now.skeleton_errors || !same_layout {
        return None;
    }
    let node = layout::chunk_at(language, root, &after)?;

    let mut scanned = Scanned::walk(language, source, node, QUERY_WORK / 2, MAX_MACRO_BODIES / 2);
    let before_count = kept
        .facts
        .iter()
        .take_while(|fact| fact.name.end <= before.start)
        .count();
    let mut facts: Vec<FactFound> = kept.facts[..before_count].to_vec();
    let own = facts.len()..facts.len() + scanned.facts.len();
    facts.extend(scanned.facts.iter().cloned());
    for fact in &kept.facts[before_count..] {
        if fact.name.start < before.end {
            continue;
        }
        let moved = |range: &Range<usize>| splice.moved(range);
        facts.push(FactFound {
            fact: fact.fact,
            name: moved(&fact.name)?,
            value: match &fact.value {
                Some((range, kind)) => Some((moved(range)?, *kind)),
                None => None,
            },
        });
    }
    // A fact the edit changed may change a hit elsewhere only where that hit's conditions
    // looked its name up.
    let changed_names = differences(&texts(&kept.facts, previous_text), &texts(&facts, source));
    let read_elsewhere = kept
        .reads
        .iter()
        .any(|(at, name)| !before.contains(at) && changed_names.contains(name.as_str()));
    if read_elsewhere {
        return None;
    }
    let mut lost = false;
    let file_facts = facts_from(&facts, source, |index, fact| {
        let node = if own.contains(&index) {
            scanned.node_of_fact(index - own.start)
        } else {
            fact.value.as_ref().and_then(|(range, kind)| {
                layout::spanning(root, range, |node| node.kind_id() == *kind)
            })
        };
        lost |= node.is_none();
        node
    });
    let found = scanned.hits(language, source, &file_facts);
    if lost || !scanned.complete() {
        return None;
    }
    let mut reads: Vec<(usize, String)> = kept
        .reads
        .iter()
        .filter(|(at, _)| !before.contains(at))
        .map(|(at, name)| {
            (
                splice.moved(&(*at..*at)).map_or(*at, |range| range.start),
                name.clone(),
            )
        })
        .collect();
    reads.extend(file_facts.reads.take());
    let lines = count_lines(&source.as_bytes()[start..new_end]) as i64
        - count_lines(&previous_text.as_bytes()[start..old_end]) as i64;
    let mut hits = Vec::with_capacity(previous.hits.len() + found.len());
    for hit in &previous.hits {
        if before.start <= hit.range.start && hit.range.end <= before.end {
            continue;
        }
        let mut hit = hit.clone();
        if hit.range.start >= before.end {
            hit.line = u32::try_from(i64::from(hit.line) + lines).ok()?;
        }
        hit.range = splice.moved(&hit.range)?;
        hits.push(hit);
    }
    hits.extend(found);
    in_file_order(&mut hits);
    let kept = Kept {
        layout: now,
        facts,
        reads,
        work: kept.work + (QUERY_WORK / 2 - scanned.work.get()),
        macro_bodies: kept.macro_bodies + (MAX_MACRO_BODIES / 2 - scanned.macro_budget),
    };
    let in_body = body_start(node).is_some_and(|body| start >= body);
    Some((
        FileScan {
            hits,
            kept: Some(kept),
        },
        Splice { in_body, ..splice },
    ))
}

/// The bytes an edit changed: where the two texts start to differ, and where the rest they share
/// begins in each.
fn changed(old: &[u8], new: &[u8]) -> (usize, usize, usize) {
    let start = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - start;
    let common_end = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    (start, old.len() - common_end, new.len() - common_end)
}

fn count_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|byte| **byte == b'\n').count()
}

/// The facts as text, which is all a scan reads of them: the values bound to each name, the
/// mocks and the hash collections.
type FactTexts<'a> = (
    FxHashMap<&'a str, Vec<&'a str>>,
    FxHashSet<&'a str>,
    FxHashSet<&'a str>,
);

fn texts<'a>(facts: &[FactFound], text: &'a str) -> FactTexts<'a> {
    let at = |range: &Range<usize>| text.get(range.clone()).unwrap_or("");
    let mut texts = FactTexts::default();
    for fact in facts {
        let name = at(&fact.name);
        match (fact.fact, &fact.value) {
            (Fact::Binding, Some((value, _))) => {
                texts.0.entry(name).or_default().push(at(value));
            }
            (Fact::Binding, None) => {}
            (Fact::Mock, _) => {
                texts.1.insert(name);
            }
            (Fact::HashCollection, _) => {
                texts.2.insert(name);
            }
        }
    }
    texts
}

/// The names whose facts differ between `a` and `b`.
fn differences<'a>(a: &FactTexts<'a>, b: &FactTexts<'a>) -> FxHashSet<&'a str> {
    let mut names = FxHashSet::default();
    for (name, value) in &a.0 {
        if b.0.get(name) != Some(value) {
            names.insert(*name);
        }
    }
    for (name, value) in &b.0 {
        if a.0.get(name) != Some(value) {
            names.insert(*name);
        }
    }
    names.extend(a.1.symmetric_difference(&b.1));
    names.extend(a.2.symmetric_difference(&b.2));
    names
}

#[cfg(test)]
mod tests;
