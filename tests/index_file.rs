//! The index file on disk: a file written by format version 1 keeps loading and answering the
//! same, and damaged, foreign or future files fail with a clear, typed error.

use std::path::{Path, PathBuf};

use flakesense::category::Category;
use flakesense::index::{FormatError, Index, Label, LoadError, Origin};
use flakesense::language::Language;
use flakesense::predict::{self, predict};

/// Written by format version 1 (`flakesense train --data tests/fixtures/check/tiny.csv`). Never
/// regenerate it: a future format must keep reading it, or bump the version and migrate.
fn version_1() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/index/v1.idx")
}

fn load_bytes(bytes: &[u8]) -> Result<Index, LoadError> {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let path = directory.path().join("index");
    std::fs::write(&path, bytes).expect("writable");
    Index::load(&path)
}

#[test]
fn a_version_1_file_loads_and_answers_as_it_did() {
    let index = Index::load(&version_1()).expect("a version 1 index loads");
    assert_eq!(index.len(), 22);
    assert_eq!(index.entries().filter(|entry| entry.is_flaky()).count(), 11);
    assert_eq!(index.params().projection.dims, 291);
    assert!(index.prior(Language::Java).is_some());
    let code = "@Test public void waitsForServer() throws Exception { server.start(); Thread.sleep(1000); assertTrue(server.isRunning()); }";
    let prediction = predict(
        &[&index],
        Language::Java,
        code,
        &flakesense::signals::detect(Language::Java, code),
        predict::Settings::default(),
        &flakesense::prevalence::Prevalence::default(),
    );
    assert_eq!(
        prediction.neighbors[0].id,
        "org.alpha.ServerTest#waitsForServer"
    );
    assert_eq!(prediction.neighbors[0].distance, 0.0);
    assert!(prediction.flaky);
}

