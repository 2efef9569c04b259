//! The fuzz targets: each takes any bytes and must return without a panic, an abort or a hang.
//! Shared by the fuzzer (`cargo bench --bench fuzz`) and the replay of its corpus
//! (`tests/fuzz_corpus.rs`).

use std::sync::Arc;

use flakesense::analysis::{self, Models, Thresholds};
use flakesense::extract::decode_source;
use flakesense::history::junit::report_xml::parse_report;
use flakesense::index::Index;
use flakesense::language::Language;
use flakesense::lsp::framing::{Decoder, Frame};

/// A target's name (its folder under `tests/fuzz-corpus`) and its function.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    /// Seed files, relative to the crate root, besides the target's corpus folder.
    pub seeds: &'static [&'static str],
    /// Byte strings worth inserting: the format's own syntax.
    pub dictionary: &'static [&'static str],
    /// Seeds made in code, besides the files: inputs too long or too binary to keep as files.
    pub made_seeds: fn() -> Vec<Vec<u8>>,
}

pub const TARGETS: &[Target] = &[
    Target {
        name: "extract-java",
        run: |bytes| extract(Language::Java, "src/test/java/FuzzTest.java", bytes),
        seeds: &[
            "tests/fixtures/extract/java",
            "tests/fixtures/demo/src/test/java/demo",
        ],
        dictionary: &[
            "@Test",
            "@Test(timeout = 1)",
            "@ParameterizedTest",
            "@Disabled(\"flaky\")",
            "class ",
            "void ",
            "{",
            "}",
            "(",
            ")",
            "\"",
            "/*",
            "*/",
            "//",
            "\n",
            "Thread.sleep(100);",
            "@Nested",
            "interface ",
            "enum ",
            "record ",
            "\\u0000",
        ],
        made_seeds: Vec::new,
    },
    Target {
        name: "extract-python",
        run: |bytes| extract(Language::Python, "tests/test_fuzz.py", bytes),
        seeds: &["tests/fixtures/extract/python", "tests/fixtures/demo/tests"],
        dictionary: &[
            "def test_",
            "async def test_",
            "class Test",
            "@pytest.mark.flaky",
            "@pytest.fixture",
            ":\n    ",
            "\n",
            "(",
            ")",
            "\"\"\"",
            "'",
            "#",
            "\\",
            "\t",
            "time.sleep(1)",
        ],
        made_seeds: Vec::new,
    },
    Target {
        name: "extract-rust",
        run: |bytes| extract(Language::Rust, "src/fuzz.rs", bytes),
        seeds: &["tests/fixtures/extract/rust", "tests/fixtures/demo/tests"],
        dictionary: &[
            "#[test]",
            "#[tokio::test]",
            "#[ignore = \"flaky\"]",
            "fn t() {}",
            "mod m {",
            "#[cfg(test)]",
            "{",
            "}",
            "(",
            ")",
            "r#\"",
            "\"#",
            "/*",
            "*/",
            "//",
            "'a",
            "macro_rules!",
        ],
        made_seeds: Vec::new,
    },
    Target {
        name: "index",
        run: index,
        seeds: &["tests/fixtures/index/v1.idx", "tests/fuzz-corpus/index"],
        dictionary: &["\u{0}", "\u{1}", "\u{ff}", "\u{fb}", "\u{fc}", "\u{fd}"],
        made_seeds: Vec::new,
    },
    Target {
        name: "csv",
        run: |bytes| {
            let _ = flakesense::dataset::read_csv(bytes);
        },
        seeds: &[
            "tests/fixtures/check/tiny.csv",
            "tests/fixtures/lsp/known_tests.csv",
        ],
        dictionary: &[
            ",", "\"", "\n", "\r\n", "true", "false", "1", "0", "\"\"", "java", "python", "rust",
        ],
        made_seeds: Vec::new,
    },
    Target {
        name: "flaky-list",
        run: flaky_list,
        seeds: &["tests/fixtures/history/flaky-tests.txt"],
        dictionary: &[
            "#",
            "::",
            "[",
            "]",
            ".",
            "$",
            "#",
            ",",
            "\t",
            "\n",
            "network",
            "async-wait",
            "crate::",
            "tests/test_",
            ".py::",
        ],
        made_seeds: Vec::new,
    },
    Target {
        name: "junit",
        run: |bytes| {
            let _ = parse_report(&String::from_utf8_lossy(bytes));
        },
        seeds: &["tests/fixtures/history/reports"],
        dictionary: &[
            "<testsuite>",
            "</testsuite>",
            "<testcase name=\"a\" classname=\"b\">",
            "</testcase>",
            "<failure message=\"timeout\"/>",
            "<flakyFailure/>",
            "<skipped/>",
            "<!DOCTYPE x [",
            "<!ENTITY a \"b\">",
            "&a;",
            "<![CDATA[",
            "]]>",
            "&#0;",
            "&amp;",
            "\"",
            "<",
        ],
        made_seeds: Vec::new,
    },
    Target {
        name: "lsp-framing",
        run: lsp_framing,
        seeds: &["tests/fuzz-corpus/lsp-framing"],
        dictionary: &[
            "Content-Length: ",
            "Content-Type: application/vscode-jsonrpc; charset=utf-8",
            "\r\n",
            "\r\n\r\n",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}",
            "\\ud800",
            "[",
            "]",
            "{",
            "}",
            "\"",
            "99999999999",
            "0",
            "-1",
        ],
        made_seeds: Vec::new,
    },
    Target {
        name: "signals",
        run: signals,
        seeds: &["tests/fixtures/demo"],
        dictionary: &[
            "+x",
            "*2",
            "(",
            ")",
            ".ba",
            ".b()",
            "f(",
            "\"http://example.com/x\" ",
            "class A { ",
            "} ",
            "    ",
            "\n",
            "// flakesense: ignore\n",
            "# flakesense: ignore\n",
            "Thread.sleep(",
            "time.sleep(",
            "std::thread::sleep(",
            "Duration::from_millis(",
            "System.currentTimeMillis() - ",
            "finally { ",
            "x = ",
        ],
        made_seeds: signal_seeds,
    },
    Target {
        name: "index-v3",
        run: index_v3,
        seeds: &[],
        dictionary: &[
            "\u{0}", "\u{1}", "\u{ff}", "\u{7f}", "\u{80}", "\u{40}", "\u{3f}",
        ],
        made_seeds: index_v3_seeds,
    },
];

