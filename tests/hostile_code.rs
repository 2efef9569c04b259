//! Source files crafted to exhaust the stack or the processor of whoever reads their tests: long
//! sums and deep parentheses inside a `sleep`, classes nested 20,000 deep, a string followed by a
//! long member chain, thousands of `flakesense: ignore` comments. Each is read as `check`,
//! `predict` and the language server read a file (its tests, their signals and context), and
//! must give the same answer a short file gives, without an abort or a run of minutes.

use flakesense::analysis::read_tests;
use flakesense::extract::Incomplete;
use flakesense::language::Language;

/// The three languages, each with a test calling its sleep on `argument`.
fn sleeping_tests(argument: &str) -> [(Language, &'static str, String); 3] {
    [
        (
            Language::Python,
            "tests/test_sum.py",
            format!("import time\n\ndef test_waits():\n    time.sleep({argument})\n"),
        ),
        (
            Language::Java,
            "src/test/java/SumTest.java",
            format!(
                "class SumTest {{\n  @Test void waits() throws Exception {{ Thread.sleep({argument}); }}\n}}\n"
            ),
        ),
        (
            Language::Rust,
            "tests/sum.rs",
            format!("#[test]\nfn waits() {{ std::thread::sleep({argument}); }}\n"),
        ),
    ]
}

/// The ids of the risks found in the single test of a file.
fn risks_of_one_test(language: Language, path: &str, source: &str) -> Vec<&'static str> {
    let read = read_tests(language, path, source, &Default::default());
    assert_eq!(read.tests.len(), 1, "{language}: one test in {path}");
    read.signals[0].risks.iter().map(|risk| risk.id).collect()
}

#[test]
fn a_sleep_of_a_sum_of_20000_operands_is_a_fixed_sleep_and_no_stack_overflow() {
    let sum = vec!["x"; 20_000].join("+");
    for (language, path, source) in sleeping_tests(&sum) {
        assert!(source.len() > 40_000);
        let risks = risks_of_one_test(language, path, &source);
        assert!(risks.contains(&"fixed-sleep"), "{language}: {risks:?}");
    }
}

#[test]
fn a_sleep_in_20000_parentheses_is_a_fixed_sleep_and_no_stack_overflow() {
    let nested = format!("{}x{}", "(".repeat(20_000), ")".repeat(20_000));
    for (language, path, source) in sleeping_tests(&nested) {
        let risks = risks_of_one_test(language, path, &source);
        assert!(risks.contains(&"fixed-sleep"), "{language}: {risks:?}");
    }
}

#[test]
fn classes_nested_20000_deep_are_given_up_as_too_deep() {
    let depth = 20_000;
    let mut source = String::from("class A0 {");
    for level in 1..depth {
        source.push_str(&format!(" class A{level} {{"));
    }
    source.push_str(" @Test void waits() throws Exception { Thread.sleep(10); } ");
    source.push_str(&"}".repeat(depth));
    assert!(source.len() > 280_000);
    let read = read_tests(
        Language::Java,
        "src/test/java/A0.java",
        &source,
        &Default::default(),
    );
    assert!(read.tests.is_empty());
    assert!(
        matches!(read.incomplete, Some(Incomplete::TooDeep { .. })),
        "{:?}",
        read.incomplete
    );
}

#[test]
fn a_url_before_a_long_member_chain_leaves_later_comments_found() {
    let chain = format!("a{}.b", ".ba".repeat(16_000));
    let cases = [
        (
            Language::Java,
            "src/test/java/UrlTest.java",
            format!(
                "class UrlTest {{\n  @Test void chained() {{ \"http://example.com/x\" {chain}; }}\n  // flakesense: ignore\n  @Test void later() {{ }}\n}}\n"
            ),
        ),
        (
            Language::Rust,
            "tests/url.rs",
            format!(
                "#[test]\nfn chained() {{ \"http://example.com/x\" {chain}; }}\n// flakesense: ignore\n#[test]\nfn later() {{}}\n"
            ),
        ),
    ];
    for (language, path, source) in cases {
        assert!(source.len() > 48_000);
        let read = read_tests(language, path, &source, &Default::default());
        let names: Vec<(&str, bool)> = read
            .tests
            .iter()
            .map(|test| (test.name.as_str(), test.ignored))
            .collect();
        assert_eq!(names, [("chained", false), ("later", true)], "{language}");
    }
}

#[test]
fn a_test_after_20000_ignore_comments_is_ignored() {
    let source = format!(
        "{}#[test]\nfn waits() {{ std::thread::sleep(D); }}\n",
        "// flakesense: ignore\n".repeat(20_000)
    );
    let read = read_tests(
        Language::Rust,
        "tests/ignored.rs",
        &source,
        &Default::default(),
    );
    assert_eq!(read.tests.len(), 1);
    assert!(read.tests[0].ignored);
}
