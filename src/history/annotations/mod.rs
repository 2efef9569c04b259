//! Tests that developers already marked as flaky, and the markers' text, which must not reach the
//! tokens: a model that learns `flaky` from `@Flaky` learns nothing about the code.
//!
//! What counts as a mark, in the test's own annotations, decorators or attributes:
//!
//! - Java: `@Flaky`, `@FlakyTest`; `@Tag`/`@Category` naming flakiness (`@Tag("flaky")`,
//!   `@Category(FlakyTests.class)`); `@Disabled...`/`@Ignore` whose reason mentions flakiness.
//! - Python: `@flaky`, `@pytest.mark.flaky` (the `flaky`, `pytest-rerunfailures` and `pytest-retry`
//!   markers); `skip`, `skipif`, `xfail`, `unittest.skip...`, `expectedFailure` whose reason does.
//! - Rust: `#[flaky_test]` (the `flaky_test` crate); `#[ignore]` (also inside `cfg_attr`) whose
//!   reason does.
//!
//! A reason is the marker's string arguments plus the comments on its line and directly above it:
//! `#[ignore] // flaky on CI` counts. A reason mentions flakiness when it says flaky, flake,
//! intermittent, racy, race, timing, nondeterministic, sporadic, unstable or unreliable, unless the
//! words before it negate it ("not flaky", "to avoid flakiness"). A comment on its own, in the
//! test's head or directly above the test, marks the test only with the stronger words (flaky,
//! flake, intermittent, racy): "timing" alone says too little there. Comments inside the body are
//! not read; they more often explain what a test does to stay stable.

pub mod flakiness_words;

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use crate::category::Category;
use crate::extract::TestMethod;
use crate::language::Language;

use super::category_hints;
use flakiness_words::{Strength, mentions_flakiness};

/// What the markers of one test say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    /// Each marker that makes the test flaky, as written (`@pytest.mark.flaky(reruns=3)`).
    pub markers: Vec<String>,
    /// Categories the markers' reasons hint at.
    pub categories: Vec<Category>,
    /// Byte ranges of the test's code holding those markers, removed before tokenising.
    pub strip: Vec<Range<usize>>,
}

impl Marks {
    pub fn is_flaky(&self) -> bool {
        !self.markers.is_empty()
    }
}

/// A piece of a test's head, the text before its name, with ranges into the test's code.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// An annotation, decorator or attribute: `range` covers all of it, `args` what follows its
    /// name, `strings` the contents of the string literals there.
    Marker {
        range: Range<usize>,
        name: String,
        args: Option<Range<usize>>,
        strings: Vec<String>,
    },
    Comment {
        range: Range<usize>,
    },
}

/// The markers and comments of `test`'s head, in source order, as extraction read them from the
/// syntax tree.
fn head_pieces(test: &TestMethod) -> Vec<Piece> {
    let code = test.code.as_str();
    let local = |range: &Range<usize>| {
        let start = range.start.checked_sub(test.range.start)?;
        let end = range.end.checked_sub(test.range.start)?;
        code.get(start..end).map(|_| start..end)
    };
    let text = |range: &Range<usize>| local(range).map(|range| code[range].to_string());
    let markers = test.markers.iter().filter_map(|marker| {
        Some(Piece::Marker {
            range: local(&marker.range)?,
            name: text(&marker.name)?,
            args: marker.arguments.as_ref().and_then(local),
            strings: marker.strings.iter().filter_map(text).collect(),
        })
    });
    // A comment among a marker's arguments explains them, often why a case is left out to keep
    // the test stable ("in other cases rounding errors lead to flaky tests"): not read.
    let inside_a_marker = |comment: &&Range<usize>| {
        test.markers
            .iter()
            .any(|marker| marker.range.start <= comment.start && comment.end <= marker.range.end)
    };
    let comments = test
        .head_comments
        .iter()
        .filter(|comment| !inside_a_marker(comment))
        .filter_map(|comment| {
            Some(Piece::Comment {
                range: local(comment)?,
            })
        });
    let mut pieces: Vec<Piece> = markers.chain(comments).collect();
    pieces.sort_by_key(|piece| match piece {
        Piece::Marker { range, .. } | Piece::Comment { range } => range.start,
    });
    pieces
}

