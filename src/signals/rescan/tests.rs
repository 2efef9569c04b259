use super::*;
use crate::extract::parse;
use crate::random_edits::RandomEdits;

/// Applies seeded random edits to `source` (see [`RandomEdits`]) and checks that every
/// rescan finds what a full scan of the same text finds, and that a quarter of them kept the
/// last scan.
fn rescans_find_what_full_scans_find(language: Language, source: &str, pieces: &[&str]) {
    let scan_of = |text: &str| {
        let tree = parse(language, text, None).expect("the grammars load");
        (scan(language, text, &tree), tree)
    };
    let (mut previous, _) = scan_of(source);
    let mut previous_text = source.to_string();
    let mut spliced = 0;
    let steps = 120;
    for (step, edited) in RandomEdits::new(source, pieces, 1).take(steps).enumerate() {
        let (full, tree) = scan_of(&edited);
        let (rescanned, splice) = rescan(language, &previous, &previous_text, &edited, &tree);
        assert_eq!(
            rescanned.hits, full.hits,
            "{language}, step {step}: {splice:?}\n{edited}"
        );
        if splice.is_some() {
            spliced += 1;
            let kept = rescanned.kept.as_ref().expect("a splice keeps its layout");
            let whole = full.kept.as_ref().expect("a full scan keeps its layout");
            assert_eq!(kept.layout, whole.layout, "{language}, step {step}");
            assert_eq!(kept.facts, whole.facts, "{language}, step {step}");
            let sorted = |reads: &[(usize, String)]| {
                let mut reads = reads.to_vec();
                reads.sort();
                reads
            };
            assert_eq!(
                sorted(&kept.reads),
                sorted(&whole.reads),
                "{language}, step {step}"
            );
        }
        previous = rescanned;
        previous_text = edited;
    }
    assert!(
        spliced >= steps / 4,
        "{language}: only {spliced} of {steps} edits kept the last scan"
    );
}

#[test]
fn a_rescan_after_any_edit_finds_what_a_full_scan_finds() {
    rescans_find_what_full_scans_find(
        Language::Java,
        include_str!("../../../tests/fixtures/context/java/AccountServiceTest.java"),
        &[
            "Thread.sleep(100);",
            "long delay = 2000;",
            "Thread.sleep(delay);",
            "new Socket(\"example.com\", 80);",
            "1",
            "x",
            "\n",
            "}",
            "{",
            "// c",
            "\"",
        ],
    );
    rescans_find_what_full_scans_find(
        Language::Python,
        include_str!("../../../tests/fixtures/context/python/api/test_orders.py"),
        &[
            "time.sleep(0.5)",
            "delay = 3",
            "\n    time.sleep(delay)",
            "requests.get('http://example.com')",
            "1",
            "x",
            "\n",
            ":",
            "(",
            "# c",
            "\"",
        ],
    );
    rescans_find_what_full_scans_find(
        Language::Rust,
        include_str!("../../../tests/fixtures/context/rust/server_tests.rs"),
        &[
            "std::thread::sleep(Duration::from_millis(100));",
            "let delay = 5;",
            "assert!(start.elapsed() < Duration::from_millis(5));",
            "1",
            "x",
            "\n",
            "}",
            "{",
            "// c",
            "\"",
        ],
    );
}

#[test]
fn an_edit_that_changes_a_value_read_elsewhere_scans_the_whole_file() {
    // `d` is a field: every method reads it.
    let before = "class T {\n  static final long d = 500;\n  void a() { }\n  @Test void b() { Thread.sleep(d); }\n}\n";
    let after = before.replace("500", "0");
    let language = Language::Java;
    let tree = parse(language, before, None).expect("parses");
    let previous = scan(language, before, &tree);
    assert_eq!(previous.hits.len(), 1, "a sleep of 500 ms waits");
    let tree = parse(language, &after, None).expect("parses");
    let (rescanned, splice) = rescan(language, &previous, before, &after, &tree);
    assert_eq!(splice, None);
    assert!(rescanned.hits.is_empty(), "a sleep of 0 ms only yields");
    // An edit in another function that binds a value no other code reads is spliced.
    let renamed = before.replace("void a() { }", "void a() { long e = 0; }");
    let tree = parse(language, &renamed, None).expect("parses");
    let (rescanned, splice) = rescan(language, &previous, before, &renamed, &tree);
    let splice = splice.expect("the edit stays inside `a`");
    assert!(splice.in_body);
    assert_eq!(rescanned.hits.len(), 1);
    assert_eq!(rescanned.hits[0].line, 4);
}
