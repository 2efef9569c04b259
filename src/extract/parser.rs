//! The parser of each thread, within the budget of one extraction.

use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::ops::ControlFlow;
use std::sync::Mutex;
use std::time::Duration;

use tree_sitter::{ParseOptions, Parser};

use super::budget::{Budget, Spent};
use super::walk::Stop;
use crate::language::Language;

thread_local! {
    // A parser is not `Sync`; one per thread spares re-allocating its buffers on every keystroke.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Texts whose parse spent its budget, by a hash of their language, text and range, with what
/// ran out and the budget it had: such a text is not parsed again in this process within a budget
/// no larger. A check parses a file for its tests
/// and again for the workspace's signal shares, and a parse of hostile text overshoots its
/// budget while tree-sitter's error recovery works between two checks of it: a check of one
/// 16 KB broken call chain found by the fuzzer parsed it four times, in 10 s of processor time.
static SPENT: Mutex<Vec<(u64, Spent, Duration, usize)>> = Mutex::new(Vec::new());
/// How many such texts are remembered; the oldest is forgotten first.
const SPENT_REMEMBERED: usize = 1024;

fn text_key(language: Language, source: &str, range: Option<tree_sitter::Range>) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    language.hash(&mut hasher);
    source.hash(&mut hasher);
    range
        .map(|range| (range.start_byte, range.end_byte))
        .hash(&mut hasher);
    hasher.finish()
}

fn spent_before(key: u64, budget: &Budget) -> Option<Spent> {
    let spent = SPENT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    spent
        .iter()
        .find(|(known, what, time, memory)| {
            *known == key
                && match what {
                    Spent::Time => budget.time() <= *time,
                    Spent::Memory => budget.memory() <= *memory,
                }
        })
        .map(|(_, what, _, _)| *what)
}

fn remember_spent(key: u64, what: Spent, budget: &Budget) {
    let mut spent = SPENT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if spent.len() >= SPENT_REMEMBERED {
        spent.remove(0);
    }
    spent.push((key, what, budget.time(), budget.memory()));
}

/// Parses `source`, or only `range` of it, stopping when `budget` is spent.
pub(super) fn parse_within(
    language: Language,
    source: &str,
    old_tree: Option<&tree_sitter::Tree>,
    range: Option<tree_sitter::Range>,
    budget: &Budget,
) -> Result<Option<tree_sitter::Tree>, Stop> {
    let grammar = language.grammar();
    let old_tree = old_tree.filter(|tree| *tree.language() == grammar);
    let key = text_key(language, source, range);
    if let Some(what) = spent_before(key, budget) {
        return Err(Stop::Parse(what));
    }
    PARSER.with_borrow_mut(|parser| {
        if parser.set_language(&grammar).is_err() {
            return Ok(None);
        }
        if let Some(range) = range
            && parser.set_included_ranges(&[range]).is_err()
        {
            return Ok(None);
        }
        let bytes = source.as_bytes();
        let mut spent = None;
        let mut progress = |_: &tree_sitter::ParseState| {
            spent = budget.spent();
            if spent.is_some() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let tree = parser.parse_with_options(
            &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
            old_tree,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        );
        if range.is_some() {
            // An empty list restores parsing the whole text, for the next file.
            let _ = parser.set_included_ranges(&[]);
        }
        match tree {
            Some(tree) => Ok(Some(tree)),
            None => {
                // A cancelled parse would otherwise resume on the next call, with another text.
                parser.reset();
                let what = spent.unwrap_or(Spent::Time);
                remember_spent(key, what, budget);
                Err(Stop::Parse(what))
            }
        }
    })
}

/// Parses one range of `source` (a Rust macro's body) within the budget of the file's extraction.
pub(super) fn parse_range(
    language: Language,
    source: &str,
    range: tree_sitter::Range,
    budget: &Budget,
) -> Result<Option<tree_sitter::Tree>, Stop> {
    parse_within(language, source, None, Some(range), budget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::budget::Limits;

    #[test]
    fn a_text_that_spent_its_budget_is_parsed_again_only_within_a_larger_one() {
        let text: String = (0..3_000)
            .map(|n| format!("class C{n} {{ void m() {{ int x = {n}; }} }}\n"))
            .collect();
        let nothing = Limits {
            parse_time: std::time::Duration::ZERO,
            ..Limits::DEFAULT
        };
        let spent = parse_within(Language::Java, &text, None, None, &Budget::start(&nothing));
        assert!(matches!(spent, Err(Stop::Parse(Spent::Time))), "{spent:?}");
        // Within the same budget it is not parsed again; a larger one parses it.
        let again = parse_within(Language::Java, &text, None, None, &Budget::start(&nothing));
        assert!(matches!(again, Err(Stop::Parse(Spent::Time))), "{again:?}");
        let larger = Budget::start(&Limits::DEFAULT);
        let parsed = parse_within(Language::Java, &text, None, None, &larger);
        assert!(matches!(parsed, Ok(Some(_))), "{parsed:?}");
    }
}
