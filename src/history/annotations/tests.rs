//! Which markers, reasons and comments mark a test flaky, and what is stripped from its code.

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
    let flaky =
        "class A {\n  @Test\n  @Disabled(\"intermittent: connection refused\")\n  void a() {}\n}\n";
    let (marks, stripped) = inspect_one(Language::Java, "A.java", flaky);
    assert!(marks.is_flaky());
    assert_eq!(marks.categories, [Category::Network]);
    assert!(!stripped.contains("Disabled"));
    let other = "class A {\n  @Test\n  @Disabled(\"needs a licence server\")\n  void a() {}\n}\n";
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
    let xfail = "@pytest.mark.xfail(reason=\"bug #12: wrong rounding\")\ndef test_a():\n    pass\n";
    assert!(!inspect_one(Language::Python, "t.py", xfail).0.is_flaky());
    let explained = "@sample(\n    # other bins make the test flaky\n    bins=[1, 2],\n)\ndef test_a():\n    pass\n";
    assert!(
        !inspect_one(Language::Python, "t.py", explained)
            .0
            .is_flaky(),
        "a comment among a marker's arguments explains them"
    );
    let comment =
        "@unittest.expectedFailure  # fails intermittently on CI\ndef test_a():\n    pass\n";
    let (marks, stripped) = inspect_one(Language::Python, "t.py", comment);
    assert!(marks.is_flaky());
    assert!(!stripped.contains("intermittently"));
}

#[test]
fn rust_attributes_and_comments() {
    let ignore = "#[test]\n#[ignore = \"flaky: races with the eviction thread\"]\nfn evicts() {}\n";
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
