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
    },
    Target {
        name: "index",
        run: index,
        seeds: &["tests/fixtures/index/v1.idx", "tests/fuzz-corpus/index"],
        dictionary: &["\u{0}", "\u{1}", "\u{ff}", "\u{fb}", "\u{fc}", "\u{fd}"],
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