/// Reads the markers of `test`, whose code is `source[test.range]`.
pub fn inspect(source: &str, test: &TestMethod) -> Marks {
    let code = test.code.as_str();
    let pieces = head_pieces(test);
    let mut marks = Marks::default();
    let mut reasons: Vec<String> = Vec::new();
    let mut attached_comments: Vec<usize> = Vec::new();

    for (index, piece) in pieces.iter().enumerate() {
        let Piece::Marker {
            range,
            name,
            args,
            strings,
        } = piece
        else {
            continue;
        };
        let args_text = args.clone().map_or("", |args| &code[args]);
        let written = code[range.clone()].trim().to_string();
        let kind = classify(test.language, name, args_text);
        let flaky = match kind {
            MarkerKind::Flaky => {
                reasons.push(strings.join(" "));
                true
            }
            MarkerKind::Skip => {
                let comments = comments_attached(code, &pieces, index);
                let mut reason = strings.join(" ");
                for &comment in &comments {
                    if let Piece::Comment { range } = &pieces[comment] {
                        reason.push(' ');
                        reason.push_str(&code[range.clone()]);
                    }
                }
                let flaky = mentions_flakiness(&reason, Strength::Reason);
                if flaky {
                    attached_comments.extend(&comments);
                    for &comment in &comments {
                        if let Piece::Comment { range } = &pieces[comment] {
                            marks.strip.push(range.clone());
                        }
                    }
                    reasons.push(reason);
                }
                flaky
            }
            MarkerKind::Other => false,
        };
        if flaky {
            marks.markers.push(written);
            marks.strip.push(range.clone());
        }
    }

    for (index, piece) in pieces.iter().enumerate() {
        let Piece::Comment { range } = piece else {
            continue;
        };
        let text = &code[range.clone()];
        if !attached_comments.contains(&index) && mentions_flakiness(text, Strength::Comment) {
            marks.markers.push(text.trim().to_string());
            marks.strip.push(range.clone());
            reasons.push(text.to_string());
        }
    }

    let above = source.get(test.comments_above.clone()).unwrap_or("");
    if mentions_flakiness(above, Strength::Comment) {
        marks.markers.push(above.trim().to_string());
        reasons.push(above.to_string());
    }

    let mut categories: Vec<Category> = reasons
        .iter()
        .flat_map(|reason| category_hints::in_reason(reason))
        .collect();
    categories.sort();
    categories.dedup();
    marks.categories = categories;
    marks.strip.sort_by_key(|range| range.start);
    marks
}

/// `code` without the byte ranges in `strip`, each replaced by a space so that the tokens around
/// it stay apart.
pub fn strip(code: &str, strip: &[Range<usize>]) -> String {
    let mut kept = String::with_capacity(code.len());
    let mut at = 0;
    for range in strip {
        if range.start < at || range.end > code.len() {
            continue;
        }
        kept.push_str(&code[at..range.start]);
        kept.push(' ');
        at = range.end;
    }
    kept.push_str(&code[at..]);
    kept
}

static IGNORE_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bignore\b").expect("the pattern compiles"));

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarkerKind {
    /// Says flaky by itself.
    Flaky,
    /// Disables or expects failure; flaky if its reason says so.
    Skip,
    Other,
}

fn classify(language: Language, name: &str, args: &str) -> MarkerKind {
    let last = name.rsplit(['.', ':']).next().unwrap_or(name).trim();
    match language {
        Language::Java => match last {
            "Flaky" | "FlakyTest" => MarkerKind::Flaky,
            "Tag" | "Tags" | "Category" if names_flakiness(args) => MarkerKind::Flaky,
            "Ignore" => MarkerKind::Skip,
            _ if last.starts_with("Disabled") => MarkerKind::Skip,
            _ => MarkerKind::Other,
        },
        Language::Python => match last {
            "flaky" => MarkerKind::Flaky,
            "skip" | "skipif" | "skipIf" | "skipUnless" | "xfail" | "expectedFailure" => {
                MarkerKind::Skip
            }
            _ => MarkerKind::Other,
        },
        Language::Rust => match last {
            "flaky_test" => MarkerKind::Flaky,
            "ignore" => MarkerKind::Skip,
            "cfg_attr" if IGNORE_WORD.is_match(args) => MarkerKind::Skip,
            _ => MarkerKind::Other,
        },
    }
}

/// Whether a tag or category names flakiness: `"flaky"`, `FlakyTests.class`, `"intermittent"`.
fn names_flakiness(args: &str) -> bool {
    let lowered = args.to_lowercase();
    ["flak", "intermittent"]
        .iter()
        .any(|word| lowered.contains(word))
}

/// The comments that belong to the marker at `index`: those on its line after it, and the block of
/// comment lines directly above it.
fn comments_attached(code: &str, pieces: &[Piece], index: usize) -> Vec<usize> {
    let Piece::Marker { range, .. } = &pieces[index] else {
        return Vec::new();
    };
    let mut attached = Vec::new();
    let mut below = range.start;
    for earlier in (0..index).rev() {
        let Piece::Comment { range: comment } = &pieces[earlier] else {
            break;
        };
        let Some(gap) = code.get(comment.end..below) else {
            break;
        };
        if !gap.trim().is_empty() || gap.matches('\n').count() > 1 {
            break;
        }
        attached.push(earlier);
        below = comment.start;
    }
    if let Some(Piece::Comment { range: comment }) = pieces.get(index + 1)
        && let Some(gap) = code.get(range.end..comment.start)
        && gap.trim().is_empty()
        && !gap.contains('\n')
    {
        attached.push(index + 1);
    }
    attached
}

#[cfg(test)]
mod tests;
