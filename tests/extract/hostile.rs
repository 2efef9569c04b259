//! Extraction on hostile input: line endings, truncated and binary sources, deep nesting,
//! incremental reparses and the bounds that keep huge files cheap.

use super::*;

#[test]
fn every_fixture_gives_the_same_tests_with_crlf_line_endings() {
    for relative in FIXTURES {
        let (language, source) = read_fixture(relative);
        let crlf = source.replace("\r\n", "\n").replace('\n', "\r\n");
        let with_lf = extract_tests(language, relative, &source);
        let with_crlf = extract_tests(language, relative, &crlf);
        assert_consistent(&crlf, &with_crlf);
        let summary = |source: &str, extraction: &Extraction| -> Vec<(String, usize, bool)> {
            let tests = extraction.tests.iter();
            tests
                .map(|test| {
                    let (line, _) = line_and_column(source, test.name_range.start);
                    (test.id.clone(), line, test.ignored)
                })
                .collect()
        };
        assert_eq!(
            summary(&source, &with_lf),
            summary(&crlf, &with_crlf),
            "{relative}"
        );
    }
}

#[test]
fn truncated_fixtures_never_yield_ranges_outside_the_source() {
    for relative in FIXTURES {
        let (language, source) = read_fixture(relative);
        let bytes = source.as_bytes();
        // A step of 37 is prime, so prefixes cut through every kind of token, multi-byte characters
        // included; decoding lossily repairs the cut character.
        for end in (0..=bytes.len()).step_by(37) {
            let (prefix, _) = decode_source(&bytes[..end]);
            let extraction = extract_tests(language, relative, &prefix);
            assert_consistent(&prefix, &extraction);
        }
    }
}

#[test]
fn an_incremental_reparse_finds_the_same_tests_as_a_fresh_parse() {
    let (language, source) = read_fixture("python/test_orders.py");
    let old_tree = parse(language, &source, None).expect("the Python grammar loads");
    let insert_at = source
        .find("def test_creates_an_order")
        .expect("the fixture has this test");
    let inserted = "def test_added_while_typing():\n    assert True\n\n\n";
    let edited = format!("{}{inserted}{}", &source[..insert_at], &source[insert_at..]);

    let mut tree = old_tree.clone();
    // tree-sitter points are 0-based rows and byte columns.
    let point = |offset: usize| {
        let before = &edited[..offset];
        let row = before.matches('\n').count();
        tree_sitter::Point::new(row, before.rsplit('\n').next().map_or(0, str::len))
    };
    tree.edit(&tree_sitter::InputEdit {
        start_byte: insert_at,
        old_end_byte: insert_at,
        new_end_byte: insert_at + inserted.len(),
        start_position: point(insert_at),
        old_end_position: point(insert_at),
        new_end_position: point(insert_at + inserted.len()),
    });
    let reparsed = parse(language, &edited, Some(&tree)).expect("the Python grammar loads");

    let incremental = extract_tests_from_tree(language, "t.py", &edited, &reparsed);
    let fresh = extract_tests(language, "t.py", &edited);
    assert_eq!(incremental, fresh);
    assert!(
        incremental
            .tests
            .iter()
            .any(|test| test.name == "test_added_while_typing")
    );
}

#[test]
fn empty_and_blank_files_have_no_tests() {
    for language in Language::ALL {
        for source in ["", "\n", "   \r\n\t"] {
            let extraction = extract_tests(language, "empty", source);
            assert!(extraction.tests.is_empty(), "{language}: {source:?}");
        }
    }
}

#[test]
fn binary_garbage_decoded_lossily_does_not_break_extraction() {
    // A fixed-seed linear congruential generator: reproducible bytes without a dependency.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let garbage: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 56) as u8
        })
        .collect();
    let (source, replaced) = decode_source(&garbage);
    assert!(replaced);
    for language in Language::ALL {
        let extraction = extract_tests(language, "garbage", &source);
        assert_consistent(&source, &extraction);
        assert!(extraction.has_syntax_errors);
    }
}

#[test]
fn deeply_nested_code_does_not_break_extraction() {
    let depth = 20_000;
    let nested = |open: &str, inner: &str, close: &str| {
        format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
    };
    let cases = [
        (
            Language::Java,
            format!(
                "class A {{ @Test void t() {{ int x = {}; }} }}",
                nested("(", "1", ")")
            ),
        ),
        (
            Language::Python,
            format!("def test_a():\n    x = {}\n", nested("[", "", "]")),
        ),
        (
            Language::Rust,
            format!("#[test]\nfn a() {{ {} }}\n", nested("{", "", "}")),
        ),
    ];
    for (language, source) in cases {
        let extraction = extract_tests(language, "deep", &source);
        assert_consistent(&source, &extraction);
        assert_eq!(extraction.tests.len(), 1, "{language}");
    }
}

