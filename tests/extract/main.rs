//! Test extraction over realistic fixture files, checked with snapshots, and test discovery
//! under pytest's settings over the fixture trees of `tests/fixtures/discovery`; hostile input
//! is in `hostile.rs`.

mod hostile;

use std::fmt::Write as _;
use std::path::Path;

use flakesense::extract::{
    Extraction, Incomplete, decode_source, extract_tests, extract_tests_from_tree,
    extract_tests_with, parse,
};
use flakesense::language::Language;

/// The fixtures, as paths under `tests/fixtures/extract/`.
const FIXTURES: [&str; 11] = [
    "java/OrderServiceTest.java",
    "java/LegacyAccountTest.java",
    "java/BrokenSyntaxTest.java",
    "python/test_orders.py",
    "python/test_broken.py",
    "python/test_inherited.py",
    "rust/parser_tests.rs",
    "rust/broken.rs",
    "rust/windows_line_endings.rs",
    "rust/macro_tests.rs",
    "rust/table_tests.rs",
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
/// ignored, the first line of its code (where the range starts), and, for a test a class
/// inherits, where it is defined.
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
        if let Some(inherited) = &test.inherited {
            let (line, column) = line_and_column(source, inherited.class_name.start);
            let defined = match &inherited.elsewhere {
                Some(elsewhere) => {
                    let (line, column) =
                        line_and_column(&elsewhere.module.text, elsewhere.name_range.start);
                    format!("{} at {line}:{column}", elsewhere.module.path)
                }
                None => "this file".to_string(),
            };
            let _ = writeln!(
                text,
                "  inherited by the class at {line}:{column}, defined in {defined}"
            );
        }
    }
    text
}

/// What must hold for every test of every input, whatever its syntax. A test a class inherits
/// from another module has its code there, and its range on the class's name here.
fn assert_consistent(source: &str, extraction: &Extraction) {
    for test in &extraction.tests {
        let elsewhere = test
            .inherited
            .as_ref()
            .and_then(|inherited| inherited.elsewhere.as_ref());
        if let Some(elsewhere) = elsewhere {
            let inherited = test.inherited.as_ref().unwrap();
            assert_eq!(test.code, elsewhere.module.text[elsewhere.range.clone()]);
            assert_eq!(
                test.name,
                elsewhere.module.text[elsewhere.name_range.clone()]
            );
            assert_eq!(test.range, inherited.class_name);
            assert_eq!(test.name_range, inherited.class_name);
            assert!(test.id.ends_with(&test.name), "{}", test.id);
            continue;
        }
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
        // Markers and head comments lie in the head, before the name, in source order.
        let head = test.range.start..test.name_range.start;
        let in_head = |range: &std::ops::Range<usize>| {
            head.start <= range.start
                && range.end <= head.end
                && source.get(range.clone()).is_some()
        };
        for marker in &test.markers {
            assert!(in_head(&marker.range), "{marker:?} outside {head:?}");
            let parts = marker
                .strings
                .iter()
                .chain(&marker.arguments)
                .chain([&marker.name]);
            for part in parts {
                assert!(
                    marker.range.start <= part.start && part.end <= marker.range.end,
                    "{part:?} outside {marker:?}"
                );
            }
        }
        assert!(test.markers.is_sorted_by_key(|marker| marker.range.start));
        assert!(test.head_comments.iter().all(in_head));
        assert!(test.head_comments.is_sorted_by_key(|comment| comment.start));
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
fn python_tests_a_class_inherits_from_its_bases_and_mixins() {
    insta::assert_snapshot!(snapshot("python/test_inherited.py"));
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
fn rust_tests_declared_inside_macro_invocations() {
    insta::assert_snapshot!(snapshot("rust/macro_tests.rs"));
}

#[test]
fn rust_tables_of_tests_several_per_macro_invocation() {
    insta::assert_snapshot!(snapshot("rust/table_tests.rs"));
}

/// What a reviewer needs to judge discovery over a fixture tree: per Python file, whether a walk
/// over the tree judges it (`python_files`), and the tests found in it by the settings of its
/// nearest pytest configuration.
fn discovery_snapshot(tree: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/discovery")
        .join(tree);
    let (paths, problems) = flakesense::files::walk_sources(
        std::slice::from_ref(&root),
        &root,
        &globset::GlobSet::empty(),
    );
    assert!(problems.is_empty(), "{problems:?}");
    let mut text = String::new();
    for path in paths {
        let relative = path
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        let discovery = flakesense::workspace::discovery(&root, Language::Python, &path);
        let walked = if discovery.collects_file(Language::Python, &path) {
            "judged when walking"
        } else {
            "only judged when named"
        };
        let source = std::fs::read_to_string(&path).expect("readable");
        let extraction = extract_tests_with(Language::Python, &relative, &source, &discovery);
        assert_consistent(&source, &extraction);
        let _ = writeln!(text, "{relative}: {walked}");
        for test in &extraction.tests {
            let defined = test
                .inherited
                .as_ref()
                .map(|inherited| match &inherited.elsewhere {
                    Some(elsewhere) => format!(" (inherited from {})", elsewhere.module.path),
                    None => " (inherited)".to_string(),
                })
                .unwrap_or_default();
            let _ = writeln!(text, "  {}{defined}", test.id);
        }
    }
    text
}

#[test]
fn pytest_settings_of_a_celery_like_project() {
    insta::assert_snapshot!(discovery_snapshot("celery"));
}

#[test]
fn tests_a_class_inherits_from_another_module_of_the_project() {
    insta::assert_snapshot!(discovery_snapshot("inherited"));
}

#[test]
fn pytest_settings_take_the_nearest_file_and_pytests_order_within_a_directory() {
    insta::assert_snapshot!(discovery_snapshot("precedence"));
}
