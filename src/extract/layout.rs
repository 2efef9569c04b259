//! Where each test sits in its file: the scopes around it and the attributes directly before it.
//!
//! Both work on sorted byte ranges rather than walking the tree: tree-sitter finds a node's parent
//! or previous sibling by scanning the siblings, which turns large flat files quadratic.

use std::ops::Range;

/// For each test (sorted by start), the indices of the scopes containing it, outermost first.
///
/// `scopes` are sorted by start, an outer scope before an inner one starting at the same byte.
/// Syntax trees nest, so the scopes open at any point form a chain kept on a stack.
pub(super) fn enclosing_scopes(scopes: &[Range<usize>], tests: &[Range<usize>]) -> Vec<Vec<usize>> {
    let contains = |outer: &Range<usize>, inner: &Range<usize>| {
        outer.start <= inner.start && inner.end <= outer.end
    };
    let mut open: Vec<usize> = Vec::new();
    let mut next = 0;
    let mut enclosing = Vec::with_capacity(tests.len());
    for test in tests {
        while let Some(scope) = scopes.get(next).filter(|scope| scope.start <= test.start) {
            while open
                .last()
                .is_some_and(|&index| !contains(&scopes[index], scope))
            {
                open.pop();
            }
            open.push(next);
            next += 1;
        }
        while open
            .last()
            .is_some_and(|&index| !contains(&scopes[index], test))
        {
            open.pop();
        }
        enclosing.push(open.clone());
    }
    enclosing
}

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
    fn tests_get_the_chain_of_scopes_around_them() {
        // outer 0..100 { inner 10..50 { test 20..30 } test 60..70 } other 100..200 { test 110..120 }
        let scopes = [0..100, 10..50, 100..200];
        let tests = [5..8, 20..30, 60..70, 110..120, 300..310];
        let expected: [&[usize]; 5] = [&[0], &[0, 1], &[0], &[2], &[]];
        assert_eq!(enclosing_scopes(&scopes, &tests), expected);
    }

    #[test]
    fn a_scope_starting_with_its_outer_scope_nests_inside_it() {
        let scopes = [0..100, 0..40];
        assert_eq!(
            enclosing_scopes(&scopes, &[10..20, 50..60]),
            [vec![0, 1], vec![0]]
        );
    }

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