/// Extraction of `source` with the default rules, checked for consistency.
fn extracted(language: Language, source: &str) -> Extraction {
    let extraction = extract_tests(language, "hostile", source);
    assert_consistent(source, &extraction);
    extraction
}

// Issue 14's slow sources, at the sizes it measured: each took seconds to minutes before the
// walks replaced the query cursor. The larger ones are in `benches/hostile_sources.rs`.

#[test]
fn unmatched_brackets_after_a_test_are_extracted_whole() {
    let source = format!("#[test]\nfn t(){}", "(".repeat(16_000));
    let extraction = extracted(Language::Rust, &source);
    assert!(extraction.has_syntax_errors);
    assert_eq!(extraction.incomplete, None);
    let source = format!("def test_a():\n    x = {}", "[".repeat(16_000));
    assert_eq!(extracted(Language::Python, &source).incomplete, None);
}

#[test]
fn repeated_attributes_make_one_test_starting_at_the_first() {
    let source = format!("{}fn t() {{}}\n", "#[test]\n".repeat(2_000));
    let extraction = extracted(Language::Rust, &source);
    assert_eq!(extraction.tests.len(), 1);
    assert_eq!(extraction.tests[0].range.start, 0);
    assert_eq!(extraction.tests[0].code.lines().count(), 2_001);
}

#[test]
fn repeated_annotations_make_one_test() {
    let source = format!("class A {{\n{}void t() {{}}\n}}\n", "@Test\n".repeat(1_000));
    let extraction = extracted(Language::Java, &source);
    let ids: Vec<&str> = extraction
        .tests
        .iter()
        .map(|test| test.id.as_str())
        .collect();
    assert_eq!(ids, ["A#t"]);
}

/// `depth` modules (Rust) or classes (Java, Python) one inside the other, a test in each.
fn nested(language: Language, depth: usize) -> String {
    match language {
        Language::Rust => format!(
            "{}{}",
            "mod m { #[test] fn t() {}\n".repeat(depth),
            "}".repeat(depth)
        ),
        Language::Java => format!(
            "{}{}",
            "class A { @Test void t() {}\n".repeat(depth),
            "}".repeat(depth)
        ),
        Language::Python => (0..depth)
            .map(|level| {
                let indent = "    ".repeat(level);
                format!("{indent}class TestA:\n{indent}    def test_a(self): pass\n")
            })
            .collect(),
    }
}

#[test]
fn scopes_nested_up_to_the_bound_are_extracted_and_deeper_files_left_out() {
    for language in Language::ALL {
        let within = extracted(language, &nested(language, 32));
        assert_eq!(within.tests.len(), 32, "{language}");
        assert_eq!(within.incomplete, None, "{language}");
        let deeper = extracted(language, &nested(language, 33));
        assert!(deeper.tests.is_empty(), "{language}");
        assert_eq!(
            deeper.incomplete,
            Some(Incomplete::TooDeep { limit: 32 }),
            "{language}"
        );
        assert_eq!(
            deeper
                .incomplete
                .map(|reason| reason.to_string())
                .as_deref(),
            Some("classes or modules nest more than 32 deep; no tests were looked for")
        );
    }
    // Issue 14's case: 2.9 GB before the bound.
    let deepest = extracted(Language::Rust, &nested(Language::Rust, 20_000));
    assert_eq!(deepest.incomplete, Some(Incomplete::TooDeep { limit: 32 }));
}

#[test]
fn tests_past_the_bound_of_one_file_are_left_out_and_counted() {
    let source = "#[test]\nfn t() {}\n".repeat(12_000);
    let extraction = extracted(Language::Rust, &source);
    assert_eq!(extraction.tests.len(), 10_000);
    assert_eq!(
        extraction.incomplete,
        Some(Incomplete::TooManyTests {
            listed: 10_000,
            found: 12_000
        })
    );
    // The first ones, in source order.
    assert_eq!(extraction.tests[9_999].range.start, 9_999 * 18);
    assert_eq!(
        extraction
            .incomplete
            .map(|reason| reason.to_string())
            .as_deref(),
        Some("only the first 10000 of its 12000 tests are judged")
    );
}

#[test]
fn huge_names_repeated_in_every_id_are_bounded() {
    // A 64 KB class name in 400 ids would take 25 MB; the ids of one file stop past 16 MB.
    let name = format!("Test{}", "A".repeat(64 * 1024));
    let mut source = format!("class {name}:\n");
    for index in 0..400 {
        let _ = writeln!(source, "    def test_{index}(self): pass");
    }
    let extraction = extracted(Language::Python, &source);
    let Some(Incomplete::TooManyTests { listed, found }) = extraction.incomplete else {
        panic!("{:?}", extraction.incomplete);
    };
    assert_eq!(found, 400);
    assert!((200..300).contains(&listed), "{listed}");
    let id_bytes: usize = extraction.tests.iter().map(|test| test.id.len()).sum();
    assert!(id_bytes < 17 * 1024 * 1024);
}
