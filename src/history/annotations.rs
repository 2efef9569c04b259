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

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use crate::category::Category;
use crate::extract::TestMethod;
use crate::language::Language;

use super::category_hints;

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

/// Reads the markers of `test`, whose code is `source[test.range]`.
pub fn inspect(source: &str, test: &TestMethod) -> Marks {
    let code = test.code.as_str();
    let head_len = test
        .name_range
        .start
        .checked_sub(test.range.start)
        .filter(|&len| len <= code.len() && code.is_char_boundary(len))
        .unwrap_or(0);
    let head = &code[..head_len];
    let pieces = scan_head(test.language, head);
    let mut marks = Marks::default();
    let mut reasons: Vec<String> = Vec::new();
    let mut attached_comments: Vec<usize> = Vec::new();

    for (index, piece) in pieces.iter().enumerate() {
        let Piece::Marker { range, name, args } = piece else {
            continue;
        };
        let args_text = args.clone().map_or("", |args| &head[args]);
        let written = head[range.clone()].trim().to_string();
        let kind = classify(test.language, name, args_text);
        let flaky = match kind {
            MarkerKind::Flaky => {
                reasons.push(string_literals(test.language, args_text).join(" "));
                true
            }
            MarkerKind::Skip => {
                let comments = comments_attached(head, &pieces, index);
                let mut reason = string_literals(test.language, args_text).join(" ");
                for &comment in &comments {
                    if let Piece::Comment { range } = &pieces[comment] {
                        reason.push(' ');
                        reason.push_str(&head[range.clone()]);
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
        let text = &head[range.clone()];
        if !attached_comments.contains(&index) && mentions_flakiness(text, Strength::Comment) {
            marks.markers.push(text.trim().to_string());
            marks.strip.push(range.clone());
            reasons.push(text.to_string());
        }
    }

    let above = comment_block_above(test.language, source, test.range.start);
    if mentions_flakiness(&above, Strength::Comment) {
        marks.markers.push(above.trim().to_string());
        reasons.push(above);
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

/// How much a text must say to count as calling a test flaky.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strength {
    /// The reason of a skip marker: it already says the test is not run, and why.
    Reason,
    /// A comment on its own.
    Comment,
}

static REASON_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(flak(y|ey|iness|iest|ing|es|e)|intermittent(ly)?|rac(y|es?|ing)|race[ -]conditions?|timing|non-?deterministic(ally)?|sporadic(ally)?|unstable|unreliable)\b",
    )
    .expect("the pattern compiles")
});

static COMMENT_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(flak(y|ey|iness|ing|es|e)|intermittent(ly)?|racy)\b")
        .expect("the pattern compiles")
});

static IGNORE_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bignore\b").expect("the pattern compiles"));

/// Words shortly before a mention that turn it around: "not flaky", "avoids flakiness".
const NEGATIONS: [&str; 14] = [
    "not ",
    "n't ",
    "no longer",
    "non-",
    "non ",
    "never ",
    "avoid",
    "prevent",
    "reduc",
    "without ",
    "less ",
    "fixed",
    "fixes ",
    "to fix",
];

/// Whether a text says the test is flaky (see the module documentation).
pub fn mentions_flakiness(text: &str, strength: Strength) -> bool {
    let words = match strength {
        Strength::Reason => &*REASON_WORDS,
        Strength::Comment => &*COMMENT_WORDS,
    };
    let lowered = text.to_lowercase();
    words.find_iter(&lowered).any(|found| {
        let mut start = found.start().saturating_sub(24);
        while !lowered.is_char_boundary(start) {
            start -= 1;
        }
        let before = &lowered[start..found.start()];
        // Only the same clause counts: "Flaky. Not run on CI" is still flaky.
        let clause = before.rsplit(['.', ';', ':', ',']).next().unwrap_or(before);
        !NEGATIONS.iter().any(|negation| clause.contains(negation))
    })
}

