//! Extraction's own cases: the comments above a test, decoding, the bounds on the work and a tree
//! of another language.

use super::*;

/// The text of each test's `comments_above`, by name.
fn comments_above(language: Language, path: &str, source: &str) -> Vec<(String, String)> {
    extract_tests(language, path, source)
        .tests
        .into_iter()
        .map(|test| (test.name, source[test.comments_above].to_string()))
        .collect()
}

#[test]
fn the_comments_directly_above_a_test_are_its_own() {
    // Python nests a comment indented like the previous body inside that body; it is still
    // the next test's. A blank line, or code, parts a comment from the test below.
    let python = "def test_a():\n    pass\n    # flaky on CI\ndef test_b():\n    pass\n\n\
                  # about the module\n\ndef test_c():\n    x = 1  # trailing\ndef test_d():\n    pass\n";
    assert_eq!(
        comments_above(Language::Python, "test_x.py", python),
        [
            ("test_a".to_string(), String::new()),
            ("test_b".to_string(), "# flaky on CI".to_string()),
            ("test_c".to_string(), String::new()),
            ("test_d".to_string(), String::new()),
        ]
    );
    let java = "class T {\n    /* a block\n       comment */\n    // and a line\n    @Test\n    \
                void a() {}\n}\n";
    assert_eq!(
        comments_above(Language::Java, "T.java", java),
        [(
            "a".to_string(),
            "/* a block\n       comment */\n    // and a line".to_string()
        )]
    );
}

#[test]
fn valid_utf8_decodes_unchanged() {
    assert_eq!(
        decode_source("fn é() {}".as_bytes()),
        ("fn é() {}".to_owned(), false)
    );
    assert_eq!(decode_source(b""), (String::new(), false));
}

#[test]
fn invalid_utf8_is_replaced_and_reported() {
    let (text, replaced) = decode_source(b"def test_a():\xff\xfe pass");
    assert!(replaced);
    assert_eq!(text, "def test_a():\u{fffd}\u{fffd} pass");
}

/// Default limits but for the given parse budget.
fn with_parse_time(parse_time: Duration) -> Limits {
    Limits {
        parse_time,
        ..Limits::DEFAULT
    }
}

#[test]
fn a_spent_parse_budget_leaves_the_file_out_with_the_reason() {
    let source = "#[test]\nfn t() { assert!(true); }\n".repeat(200);
    let spent = extract_within(
        Language::Rust,
        "a.rs",
        &source,
        None,
        &Discovery::default(),
        &with_parse_time(Duration::ZERO),
    );
    assert!(spent.tests.is_empty());
    assert_eq!(
        spent.incomplete,
        Some(Incomplete::ParseTime {
            limit: Duration::ZERO
        })
    );
    assert!(spent.incomplete.is_some_and(|reason| {
        reason
            .to_string()
            .contains("parsing took more than 0.0 s of processor time")
    }));
    // The parser does not resume the cancelled parse on the next file.
    let next = extract_tests(Language::Python, "test_a.py", "def test_a():\n    pass\n");
    assert_eq!(next.tests.len(), 1);
    assert_eq!(next.incomplete, None);
    assert_eq!(
        extract_tests(Language::Rust, "a.rs", &source).tests.len(),
        200
    );
}

#[test]
fn parsing_a_macro_body_counts_against_the_same_budget() {
    let source = format!("tests! {{\n{}}}\n", "#[test]\nfn t() {}\n".repeat(200));
    let Some(tree) = parse(Language::Rust, &source, None) else {
        panic!("the Rust grammar loads");
    };
    let spent = extract_within(
        Language::Rust,
        "a.rs",
        &source,
        Some(&tree),
        &Discovery::default(),
        &with_parse_time(Duration::ZERO),
    );
    assert!(matches!(
        spent.incomplete,
        Some(Incomplete::ParseTime { .. })
    ));
    assert_eq!(
        extract_tests_from_tree(Language::Rust, "a.rs", &source, &tree)
            .tests
            .len(),
        200
    );
    // The parser parses whole texts again after a macro body.
    assert_eq!(
        extract_tests(Language::Rust, "b.rs", "#[test]\nfn b() {}\n")
            .tests
            .len(),
        1
    );
}

#[test]
fn a_tree_of_another_language_yields_no_tests() {
    let source = "#[test]\nfn a() {}\n";
    let Some(rust_tree) = parse(Language::Rust, source, None) else {
        panic!("the Rust grammar loads");
    };
    assert_eq!(
        extract_tests_from_tree(Language::Rust, "a.rs", source, &rust_tree)
            .tests
            .len(),
        1
    );
    assert!(
        extract_tests_from_tree(Language::Python, "a.rs", source, &rust_tree)
            .tests
            .is_empty()
    );
    let reparsed = parse(Language::Java, source, Some(&rust_tree));
    assert!(reparsed.is_some_and(|tree| *tree.language() == Language::Java.grammar()));
}
