//! Times extraction on hostile sources: the slow and memory-hungry inputs of issue 14 ("Slow
//! sources") at their full size, and 2 MB files of pathological content in each language.
//!
//! Run with `cargo bench --bench hostile_sources`, or name cases to run only those
//! (`cargo bench --bench hostile_sources -- rust_nested_modules_40k`). Each line gives the case,
//! its size, the time of one parse and extraction, the tests found and why some or all were left
//! out, if they were. Memory is measured from outside, one case per process:
//! `/usr/bin/time -v target/release/deps/hostile_sources-<hash> rust_nested_modules_40k`.
//! The target of the issue: a 2 MB file of any content in under 2 s and 300 MB.

use std::time::Instant;

use flakesense::extract::extract_tests;
use flakesense::language::Language;

const TWO_MB: usize = 2 * 1024 * 1024;

/// `unit` repeated until the text holds `bytes` bytes.
fn filled(prefix: &str, unit: &str, bytes: usize) -> String {
    let count = bytes.saturating_sub(prefix.len()) / unit.len().max(1);
    format!("{prefix}{}", unit.repeat(count))
}

/// Bytes from a fixed-seed linear congruential generator: reproducible without a dependency.
fn noise(bytes: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    (0..bytes)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 56) as u8
        })
        .collect()
}

/// A realistic test file of about `bytes`: one short test repeated.
fn realistic(language: Language, bytes: usize) -> String {
    let test = match language {
        Language::Java => {
            "class GeneratedTest {\n    @Test\n    void check() throws Exception {\n        assertEquals(compute(new int[] {1, 2}), list.get(0));\n        Thread.sleep(10);\n    }\n}\n"
        }
        Language::Python => {
            "class TestGenerated:\n    @pytest.mark.slow\n    def test_case(self):\n        assert compute([1, 2], {'a': (3, 4)}) == 2\n        time.sleep(0.01)\n\n"
        }
        Language::Rust => {
            "#[cfg(test)]\nmod tests {\n    #[test]\n    fn case() {\n        assert_eq!(compute(&[1, 2], (3, 4)), vec![2]);\n        sleep(Duration::from_millis(10));\n    }\n}\n"
        }
    };
    test.repeat(bytes / test.len())
}