/// A piece of a test's head: the text before its name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// `@Name(args)` in Java and Python, `#[name args]` in Rust; `range` covers all of it, `args`
    /// what follows the name (inside the parentheses, or the rest of the attribute).
    Marker {
        range: Range<usize>,
        name: String,
        args: Option<Range<usize>>,
    },
    Comment {
        range: Range<usize>,
    },
}

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
fn comments_attached(head: &str, pieces: &[Piece], index: usize) -> Vec<usize> {
    let Piece::Marker { range, .. } = &pieces[index] else {
        return Vec::new();
    };
    let mut attached = Vec::new();
    let mut below = range.start;
    for earlier in (0..index).rev() {
        let Piece::Comment { range: comment } = &pieces[earlier] else {
            break;
        };
        let gap = &head[comment.end..below];
        if !gap.trim().is_empty() || gap.matches('\n').count() > 1 {
            break;
        }
        attached.push(earlier);
        below = comment.start;
    }
    if let Some(Piece::Comment { range: comment }) = pieces.get(index + 1) {
        let gap = &head[range.end..comment.start];
        if gap.trim().is_empty() && !gap.contains('\n') {
            attached.push(index + 1);
        }
    }
    attached
}

/// The text of the comment lines directly above `start` (no blank line between), outermost first.
fn comment_block_above(language: Language, source: &str, start: usize) -> String {
    let before = source.get(..start).unwrap_or("");
    let mut lines = before.lines().rev();
    // The first line is the test's own, up to where it starts: indentation only.
    if !before.ends_with('\n') {
        lines.next();
    }
    let mut block: Vec<&str> = Vec::new();
    for line in lines {
        let line = line.trim();
        let is_comment = match language {
            Language::Python => line.starts_with('#'),
            Language::Java | Language::Rust => {
                line.starts_with("//")
                    || line.starts_with("/*")
                    || line.starts_with('*')
                    || line.ends_with("*/")
            }
        };
        if line.is_empty() || !is_comment {
            break;
        }
        block.push(line);
    }
    block.reverse();
    block.join("\n")
}

/// Finds the markers and comments of a test's head. Strings are skipped whole, so a `#` or `//`
/// inside one is not a comment, and brackets inside one do not end a marker.
fn scan_head(language: Language, head: &str) -> Vec<Piece> {
    let bytes = head.as_bytes();
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        match (language, rest) {
            (_, [b'"' | b'\'', ..]) => at = skip_string(language, bytes, at),
            (Language::Java | Language::Rust, [b'/', b'/', ..])
            | (Language::Python, [b'#', ..]) => {
                let end = find_from(bytes, at, b"\n").unwrap_or(bytes.len());
                pieces.push(Piece::Comment { range: at..end });
                at = end;
            }
            (Language::Java | Language::Rust, [b'/', b'*', ..]) => {
                let end = find_from(bytes, at + 2, b"*/").map_or(bytes.len(), |end| end + 2);
                pieces.push(Piece::Comment { range: at..end });
                at = end;
            }
            (Language::Rust, [b'#', b'[', ..]) => {
                let end = matching_close(language, bytes, at + 1).unwrap_or(bytes.len());
                let inner = at + 2..end.saturating_sub(1).max(at + 2);
                let name_end = inner.start
                    + head[inner.clone()]
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                        .unwrap_or(inner.len());
                pieces.push(Piece::Marker {
                    range: at..end,
                    name: head[inner.start..name_end].to_string(),
                    args: Some(name_end..inner.end),
                });
                at = end;
            }
            (Language::Java | Language::Python, [b'@', ..]) => {
                let name_end = at
                    + 1
                    + head[at + 1..]
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                        .unwrap_or(head.len() - at - 1);
                let open = name_end
                    + head[name_end..]
                        .find(|c: char| c != ' ' && c != '\t')
                        .unwrap_or(head.len() - name_end);
                let (end, args) = if bytes.get(open) == Some(&b'(') {
                    let end = matching_close(language, bytes, open).unwrap_or(bytes.len());
                    (end, Some(open + 1..end.saturating_sub(1).max(open + 1)))
                } else {
                    (name_end, None)
                };
                pieces.push(Piece::Marker {
                    range: at..end,
                    name: head[at + 1..name_end].to_string(),
                    args,
                });
                at = end.max(at + 1);
            }
            _ => at += 1,
        }
    }
    pieces
}

