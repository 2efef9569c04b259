//! Test extraction over realistic fixture files, checked with snapshots, and on hostile input.

use std::fmt::Write as _;
use std::path::Path;

use flakesense::extract::{
    Extraction, decode_source, extract_tests, extract_tests_from_tree, parse,
};
use flakesense::language::Language;

/// The fixtures, as paths under `tests/fixtures/extract/`.
const FIXTURES: [&str; 8] = [
    "java/OrderServiceTest.java",
    "java/LegacyAccountTest.java",
    "java/BrokenSyntaxTest.java",
    "python/test_orders.py",
    "python/test_broken.py",
    "rust/parser_tests.rs",
    "rust/broken.rs",
    "rust/windows_line_endings.rs",
];

fn read_fixture(relative: &str) -> (Language, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/extract")
        .join(relative);
    let language = Language::from_path(&path).expect("fixtures have a known extension");
    let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let (source, replaced) = decode_source(&bytes);
    assert!(!replaced, "{relative} is valid UTF-8");
    (language, source)
}

/// 1-based line and column (in characters) of a byte offset.
fn line_and_column(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |text| text.chars().count())
        + 1;
    (line, column)
}

/// What a reviewer needs to judge an extraction: per test its id, where its name is, whether it is
/// ignored, and the first line of its code (where the range starts).
fn describe(source: &str, extraction: &Extraction) -> String {
    let mut text = format!("syntax errors: {}\n", extraction.has_syntax_errors);
    for test in &extraction.tests {
        let (line, column) = line_and_column(source, test.name_range.start);
        let ignored = if test.ignored { " (ignored)" } else { "" };
        let first_line = test.code.lines().next().unwrap_or("").trim_end();
        let _ = write!(
            text,
            "\n{id}\n  name {name} at {line}:{column}{ignored}\n  code {first_line}\n",
            id = test.id,
            name = test.name,
        );
    }
    text
}

/// What must hold for every test of every input, whatever its syntax.
fn assert_consistent(source: &str, extraction: &Extraction) {
    for test in &extraction.tests {
        for range in [&test.range, &test.name_range] {
            assert!(
                range.start <= range.end && range.end <= source.len(),
                "{range:?} out of bounds"
            );
            assert!(source.is_char_boundary(range.start) && source.is_char_boundary(range.end));
        }
        assert_eq!(test.code, source[test.range.clone()]);
        assert_eq!(test.name, source[test.name_range.clone()]);
        assert!(test.range.start <= test.name_range.start && test.name_range.end <= test.range.end);
        assert!(
            test.id.ends_with(&test.name),
            "{} does not end with its name",
            test.id
        );
    }
    let starts: Vec<usize> = extraction
        .tests
        .iter()
        .map(|test| test.range.start)
        .collect();
    assert!(starts.is_sorted(), "tests are in source order");
}

fn snapshot(relative: &str) -> String {
    let (language, source) = read_fixture(relative);
    let extraction = extract_tests(language, relative, &source);
    assert_consistent(&source, &extraction);
    describe(&source, &extraction)
}

#[test]
fn java_junit5_tests_with_nested_classes() {
    insta::assert_snapshot!(snapshot("java/OrderServiceTest.java"));
}

#[test]
fn java_junit3_tests() {
    insta::assert_snapshot!(snapshot("java/LegacyAccountTest.java"));
}

#[test]
fn java_with_broken_syntax() {
    insta::assert_snapshot!(snapshot("java/BrokenSyntaxTest.java"));
}

#[test]
fn python_pytest_and_unittest_tests() {
    insta::assert_snapshot!(snapshot("python/test_orders.py"));
}

#[test]
fn python_with_broken_syntax() {
    insta::assert_snapshot!(snapshot("python/test_broken.py"));
}

#[test]
fn rust_tests_with_attributes() {
    insta::assert_snapshot!(snapshot("rust/parser_tests.rs"));
}

#[test]
fn rust_with_broken_syntax() {
    insta::assert_snapshot!(snapshot("rust/broken.rs"));
}

#[test]
fn rust_with_crlf_line_endings() {
    insta::assert_snapshot!(snapshot("rust/windows_line_endings.rs"));
}

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

#[test]
fn a_ten_megabyte_file_is_extracted_whole() {
    let test = "#[test]\nfn t() {\n    assert_eq!(1 + 1, 2, \"arithmetic still works\");\n}\n\n";
    let count = 10 * 1024 * 1024 / test.len() + 1;
    let source = test.repeat(count);
    let extraction = extract_tests(Language::Rust, "big.rs", &source);
    assert_eq!(extraction.tests.len(), count);
    assert!(!extraction.has_syntax_errors);
}
