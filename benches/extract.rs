//! Times extraction on files of the size the language server meets: 2,600 lines, 200 tests.
//!
//! Run with `cargo bench --bench extract`. It prints the median of repeated runs for a full parse
//! and extraction, an extraction from a kept tree, and the per-keystroke path of the language
//! server: edit the kept tree, re-parse incrementally, extract. Then, on the same files with
//! set-up, fixtures and helpers added, the context of tests from a kept tree: reading the file,
//! resolving one test (what a keystroke needs), resolving every test (what `check` needs).

use std::time::{Duration, Instant};

use flakesense::context::{self, Resolver, SourceFile};
use flakesense::extract::{extract_tests, extract_tests_from_tree, parse};
use flakesense::language::Language;
use tree_sitter::{InputEdit, Point};

const TESTS: usize = 200;
const RUNS: usize = 30;

/// A test file of `TESTS` tests of thirteen lines each.
fn generated_file(language: Language) -> String {
    let mut source = String::new();
    let (open, test, close) = match language {
        Language::Java => (
            "package org.example;\n\nclass GeneratedTest {\n",
            "    // Checks case {i}.\n    @Test\n    void case{i}() throws Exception {\n        int x = {i};\n        assertEquals(x, compute(x, 2));\n        list.add(x);\n        Thread.sleep(10);\n        assertTrue(x > 0);\n        assertFalse(x < 0);\n        done();\n        x++;\n    }\n\n",
            "}\n",
        ),
        Language::Python => (
            "import pytest\n\n\nclass TestGenerated:\n",
            "    # Checks case {i}.\n    @pytest.mark.slow\n    def test_case_{i}(self):\n        x = {i}\n        assert x == compute(x, 2)\n        values.append(x)\n        time.sleep(0.01)\n        assert x > 0\n        assert not x < 0\n        done()\n        x += 1\n\n\n",
            "",
        ),
        Language::Rust => (
            "#[cfg(test)]\nmod tests {\n",
            "    /// Checks case {i}.\n    #[test]\n    #[ignore]\n    fn case_{i}() {\n        let x = {i};\n        assert_eq!(x, compute(x, 2));\n        values.push(x);\n        sleep(Duration::from_millis(10));\n        assert!(x > 0);\n        done();\n        x += 1;\n    }\n\n",
            "}\n",
        ),
    };
    source.push_str(open);
    for i in 0..TESTS {
        source.push_str(&test.replace("{i}", &i.to_string()));
    }
    source.push_str(close);
    source
}

/// The generated file with what its tests run besides their bodies: set-up, fixtures, a field,
/// and the `compute` and `done` helpers every test calls, which call each other.
fn generated_file_with_context(language: Language) -> String {
    let (anchor, context) = match language {
        Language::Java => (
            "class GeneratedTest {\n",
            "class GeneratedTest {\n    private final List<Integer> list = new ArrayList<>();\n\n    @BeforeEach\n    void setUp() throws Exception {\n        prepare();\n    }\n\n    private void prepare() {\n        done();\n    }\n\n    private int compute(int x, int y) {\n        return scale(x) * y;\n    }\n\n    private int scale(int x) {\n        return x;\n    }\n\n    private void done() {\n        compute(1, 1);\n    }\n\n",
        ),
        Language::Python => (
            "class TestGenerated:\n",
            "def compute(x, y):\n    return scale(x) * y\n\n\ndef scale(x):\n    return x\n\n\ndef done():\n    compute(1, 1)\n\n\n@pytest.fixture\ndef port():\n    return 0\n\n\nclass TestGenerated:\n    @pytest.fixture(autouse=True)\n    def server(self, port):\n        return port\n\n    def setup_method(self):\n        self.values = []\n\n",
        ),
        Language::Rust => (
            "mod tests {\n",
            "mod tests {\n    fn compute(x: i32, y: i32) -> i32 {\n        scale(x) * y\n    }\n\n    fn scale(x: i32) -> i32 {\n        x\n    }\n\n    fn done() {\n        compute(1, 1);\n    }\n\n",
        ),
    };
    generated_file(language).replacen(anchor, context, 1)
}

fn median(mut run: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn main() {
    for language in Language::ALL {
        let source = generated_file(language);
        let Some(tree) = parse(language, &source, None) else {
            panic!("the {language} grammar loads");
        };
        let full = median(|| assert_eq!(extract_tests(language, "f", &source).tests.len(), TESTS));
        let from_tree = median(|| {
            assert_eq!(
                extract_tests_from_tree(language, "f", &source, &tree)
                    .tests
                    .len(),
                TESTS
            );
        });
        // One character typed in the middle of the file.
        let at = source.len() / 2;
        let at = (at..source.len())
            .find(|&index| source.is_char_boundary(index))
            .unwrap_or(0);
        let edited = format!("{} {}", &source[..at], &source[at..]);
        let row = source[..at].matches('\n').count();
        let column = source[..at].rsplit('\n').next().map_or(0, str::len);
        let keystroke = median(|| {
            let mut kept = tree.clone();
            kept.edit(&InputEdit {
                start_byte: at,
                old_end_byte: at,
                new_end_byte: at + 1,
                start_position: Point::new(row, column),
                old_end_position: Point::new(row, column),
                new_end_position: Point::new(row, column + 1),
            });
            if let Some(reparsed) = parse(language, &edited, Some(&kept)) {
                extract_tests_from_tree(language, "f", &edited, &reparsed);
            }
        });
        println!(
            "{language:<6} {} lines, {TESTS} tests: parse and extract {full:?}, extract from a tree {from_tree:?}, keystroke {keystroke:?}",
            source.lines().count()
        );
    }
    for language in Language::ALL {
        let source = generated_file_with_context(language);
        let Some(tree) = parse(language, &source, None) else {
            panic!("the {language} grammar loads");
        };
        let tests = extract_tests_from_tree(language, "f", &source, &tree).tests;
        assert_eq!(tests.len(), TESTS);
        let file = SourceFile {
            source: &source,
            tree: &tree,
        };
        let read = median(|| {
            Resolver::new(language, file, &[], &[], &tests);
        });
        let resolver = Resolver::new(language, file, &[], &[], &tests);
        let middle = &tests[TESTS / 2];
        let one = median(|| assert!(resolver.context(middle).len() >= 3));
        let every = median(|| {
            let contexts = context::resolve(language, file, &[], &tests);
            // Every test reaches `compute` and `done`, and `scale` through `compute`.
            assert!(contexts.iter().all(|units| units.len() >= 3));
        });
        println!(
            "{language:<6} {} lines, {TESTS} tests: read for context {read:?}, one test's context {one:?}, every test's context {every:?}",
            source.lines().count()
        );
    }
}