/// The position after the bracket closing the one at `open` (`(` or `[`), skipping strings.
fn matching_close(language: Language, bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => {
                at = skip_string(language, bytes, at);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// The position after the string literal starting at `at`: `"..."` in every language, `'...'`
/// and triple quotes in Python, text blocks in Java. A `'` outside Python is a character literal
/// or a lifetime; it is stepped over alone.
fn skip_string(language: Language, bytes: &[u8], at: usize) -> usize {
    let quote = bytes[at];
    if quote == b'\'' && language != Language::Python {
        return at + 1;
    }
    let triple = bytes.get(at..at + 3) == Some(&[quote, quote, quote][..]);
    if triple && language != Language::Rust {
        let closing = [quote, quote, quote];
        return find_from(bytes, at + 3, &closing).map_or(bytes.len(), |end| end + 3);
    }
    let mut position = at + 1;
    while position < bytes.len() {
        match bytes[position] {
            b'\\' => position += 2,
            byte if byte == quote => return position + 1,
            b'\n' if language == Language::Python => return position,
            _ => position += 1,
        }
    }
    bytes.len()
}

fn find_from(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|position| from + position)
}

/// The contents of the string literals in a marker's arguments.
fn string_literals(language: Language, text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut literals = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'"' || (bytes[at] == b'\'' && language == Language::Python) {
            let end = skip_string(language, bytes, at);
            let quote_len = if bytes.get(at..at + 3).is_some_and(|start| {
                start.iter().all(|&byte| byte == bytes[at]) && language != Language::Rust
            }) && end >= at + 6
            {
                3
            } else {
                1
            };
            if let Some(content) = text.get(at + quote_len..end.saturating_sub(quote_len)) {
                literals.push(content.to_string());
            }
            at = end.max(at + 1);
        } else {
            at += 1;
        }
    }
    literals
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::extract_tests;

    /// The marks of the one test in `source`.
    fn inspect_one(language: Language, path: &str, source: &str) -> (Marks, String) {
        let tests = extract_tests(language, path, source).tests;
        assert_eq!(tests.len(), 1, "one test in {source}");
        let test = &tests[0];
        let marks = inspect(source, test);
        let stripped = strip(&test.code, &marks.strip);
        (marks, stripped)
    }

    #[test]
    fn java_flaky_annotations_mark_and_are_stripped() {
        let source = "class A {\n  @FlakyTest(detail = \"times out on CI\")\n  @Test\n  void waits() { server.start(); }\n}\n";
        let (marks, stripped) = inspect_one(Language::Java, "A.java", source);
        assert_eq!(marks.markers, ["@FlakyTest(detail = \"times out on CI\")"]);
        assert_eq!(marks.categories, [Category::Timeout]);
        assert!(!stripped.contains("Flaky") && !stripped.contains("times out"));
        assert!(stripped.contains("@Test") && stripped.contains("server.start()"));
    }

    #[test]
    fn java_disabled_counts_only_with_a_flaky_reason() {
        let flaky = "class A {\n  @Test\n  @Disabled(\"intermittent: connection refused\")\n  void a() {}\n}\n";
        let (marks, stripped) = inspect_one(Language::Java, "A.java", flaky);
        assert!(marks.is_flaky());
        assert_eq!(marks.categories, [Category::Network]);
        assert!(!stripped.contains("Disabled"));
        let other =
            "class A {\n  @Test\n  @Disabled(\"needs a licence server\")\n  void a() {}\n}\n";
        let (marks, stripped) = inspect_one(Language::Java, "A.java", other);
        assert!(!marks.is_flaky());
        assert!(stripped.contains("@Disabled"));
        let not_flaky = "class A {\n  @Test\n  @Ignore(\"no longer flaky, kept off for speed\")\n  void a() {}\n}\n";
        assert!(
            !inspect_one(Language::Java, "A.java", not_flaky)
                .0
                .is_flaky()
        );
    }

    #[test]
    fn java_tags_categories_and_comments_above_mark() {
        let tag = "class A {\n  @Tag(\"flaky\") @Test void a() {}\n}\n";
        assert!(inspect_one(Language::Java, "A.java", tag).0.is_flaky());
        let category = "class A {\n  @Category(FlakyTests.class) @Test public void a() {}\n}\n";
        assert!(inspect_one(Language::Java, "A.java", category).0.is_flaky());
        let javadoc = "class A {\n  /**\n   * Flaky when the build machine is busy.\n   */\n  @Test void a() {}\n}\n";
        assert!(inspect_one(Language::Java, "A.java", javadoc).0.is_flaky());
        let blank_line = "class A {\n  // flaky\n\n  @Test void a() {}\n}\n";
        assert!(
            !inspect_one(Language::Java, "A.java", blank_line)
                .0
                .is_flaky()
        );
    }

    #[test]
    fn python_markers_and_skip_reasons() {
        let rerun = "@pytest.mark.flaky(reruns=3, reruns_delay=1)\ndef test_a():\n    pass\n";
        let (marks, stripped) = inspect_one(Language::Python, "t.py", rerun);
        assert!(marks.is_flaky());
        assert!(!stripped.contains("flaky") && !stripped.contains("reruns"));
        let plain = "@flaky(max_runs=3)\ndef test_a():\n    pass\n";
        assert!(inspect_one(Language::Python, "t.py", plain).0.is_flaky());
        let skip = "@pytest.mark.skipif(sys.platform == 'win32', reason='racy on Windows runners')\ndef test_a():\n    pass\n";
        let (marks, stripped) = inspect_one(Language::Python, "t.py", skip);
        assert!(marks.is_flaky());
        assert_eq!(
            marks.categories,
            [Category::Concurrency, Category::Platform]
        );
        assert!(!stripped.contains("skipif"));
        let xfail =
            "@pytest.mark.xfail(reason=\"bug #12: wrong rounding\")\ndef test_a():\n    pass\n";
        assert!(!inspect_one(Language::Python, "t.py", xfail).0.is_flaky());
        let comment =
            "@unittest.expectedFailure  # fails intermittently on CI\ndef test_a():\n    pass\n";
        let (marks, stripped) = inspect_one(Language::Python, "t.py", comment);
        assert!(marks.is_flaky());
        assert!(!stripped.contains("intermittently"));
    }

    #[test]
    fn rust_attributes_and_comments() {
        let ignore =
            "#[test]\n#[ignore = \"flaky: races with the eviction thread\"]\nfn evicts() {}\n";
        let (marks, stripped) = inspect_one(Language::Rust, "src/a.rs", ignore);
        assert_eq!(
            marks.markers,
            ["#[ignore = \"flaky: races with the eviction thread\"]"]
        );
        assert_eq!(marks.categories, [Category::Concurrency]);
        assert!(stripped.contains("#[test]") && !stripped.contains("ignore"));
        let trailing = "#[test]\n#[ignore] // intermittent, see #42\nfn evicts() {}\n";
        let (marks, stripped) = inspect_one(Language::Rust, "src/a.rs", trailing);
        assert!(marks.is_flaky());
        assert!(!stripped.contains("intermittent") && !stripped.contains("ignore"));
        let slow = "#[test]\n#[ignore = \"slow\"]\nfn evicts() {}\n";
        assert!(!inspect_one(Language::Rust, "src/a.rs", slow).0.is_flaky());
        let crate_marker = "#[flaky_test::flaky_test]\nfn reconnects() {}\n";
        assert!(
            inspect_one(Language::Rust, "src/a.rs", crate_marker)
                .0
                .is_flaky()
        );
        let cfg =
            "#[test]\n#[cfg_attr(windows, ignore = \"timing-dependent on Windows\")]\nfn a() {}\n";
        assert!(inspect_one(Language::Rust, "src/a.rs", cfg).0.is_flaky());
        let inner = "#[test]\n// Flaky on slow machines.\n#[should_panic]\nfn a() {}\n";
        let (marks, stripped) = inspect_one(Language::Rust, "src/a.rs", inner);
        assert!(marks.is_flaky());
        assert!(!stripped.to_lowercase().contains("flaky"));
    }

    #[test]
    fn negations_and_clauses() {
        for text in [
            "flaky",
            "FIXME: flaky on CI",
            "Fails intermittently",
            "Flaky. Not run on CI",
        ] {
            assert!(mentions_flakiness(text, Strength::Comment), "{text}");
        }
        for text in [
            "not flaky",
            "seed the generator to avoid flakiness",
            "isn't flaky anymore",
            "deflaked in #12",
            "timing",
        ] {
            assert!(!mentions_flakiness(text, Strength::Comment), "{text}");
        }
        assert!(mentions_flakiness("timing-dependent", Strength::Reason));
    }

    #[test]
    fn strings_hide_comment_markers_and_brackets() {
        let pieces = scan_head(Language::Python, "@skip(\"a # b)\") # real\n");
        assert_eq!(pieces.len(), 2);
        assert!(matches!(&pieces[0], Piece::Marker { name, .. } if name == "skip"));
        assert_eq!(
            string_literals(Language::Python, "reason='x', other=\"\"\"y\"\"\""),
            ["x", "y"]
        );
    }
}