/// Reading a file's tests as the language server and `check` do on its bytes: extraction, the
/// catalogue's signals and each test's context.
fn extract(language: Language, path: &str, bytes: &[u8]) {
    let (source, _) = decode_source(bytes);
    let _ = analysis::read_tests(language, path, &source, &Default::default());
}

const JAVA_TEST: &str =
    "@Test void waits() throws Exception { Thread.sleep(100); assertTrue(done); }";
const PYTHON_TEST: &str = "def test_waits():\n    time.sleep(1)\n    assert done\n";
const RUST_TEST: &str = "#[test]\nfn waits() { std::thread::sleep(D); assert!(done); }";

/// An index file: the header's length and checksum are set to match whatever follows, so that
/// mutations reach the decoder and the checks after it; a loaded index then judges a test of
/// each language, as the project's index.
fn index(bytes: &[u8]) {
    let mut bytes = bytes.to_vec();
    if bytes.len() >= 28 && bytes.starts_with(b"FLKSNSIX") {
        let payload_len = (bytes.len() - 28) as u64;
        let checksum = crc32fast::hash(&bytes[28..]);
        bytes[16..24].copy_from_slice(&payload_len.to_le_bytes());
        bytes[24..28].copy_from_slice(&checksum.to_le_bytes());
    }
    let Ok(index) = Index::from_bytes(&bytes) else {
        return;
    };
    let models = Models {
        project: Some(Arc::new(index)),
        ..Models::default()
    };
    let thresholds = Thresholds {
        k: 7,
        warning: 0.95,
        information: 0.5,
    };
    for (language, code) in [
        (Language::Java, JAVA_TEST),
        (Language::Python, PYTHON_TEST),
        (Language::Rust, RUST_TEST),
    ] {
        let prediction = analysis::judge_code(&models, &thresholds, language, code);
        assert!(
            (0.0..=1.0).contains(&prediction.score),
            "a score out of range: {}",
            prediction.score
        );
    }
}