/// [`realistic`], then mutated as a fuzzer would: one byte in 64 replaced, duplicated or
/// turned into a bracket.
fn mutated(language: Language, bytes: usize) -> String {
    let original = realistic(language, bytes + 4096).into_bytes();
    let dice = noise(original.len() * 2, 7);
    let mut out = Vec::with_capacity(bytes + bytes / 16);
    for (index, &byte) in original.iter().enumerate() {
        let roll = dice[index * 2];
        let pick = dice[index * 2 + 1];
        match roll {
            0..=1 => out.push(b"({[<\"'#"[usize::from(pick) % 7]),
            2 => out.extend([byte, byte]),
            3 => {}
            _ => out.push(byte),
        }
        if out.len() >= bytes {
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every case, in the order they run.
const CASES: [&str; 29] = [
    // Issue 14's cases at the sizes it measured.
    "rust_open_parens_16k",
    "rust_open_parens_100k",
    "rust_repeated_attributes_2k",
    "java_repeated_annotations_1k",
    "rust_nested_modules_20k",
    "rust_nested_modules_40k",
    "rust_mutated_256k",
    // Valid test files of 2 MB, which must be judged whole.
    "rust_valid_2m",
    "java_valid_2m",
    "python_valid_2m",
    // 2 MB of pathological content in each language.
    "rust_mutated_2m",
    "java_mutated_2m",
    "python_mutated_2m",
    "rust_open_parens_2m",
    "rust_open_braces_2m",
    "rust_attributes_2m",
    "rust_macro_tests_2m",
    "rust_vec_literal_2m",
    "rust_nested_modules_2m",
    "java_open_parens_2m",
    "java_annotations_2m",
    "java_array_literal_2m",
    "java_nested_classes_2m",
    "python_open_brackets_2m",
    "python_decorators_2m",
    "python_list_literal_2m",
    "python_nested_classes",
    "python_tests_2m",
    "noise_2m",
];

/// The source of a case, built only when it runs.
fn case(name: &str) -> Option<(Language, String)> {
    use Language::{Java, Python, Rust};
    let nested_modules = |depth: usize| {
        format!(
            "{}{}",
            "mod m { #[test] fn t() {}\n".repeat(depth),
            "}".repeat(depth)
        )
    };
    let nested_classes = |depth: usize| {
        let mut source = String::new();
        for level in 0..depth {
            source.push_str(&" ".repeat(level));
            source.push_str("class TestA:\n");
            source.push_str(&" ".repeat(level + 1));
            source.push_str("def test_a(self): pass\n");
        }
        source
    };
    Some(match name {
        "rust_open_parens_16k" => (Rust, format!("#[test]\nfn t(){}", "(".repeat(16_000))),
        "rust_open_parens_100k" => (Rust, format!("#[test]\nfn t(){}", "(".repeat(100_000))),
        "rust_repeated_attributes_2k" => {
            (Rust, format!("{}fn t() {{}}\n", "#[test]\n".repeat(2_000)))
        }
        "java_repeated_annotations_1k" => (
            Java,
            format!("class A {{\n{}void t() {{}}\n}}\n", "@Test\n".repeat(1_000)),
        ),
        "rust_nested_modules_20k" => (Rust, nested_modules(20_000)),
        "rust_nested_modules_40k" => (Rust, nested_modules(40_000)),
        "rust_mutated_256k" => (Rust, mutated(Rust, 256 * 1024)),
        "rust_valid_2m" => (Rust, realistic(Rust, TWO_MB)),
        "java_valid_2m" => (Java, realistic(Java, TWO_MB)),
        "python_valid_2m" => (Python, realistic(Python, TWO_MB)),
        "rust_mutated_2m" => (Rust, mutated(Rust, TWO_MB)),
        "java_mutated_2m" => (Java, mutated(Java, TWO_MB)),
        "python_mutated_2m" => (Python, mutated(Python, TWO_MB)),
        "rust_open_parens_2m" => (Rust, filled("#[test]\nfn t()", "(", TWO_MB)),
        "rust_open_braces_2m" => (Rust, filled("#[test]\nfn t()", "{", TWO_MB)),
        "rust_attributes_2m" => (Rust, filled("", "#[test]\n", TWO_MB) + "fn t() {}\n"),
        "rust_macro_tests_2m" => (
            Rust,
            filled("tests! {\n", "#[test] fn t() {}\n", TWO_MB) + "}\n",
        ),
        "rust_vec_literal_2m" => (
            Rust,
            filled("#[test]\nfn t() { let v = vec![", "1, ", TWO_MB) + "]; }\n",
        ),
        "rust_nested_modules_2m" => (Rust, nested_modules(TWO_MB / 27)),
        "java_open_parens_2m" => (Java, filled("class A { @Test void t() { f", "(", TWO_MB)),
        "java_annotations_2m" => (
            Java,
            filled("class A {\n", "@Test\n", TWO_MB) + "void t() {}\n}\n",
        ),
        "java_array_literal_2m" => (
            Java,
            filled("class A { @Test void t() { int[] a = {", "1, ", TWO_MB) + "}; } }\n",
        ),
        "java_nested_classes_2m" => (Java, filled("", "class A { @Test void t() {}\n", TWO_MB)),
        "python_open_brackets_2m" => (Python, filled("def test_a():\n    x = ", "[", TWO_MB)),
        "python_decorators_2m" => (
            Python,
            filled("", "@pytest.mark.slow\n", TWO_MB) + "def test_a(): pass\n",
        ),
        "python_list_literal_2m" => (
            Python,
            filled("def test_a():\n    x = [", "1, ", TWO_MB) + "]\n",
        ),
        "python_nested_classes" => (Python, nested_classes(2_000)),
        "python_tests_2m" => (Python, filled("", "def test_a(): pass\n", TWO_MB)),
        "noise_2m" => (
            Rust,
            String::from_utf8_lossy(&noise(TWO_MB, 11)).into_owned(),
        ),
        _ => return None,
    })
}

fn main() {
    // As the binary does, so that the parser's memory bound applies.
    // SAFETY: the first thing the process does, before any thread or tree-sitter call.
    unsafe { flakesense::extract::count_parser_memory() };
    // `cargo bench` passes `--bench`; any other argument names a case to run.
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|argument| !argument.starts_with("--"))
        .collect();
    for name in CASES {
        if !wanted.is_empty() && !wanted.iter().any(|wanted| wanted == name) {
            continue;
        }
        let Some((language, source)) = case(name) else {
            continue;
        };
        let started = Instant::now();
        let extraction = extract_tests(language, "hostile", &source);
        let elapsed = started.elapsed();
        let skipped = extraction
            .incomplete
            .map(|reason| format!(" ({reason})"))
            .unwrap_or_default();
        println!(
            "{name:<30} {:>9} bytes {:>8.3} s {:>7} tests{skipped}",
            source.len(),
            elapsed.as_secs_f64(),
            extraction.tests.len(),
        );
    }
}
