//! Where each test starts once the attributes directly before it count as part of it.
//!
//! This works on sorted byte ranges rather than walking the tree: tree-sitter finds a node's
//! previous sibling by scanning the siblings, which turns large flat files quadratic.

use std::ops::Range;

/// Where a test starting at `start` begins once the attached nodes directly before it (Rust
/// attributes and doc comments) count as part of it. Plain comments between them are crossed but do
/// not move the start; anything other than whitespace stops the walk.
///
/// `attached` and `comments` are sorted by start and may share ranges (a doc comment is both).
pub(super) fn start_with_attached(
    source: &str,
    start: usize,
    attached: &[Range<usize>],
    comments: &[Range<usize>],
) -> usize {
    let before = |ranges: &[Range<usize>], at: usize| {
        let count = ranges.partition_point(|range| range.end <= at);
        count
            .checked_sub(1)
            .and_then(|index| ranges.get(index))
            .cloned()
    };
    let mut widened = start;
    let mut walked = start;
    loop {
        let attached_before = before(attached, walked);
        let comment_before = before(comments, walked);
        // The nearer of the two; a doc comment found in both lists counts as attached.
        let (range, is_attached) = match (attached_before, comment_before) {
            (Some(attached), Some(comment)) if comment.end > attached.end => (comment, false),
            (Some(attached), _) => (attached, true),
            (None, Some(comment)) => (comment, false),
            (None, None) => break,
        };
        let only_whitespace_between = source
            .get(range.end..walked)
            .is_some_and(|gap| gap.trim().is_empty());
        if !only_whitespace_between {
            break;
        }
        walked = range.start;
        if is_attached {
            widened = range.start;
        }
    }
    widened
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_moves_over_attributes_and_doc_comments_but_not_plain_comments() {
        let source = "fn a() {}\n// plain\n/// doc\n#[test]\n// between\n#[ignore]\nfn b() {}";
        let at = |text: &str| source.find(text).unwrap_or(usize::MAX);
        let range = |text: &str| at(text)..at(text) + text.len();
        let doc = at("/// doc")..at("#[test]");
        let attached = [doc.clone(), range("#[test]"), range("#[ignore]")];
        let comments = [range("// plain"), doc, range("// between")];
        let start = start_with_attached(source, at("fn b"), &attached, &comments);
        assert_eq!(start, at("/// doc"));
    }

    #[test]
    fn code_between_stops_the_widening() {
        let source = "#[test]\nstruct S;\nfn b() {}";
        let attribute = 0..source.find('\n').unwrap_or(0);
        let start = start_with_attached(source, 18, std::slice::from_ref(&attribute), &[]);
        assert_eq!(start, 18);
    }
}
