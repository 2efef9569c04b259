//! The markers a test carries, read from the syntax tree as the walks meet them: Java's
//! annotations, Python's decorators, Rust's attributes, each with its name, its arguments and the
//! string literals among them. What they mean (flaky, skipped, ...) is the history's to decide.

use std::ops::Range;

use tree_sitter::Node;

use super::walk::children;

/// One marker: `@Disabled("flaky on CI")`, `@pytest.mark.flaky(reruns=3)`, `#[ignore = "..."]`.
/// Ranges are byte ranges of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// All of it, `@` or `#[` included.
    pub range: Range<usize>,
    /// Its name as written: `Disabled`, `pytest.mark.flaky`, `flaky_test::flaky_test`.
    pub name: Range<usize>,
    /// What follows the name: Java's and Python's parenthesised arguments, the rest of a Rust
    /// attribute (`= "reason"`, `(windows, ignore)`); none for a bare marker.
    pub arguments: Option<Range<usize>>,
    /// The contents of the string literals among the arguments, quotes left out.
    pub strings: Vec<Range<usize>>,
}

/// Whether the marker named `name` (as written: `Disabled`, `pytest.mark.skip`, `ignore`)
/// switches its test off wherever it runs: JUnit's `@Disabled` and `@Ignore`, an unconditional
/// `skip` (`@pytest.mark.skip`, `@unittest.skip`), Rust's `#[ignore]`. Conditional ones
/// (`@DisabledOnOs`, `skipif`, `cfg_attr(windows, ignore)`) leave the test running elsewhere,
/// and `xfail` runs it.
pub fn switches_off(language: crate::language::Language, name: &str) -> bool {
    use crate::language::Language;
    let last = name.rsplit(['.', ':']).next().unwrap_or(name).trim();
    match language {
        Language::Java => matches!(last, "Disabled" | "Ignore"),
        Language::Python => last == "skip",
        Language::Rust => last == "ignore",
    }
}

/// The markers, and the comments of its head, kept for one test, nearest its start first. Real
/// tests carry a few; a file of megabytes of attributes before one function would otherwise keep
/// hundreds of thousands.
pub(super) const MAX_PER_TEST: usize = 64;

/// How deep string literals are looked for in a marker's arguments; real ones nest a few levels.
const MAX_ARGUMENT_DEPTH: usize = 16;

/// A Java `annotation` or `marker_annotation`.
pub(super) fn java(annotation: Node<'_>) -> Option<Marker> {
    let name = annotation.child_by_field_name("name")?;
    Some(marker(
        annotation,
        name,
        annotation.child_by_field_name("arguments"),
    ))
}

/// A Python `decorator`: `@name` or `@name(arguments)`.
pub(super) fn python(decorator: Node<'_>) -> Option<Marker> {
    let expression = children(decorator).find(|child| child.is_named() && !child.is_extra())?;
    if expression.kind() == "call" {
        let function = expression.child_by_field_name("function")?;
        Some(marker(
            decorator,
            function,
            expression.child_by_field_name("arguments"),
        ))
    } else {
        Some(marker(decorator, expression, None))
    }
}

/// A Rust `attribute_item`: `#[name]`, `#[name = value]`, `#[name(tokens)]`.
pub(super) fn rust(item: Node<'_>) -> Option<Marker> {
    let attribute = children(item).find(|child| child.kind() == "attribute")?;
    let path = children(attribute).find(|child| child.is_named() && !child.is_extra())?;
    let rest = path.end_byte()..attribute.end_byte();
    let mut found = marker(item, path, None);
    if !rest.is_empty() {
        found.arguments = Some(rest);
        for child in children(attribute).filter(|child| child.start_byte() >= path.end_byte()) {
            strings_in(child, &mut found.strings, MAX_ARGUMENT_DEPTH);
        }
    }
    Some(found)
}

fn marker(whole: Node<'_>, name: Node<'_>, arguments: Option<Node<'_>>) -> Marker {
    let mut strings = Vec::new();
    if let Some(arguments) = arguments {
        strings_in(arguments, &mut strings, MAX_ARGUMENT_DEPTH);
    }
    // A comment after a marker on its line can be the marker node's last child (Python's
    // decorators): it is a comment, not part of the marker.
    let end = children(whole)
        .filter(|child| !child.is_extra())
        .last()
        .map_or(whole.end_byte(), |child| child.end_byte());
    Marker {
        range: whole.start_byte()..end,
        name: name.byte_range(),
        arguments: arguments.map(|arguments| arguments.byte_range()),
        strings,
    }
}