#[test]
fn a_truncated_file_is_named_as_truncated() {
    let bytes = std::fs::read(version_1()).expect("readable");
    for length in [0, 5, 27, bytes.len() / 2, bytes.len() - 1] {
        let error = load_bytes(&bytes[..length]).expect_err("a truncated file does not load");
        assert!(error.is_corruption(), "{error}");
        assert!(
            matches!(
                error,
                LoadError::Format {
                    source: FormatError::Truncated { .. },
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("truncated"), "{error}");
    }
}

#[test]
fn a_flipped_bit_is_caught_by_the_checksum() {
    let mut bytes = std::fs::read(version_1()).expect("readable");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    let error = load_bytes(&bytes).expect_err("a damaged file does not load");
    assert!(
        matches!(
            error,
            LoadError::Format {
                source: FormatError::ChecksumMismatch,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.is_corruption());
}

#[test]
fn a_file_from_a_future_version_is_left_alone_with_a_clear_message() {
    let mut bytes = std::fs::read(version_1()).expect("readable");
    bytes[8..12].copy_from_slice(&4u32.to_le_bytes());
    let error = load_bytes(&bytes).expect_err("a future file does not load");
    assert!(
        matches!(
            error,
            LoadError::Format {
                source: FormatError::FutureVersion { found: 4 },
                ..
            }
        ),
        "{error}"
    );
    assert!(
        !error.is_corruption(),
        "a newer file is not damaged and must not be moved aside"
    );
    assert!(error.to_string().contains("newer flakesense"), "{error}");
}

#[test]
fn a_foreign_file_is_not_an_index() {
    let error = load_bytes(b"# a markdown file\n\nnot an index").expect_err("not an index");
    assert!(
        matches!(
            error,
            LoadError::Format {
                source: FormatError::Foreign,
                ..
            }
        ),
        "{error}"
    );
    assert!(!error.is_corruption());
}

/// A project index written by format 2 (`train --repo` and a mark in the editor), kept as it was
/// written. Its labels are migrated by who gave them: a repository's "not flaky" (no source named
/// the test) becomes unlabelled, a person's "not flaky" stable; flaky stays flaky.
fn version_2_project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/index/v2-project.idx")
}

#[test]
fn a_version_2_project_index_loads_with_its_labels_migrated() {
    let index = Index::load(&version_2_project()).expect("a version 2 index loads");
    let labels: Vec<(&str, Label, Origin, Vec<Category>)> = index
        .entries()
        .map(|entry| {
            (
                entry.id(),
                entry.label(),
                entry.origin(),
                entry.categories(),
            )
        })
        .collect();
    assert_eq!(
        labels,
        [
            (
                "com.shop.CartTest#waitsForStock",
                Label::Flaky,
                Origin::History,
                vec![Category::AsyncWait]
            ),
            (
                "com.shop.CartTest#addsItems",
                Label::Unlabelled,
                Origin::History,
                vec![]
            ),
            (
                "com.shop.PriceTest#roundsHalfUp",
                Label::Stable,
                Origin::Manual,
                vec![]
            ),
            (
                "com.shop.ClockTest#expiresAtMidnight",
                Label::Flaky,
                Origin::Manual,
                vec![Category::Time]
            ),
        ]
    );
    // Saved again, it is a file of the current format with the same entries and searches.
    let directory = tempfile::tempdir().expect("a temporary directory");
    let path = directory.path().join("index");
    index
        .save(flakesense::files::write::Place::Named, &path)
        .expect("writable");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        bytes[8..12],
        flakesense::index::file::FORMAT_VERSION.to_le_bytes()
    );
    let saved = Index::load(&path).expect("the saved index loads");
    assert_eq!(saved.len(), index.len());
    let bag = saved.bag(
        Language::Java,
        "@Test void waitsForStock() { Thread.sleep(100); }",
    );
    let (query, saved_query) = (index.embed(&bag), saved.embed(&bag));
    assert_eq!(
        index.nearest(&query, 4, |_| true),
        saved.nearest(&saved_query, 4, |_| true)
    );
}

/// A valid file of format 3: version 1's index written again.
fn format_3() -> Vec<u8> {
    let bytes = Index::load(&version_1())
        .expect("a version 1 index loads")
        .to_bytes();
    assert_eq!(bytes[8..12], 3u32.to_le_bytes());
    bytes
}

/// The header's length and checksum set to match the payload, as a crafted file would.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let payload_len = (bytes.len() - 28) as u64;
    let checksum = crc32fast::hash(&bytes[28..]);
    bytes[16..24].copy_from_slice(&payload_len.to_le_bytes());
    bytes[24..28].copy_from_slice(&checksum.to_le_bytes());
    bytes
}

/// Where a section of a format-3 file lies, from its directory: (directory entry, range).
fn section(bytes: &[u8], kind: u32) -> (usize, std::ops::Range<usize>) {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let long = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let count = word(28) as usize;
    (0..count)
        .map(|number| 28 + 8 + number * 24)
        .find(|&at| word(at) == kind)
        .map(|at| (at, long(at + 8)..long(at + 8) + long(at + 16)))
        .expect("the section is in the directory")
}

/// The reason a load gives, once it is sure to be a corruption.
fn corruption(bytes: &[u8]) -> String {
    let error = load_bytes(bytes).expect_err("a crafted file is refused");
    assert!(error.is_corruption(), "{error}");
    error.to_string()
}

#[test]
fn format_3_numbers_that_contradict_each_other_are_corrupted() {
    const SQUARED_NORMS: u32 = 14;
    const INVERSE_NORMS: u32 = 15;
    const VECTORS: u32 = 16;
    let valid = format_3();
    assert!(load_bytes(&valid).is_ok());

    // A norm of 1e308: finite, but not the norm of its vector.
    let mut bytes = valid.clone();
    let (_, inverse) = section(&bytes, INVERSE_NORMS);
    bytes[inverse.start..inverse.start + 8].copy_from_slice(&1e308f64.to_le_bytes());
    assert!(corruption(&resealed(bytes)).contains("norm"));

    // A squared norm smaller than its vector's, with the inverse norm to match: the
    // similarities it gave reached -4.999.
    let mut bytes = valid.clone();
    let (_, squared) = section(&bytes, SQUARED_NORMS);
    let (_, inverse) = section(&bytes, INVERSE_NORMS);
    bytes[squared.start..squared.start + 4].copy_from_slice(&1u32.to_le_bytes());
    bytes[inverse.start..inverse.start + 8].copy_from_slice(&1f64.to_le_bytes());
    assert!(corruption(&resealed(bytes)).contains("norm"));

    // The vectors section moved onto the norms, its length unchanged.
    let mut bytes = valid.clone();
    let (vectors_at, _) = section(&bytes, VECTORS);
    let (_, squared) = section(&bytes, SQUARED_NORMS);
    bytes[vectors_at + 8..vectors_at + 16].copy_from_slice(&(squared.start as u64).to_le_bytes());
    let reason = corruption(&resealed(bytes));
    assert!(reason.contains("overlaps"), "{reason}");

    // A format-3 payload under header version 0.
    let mut bytes = valid;
    bytes[8..12].copy_from_slice(&0u32.to_le_bytes());
    let reason = corruption(&resealed(bytes));
    assert!(reason.contains("version 0"), "{reason}");
}