/// A flaky list, its names looked up among a few tests of each language.
fn flaky_list(bytes: &[u8]) {
    use flakesense::history::names::Catalogue;
    use flakesense::history::names::spelling::Spelling;
    let catalogue = Catalogue::new([
        (
            Language::Java,
            "com.example.shop.OrderServiceTest#placesOrder",
        ),
        (
            Language::Java,
            "com.example.shop.InventoryTest#connectsToWarehouse",
        ),
        (
            Language::Python,
            "tests/test_search.py::test_search_index_refresh",
        ),
        (Language::Python, "tests/test_search.py::TestA::test_b"),
        (Language::Rust, "cache::tests::refreshes_in_background"),
    ]);
    for line in flakesense::history::flaky_list::parse(&String::from_utf8_lossy(bytes)) {
        if let Some(spelling) = Spelling::parse(&line.name) {
            let _ = catalogue.lookup(&spelling);
            let _ = catalogue.closest(&spelling, 5);
        }
    }
}

/// The server's framing: the bytes in reads of varying size, every frame taken.
fn lsp_framing(bytes: &[u8]) {
    let mut decoder = Decoder::default();
    let step = usize::from(bytes.first().copied().unwrap_or(1)).max(1);
    for chunk in bytes.chunks(step) {
        decoder.push(chunk);
        loop {
            match decoder.next_frame() {
                Ok(Some(Frame::Message { message, .. })) => assert!(message.is_object()),
                Ok(Some(Frame::Rejected { replies, .. })) => {
                    assert!(replies.iter().all(|reply| reply["error"].is_object()))
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
    let _ = decoder.finish();
}

/// The signal target's input: its first byte picks the language, the rest is a file of it.
fn signals(bytes: &[u8]) {
    let Some((&first, rest)) = bytes.split_first() else {
        return;
    };
    let (language, path) = match first % 3 {
        0 => (Language::Java, "src/test/java/FuzzTest.java"),
        1 => (Language::Python, "tests/test_fuzz.py"),
        _ => (Language::Rust, "tests/fuzz.rs"),
    };
    extract(language, path, rest);
}

/// Seeds of the signal target: in each language, a sleep on a long sum, in deep parentheses,
/// in nested calls, after a long member chain and a URL, tests in deeply nested classes and
/// after many ignore comments: the shapes whose reading once recursed or rescanned per node.
fn signal_seeds() -> Vec<Vec<u8>> {
    let sum = vec!["x"; 1500].join("+");
    let parentheses = format!("{}x{}", "(".repeat(1500), ")".repeat(1500));
    let calls = format!("{}x{}", "f(".repeat(1000), ")".repeat(1000));
    let chain = format!("\"http://example.com/x\" a{}.b", ".ba".repeat(1000));
    let methods = format!("a{}", ".b()".repeat(1000));
    let mut seeds = Vec::new();
    for argument in [&sum, &parentheses, &calls] {
        seeds.push(format!(
            "\0class FuzzTest {{ @Test void t() throws Exception {{ Thread.sleep({argument}); }} }}\n"
        ));
        seeds.push(format!(
            "\u{1}import time\ndef test_t():\n    time.sleep({argument})\n"
        ));
        seeds.push(format!(
            "\u{2}#[test]\nfn t() {{ std::thread::sleep({argument}); }}\n"
        ));
    }
    for statement in [&chain, &methods] {
        seeds.push(format!(
            "\0class FuzzTest {{ @Test void t() {{ {statement}; }}\n  @Test void u() {{ }} }}\n"
        ));
        seeds.push(format!(
            "\u{1}def test_t():\n    {statement}\n\ndef test_u():\n    pass\n"
        ));
        seeds.push(format!(
            "\u{2}#[test]\nfn t() {{ {statement}; }}\n#[test]\nfn u() {{}}\n"
        ));
    }
    let depth = 400;
    let mut nested = String::from("\0");
    for level in 0..depth {
        nested.push_str(&format!("class A{level} {{ "));
    }
    nested.push_str("@Test void t() { Thread.sleep(1); } ");
    nested.push_str(&"} ".repeat(depth));
    seeds.push(nested);
    let mut nested = String::from("\u{1}");
    for level in 0..depth.min(90) {
        nested.push_str(&format!("{}class TestA{level}:\n", " ".repeat(level)));
    }
    nested.push_str(&format!(
        "{}def test_t(self):\n{}time.sleep(1)\n",
        " ".repeat(90),
        " ".repeat(91)
    ));
    seeds.push(nested);
    seeds.push(format!(
        "\u{2}{}#[test]\nfn t() {{ std::thread::sleep(D); }}\n",
        "// flakesense: ignore\n".repeat(500)
    ));
    seeds.into_iter().map(String::into_bytes).collect()
}

/// A valid index file of format 3: the index seed, written again.
fn format_3_file() -> &'static [u8] {
    static FILE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        let seed = include_bytes!("../../tests/fuzz-corpus/index/seed-model-with-prior.idx");
        let bytes = Index::from_bytes(seed)
            .expect("the index seed loads")
            .to_bytes();
        assert_eq!(
            bytes[8..12],
            3u32.to_le_bytes(),
            "the seed is written as format 3"
        );
        bytes
    })
}

/// Where the parts of a format-3 file lie: the header, the directory, then each section its
/// directory names (clamped to the file).
fn format_3_parts(file: &[u8]) -> Vec<std::ops::Range<usize>> {
    const HEADER_LEN: usize = 28;
    let word = |at: usize, len: usize| -> u64 {
        file.get(at..at + len).map_or(0, |bytes| {
            bytes
                .iter()
                .rev()
                .fold(0u64, |value, &byte| value << 8 | u64::from(byte))
        })
    };
    let count = word(HEADER_LEN, 4) as usize;
    let directory_end = (HEADER_LEN + 8 + 24 * count).min(file.len());
    let mut parts = vec![0..HEADER_LEN, HEADER_LEN..directory_end];
    for number in 0..count {
        let at = HEADER_LEN + 8 + 24 * number;
        let start = (word(at + 8, 8) as usize).min(file.len());
        let end = start
            .saturating_add(word(at + 16, 8) as usize)
            .min(file.len());
        parts.push(start..end);
    }
    parts
}

/// The format-3 target's input: its first byte picks a part of a valid format-3 file (the
/// header, the directory or a section), the rest overwrites that part from its start (what goes
/// past its end is dropped). The header's length and checksum are then set to match, so that
/// a mutation reaches the checks behind them, and the index is used as [`index`] uses one.
fn index_v3(bytes: &[u8]) {
    let Some((&first, rest)) = bytes.split_first() else {
        return;
    };
    let mut file = format_3_file().to_vec();
    let parts = format_3_parts(&file);
    let part = parts[usize::from(first) % parts.len()].clone();
    let len = rest.len().min(part.len());
    file[part.start..part.start + len].copy_from_slice(&rest[..len]);
    index(&file);
}

/// Seeds of the format-3 target: each part of a valid file, as it is.
fn index_v3_seeds() -> Vec<Vec<u8>> {
    let file = format_3_file();
    format_3_parts(file)
        .into_iter()
        .enumerate()
        .map(|(number, part)| {
            let mut seed = vec![number as u8];
            seed.extend_from_slice(&file[part]);
            seed
        })
        .collect()
}