/// Adds the contents of the string literals at or under `node`: what lies between a literal's
/// first child and its last (its quotes, or Python's `string_start` and `string_end`), or its one
/// child where the grammar hides the delimiters (Rust's raw strings).
fn strings_in(node: Node<'_>, strings: &mut Vec<Range<usize>>, depth: usize) {
    if matches!(
        node.kind(),
        "string_literal" | "raw_string_literal" | "string"
    ) {
        let count = node.child_count();
        let content = match (node.child(0), node.child(count.saturating_sub(1))) {
            (Some(only), _) if count == 1 => Some(only.byte_range()),
            (Some(open), Some(close)) if open.end_byte() <= close.start_byte() => {
                Some(open.end_byte()..close.start_byte())
            }
            _ => None,
        };
        strings.extend(content);
        return;
    }
    if depth == 0 {
        return;
    }
    for child in children(node) {
        strings_in(child, strings, depth - 1);
    }
}

#[cfg(test)]
mod tests {
    use crate::extract::extract_tests;
    use crate::language::Language;

    /// Each marker of the one test in `source`: its text, name, arguments and strings.
    fn markers(
        language: Language,
        path: &str,
        source: &str,
    ) -> Vec<(String, String, String, Vec<String>)> {
        let tests = extract_tests(language, path, source).tests;
        assert_eq!(tests.len(), 1, "one test in {source}");
        let text = |range: &std::ops::Range<usize>| source[range.clone()].to_string();
        tests[0]
            .markers
            .iter()
            .map(|marker| {
                (
                    text(&marker.range),
                    text(&marker.name),
                    marker.arguments.as_ref().map(text).unwrap_or_default(),
                    marker.strings.iter().map(text).collect(),
                )
            })
            .collect()
    }

    fn owned(strings: &[&str]) -> Vec<String> {
        strings.iter().map(|text| text.to_string()).collect()
    }

    #[test]
    fn java_annotations_with_strings_that_look_like_code() {
        let source = "class A {\n  @Test\n  // between\n  @Disabled(\"see // here (flaky\" + \"\\\"quoted\\\"\")\n  @Tag(value = \"\"\"\n    slow\"\"\")\n  public void a() {}\n}\n";
        let found = markers(Language::Java, "A.java", source);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(
            found[0],
            ("@Test".into(), "Test".into(), String::new(), vec![])
        );
        assert_eq!(found[1].1, "Disabled");
        assert_eq!(found[1].3, owned(&["see // here (flaky", "\\\"quoted\\\""]));
        assert!(found[1].0.ends_with("\")"));
        assert_eq!(found[2].3, owned(&["\n    slow"]));
    }

    #[test]
    fn python_decorators_end_before_a_comment_on_their_line() {
        let source = "@pytest.mark.skipif(x, reason='a # b)') # real\n@flaky\n@pytest.mark.xfail(reason=\"\"\"long\nreason\"\"\")\ndef test_a():\n    pass\n";
        let found = markers(Language::Python, "test_a.py", source);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[0].0, "@pytest.mark.skipif(x, reason='a # b)')");
        assert_eq!(found[0].1, "pytest.mark.skipif");
        assert_eq!(found[0].2, "(x, reason='a # b)')");
        assert_eq!(found[0].3, owned(&["a # b)"]));
        assert_eq!(
            found[1],
            ("@flaky".into(), "flaky".into(), String::new(), vec![])
        );
        assert_eq!(found[2].3, owned(&["long\nreason"]));
    }

    #[test]
    fn rust_attributes_in_files_and_macro_bodies() {
        let source = "#[test]\n#[ignore = \"flaky: see #12\"]\n#[cfg_attr(windows, ignore = r#\"timing \"x\"\"#)]\nfn a() {}\n";
        let found = markers(Language::Rust, "src/a.rs", source);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(
            found[0],
            ("#[test]".into(), "test".into(), String::new(), vec![])
        );
        assert_eq!(found[1].1, "ignore");
        assert_eq!(found[1].2, " = \"flaky: see #12\"");
        assert_eq!(found[1].3, owned(&["flaky: see #12"]));
        assert_eq!(found[2].1, "cfg_attr");
        assert_eq!(found[2].3, owned(&["timing \"x\""]));

        let in_macro =
            "rt_test! {\n    #[tokio::test]\n    #[ignore = \"racy\"]\n    async fn b() {}\n}\n";
        let found = markers(Language::Rust, "tests/b.rs", in_macro);
        let names: Vec<&str> = found.iter().map(|marker| marker.1.as_str()).collect();
        assert_eq!(names, ["tokio::test", "ignore"]);
        assert_eq!(found[1].3, owned(&["racy"]));
    }

    #[test]
    fn a_test_keeps_a_bounded_number_of_markers_and_head_comments() {
        let source = format!("{}fn a() {{}}\n", "#[test] // x\n".repeat(1_000));
        let tests = extract_tests(Language::Rust, "src/a.rs", &source).tests;
        assert_eq!(tests.len(), 1);
        assert_eq!(tests[0].markers.len(), super::MAX_PER_TEST);
        assert_eq!(tests[0].head_comments.len(), super::MAX_PER_TEST);
        assert_eq!(tests[0].markers[0].range, 0..7, "the first ones are kept");
    }
}
