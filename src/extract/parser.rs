//! The parser of each thread, within the budget of one extraction.

use std::cell::RefCell;
use std::ops::ControlFlow;

use tree_sitter::{ParseOptions, Parser};

use super::budget::{Budget, Spent};
use super::walk::Stop;
use crate::language::Language;

thread_local! {
    // A parser is not `Sync`; one per thread spares re-allocating its buffers on every keystroke.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
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
                Err(Stop::Parse(spent.unwrap_or(Spent::Time)))
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
