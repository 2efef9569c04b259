//! The index file on disk: a file written by format version 1 keeps loading and answering the
//! same, and damaged, foreign or future files fail with a clear, typed error.

use std::path::{Path, PathBuf};

use flakesense::index::{FormatError, Index, LoadError};
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
