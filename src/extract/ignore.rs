//! Finds the tests a `flakesense: ignore` comment silences.

use std::ops::Range;

/// Whether a comment's text carries the marker. Any spacing after the colon is accepted, so
/// `flakesense:ignore` works too.
pub(super) fn has_ignore_marker(comment: &str) -> bool {
    comment.match_indices("flakesense:").any(|(at, marker)| {
        comment
            .get(at + marker.len()..)
            .is_some_and(|rest| rest.trim_start().starts_with("ignore"))
    })
}

/// For each test range, whether a marker comment silences it: one inside the range, or one in the
/// block of comment lines directly above it (no blank line between), `above` giving each test's
/// block as indices into `comments` ([`super::layout::comments_directly_above`]).
///
/// `comments` and `tests` must be sorted by start. A marker directly above a test belongs to that
/// test alone, even when it also falls inside another one: Python puts a comment indented like the
/// previous function's body into that body, though the comment is meant for the next test.
pub(super) fn ignored_tests(
    source: &str,
    comments: &[Range<usize>],
    tests: &[Range<usize>],
    above: &[Range<usize>],
) -> Vec<bool> {
    let is_marker: Vec<bool> = comments
        .iter()
        .map(|comment| source.get(comment.clone()).is_some_and(has_ignore_marker))
        .collect();
    if !is_marker.contains(&true) {
        // The common case: nothing to look for, so no per-test work.
        return vec![false; tests.len()];
    }
    let mut ignored = vec![false; tests.len()];
    let mut claimed = vec![false; comments.len()];
    for (block, ignored) in above.iter().zip(&mut ignored) {
        for index in block.clone() {
            if is_marker[index] {
                *ignored = true;
                claimed[index] = true;
            }
        }
    }
    let unclaimed_markers: Vec<&Range<usize>> = comments
        .iter()
        .zip(is_marker.iter().zip(&claimed))
        .filter(|(_, (is_marker, claimed))| **is_marker && !**claimed)
        .map(|(comment, _)| comment)
        .collect();
    for (test, ignored) in tests.iter().zip(&mut ignored) {
        let first_inside = unclaimed_markers.partition_point(|marker| marker.start < test.start);
        *ignored |= unclaimed_markers
            .get(first_inside)
            .is_some_and(|marker| marker.end <= test.end);
    }
    ignored
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranges of every `//` comment of `source`, to the end of its line.
    fn line_comments(source: &str) -> Vec<Range<usize>> {
        let mut comments = Vec::new();
        let mut offset = 0;
        for line in source.split_inclusive('\n') {
            if let Some(at) = line.find("//") {
                comments.push(offset + at..offset + line.trim_end().len());
            }
            offset += line.len();
        }
        comments
    }

    fn ignored(source: &str, tests: &[&str]) -> Vec<bool> {
        let ranges: Vec<Range<usize>> = tests
            .iter()
            .map(|test| {
                let start = source.find(test).expect("the test is in the source");
                start..start + test.len()
            })
            .collect();
        with_blocks_above(source, &line_comments(source), &ranges)
    }

    /// [`ignored_tests`] with each test's block of comments above found as extraction finds it.
    fn with_blocks_above(
        source: &str,
        comments: &[Range<usize>],
        tests: &[Range<usize>],
    ) -> Vec<bool> {
        let above: Vec<Range<usize>> = tests
            .iter()
            .map(|test| super::super::layout::comments_directly_above(source, comments, test.start))
            .collect();
        ignored_tests(source, comments, tests, &above)
    }

    #[test]
    fn recognises_the_marker_in_every_comment_syntax() {
        assert!(has_ignore_marker("// flakesense: ignore"));
        assert!(has_ignore_marker(
            "# flakesense: ignore because it needs a network"
        ));
        assert!(has_ignore_marker("/* flakesense: ignore */"));
        assert!(has_ignore_marker("/// flakesense:ignore"));
        assert!(!has_ignore_marker("// flakesense: check this"));
        assert!(!has_ignore_marker("// flakesense ignore"));
        assert!(!has_ignore_marker("// ignore"));
    }

    #[test]
    fn a_marker_on_the_lines_above_silences_the_test() {
        let source = "// flakesense: ignore\n// why\nfn a() {}\nfn b() {}\n";
        assert_eq!(ignored(source, &["fn a() {}", "fn b() {}"]), [true, false]);
    }

    #[test]
    fn a_marker_inside_the_test_silences_it() {
        let source = "fn a() {\n  // flakesense: ignore\n}\nfn b() {}\n";
        assert_eq!(
            ignored(
                source,
                &["fn a() {\n  // flakesense: ignore\n}", "fn b() {}"]
            ),
            [true, false]
        );
    }

    #[test]
    fn a_blank_line_separates_the_marker_from_the_test() {
        let source = "// flakesense: ignore\n\nfn a() {}\n";
        assert_eq!(ignored(source, &["fn a() {}"]), [false]);
    }

    #[test]
    fn a_marker_trailing_code_above_does_not_count() {
        let source = "let x = 1; // flakesense: ignore\nfn a() {}\n";
        assert_eq!(ignored(source, &["fn a() {}"]), [false]);
    }

    #[test]
    fn a_marker_above_the_next_test_does_not_silence_the_test_it_falls_in() {
        let source = "def a():\n    pass\n    // flakesense: ignore\ndef b(): pass\n";
        let a = "def a():\n    pass\n    // flakesense: ignore";
        assert_eq!(ignored(source, &[a, "def b(): pass"]), [false, true]);
    }

    #[test]
    fn unreadable_ranges_are_skipped_without_panicking() {
        let source = "// é flakesense: ignore\nfn a() {}\n";
        let comments = [0..1000, 4..10];
        assert_eq!(
            with_blocks_above(source, &comments, &[25..34, 3..2000]),
            [false, false]
        );
    }
}
