//! Where each test starts once the attributes directly before it count as part of it, and which
//! comments lie directly above it.
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

/// The indices of the comments forming the block directly above `start`: each separated from what
/// follows it by whitespace holding at most one line break, and each the first thing on its line
/// unless it shares the line of what follows (a comment trailing the code above does not count).
pub(super) fn comments_directly_above(
    source: &str,
    comments: &[Range<usize>],
    start: usize,
) -> Range<usize> {
    let end = comments.partition_point(|comment| comment.start < start);
    let mut first = end;
    let mut below = start;
    while let Some(comment) = first.checked_sub(1).and_then(|index| comments.get(index)) {
        let (Some(text), Some(gap)) = (source.get(comment.clone()), source.get(comment.end..below))
        else {
            break;
        };
        // Rust line comments include their line break, other grammars leave it to the gap.
        let line_breaks = gap.matches('\n').count() + usize::from(text.ends_with('\n'));
        let on_own_line = source.get(..comment.start).is_some_and(|before| {
            before
                .rsplit('\n')
                .next()
                .is_some_and(|line| line.trim().is_empty())
        });
        if !gap.trim().is_empty() || line_breaks > 1 || (line_breaks == 1 && !on_own_line) {
            break;
        }
        first -= 1;
        below = comment.start;
    }
    first..end
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
