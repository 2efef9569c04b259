//! Reading source files from disk for the command-line front ends: language detection, size
//! limits, binary and non-UTF-8 content. The language server gets its text from the editor.

use std::fs;
use std::io::Read;
use std::path::Path;

use crate::analysis::MAX_FILE_BYTES;
use crate::language::Language;

/// A source file read for analysis.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub language: Language,
    pub text: String,
    /// Invalid UTF-8 was replaced; byte offsets refer to the repaired text.
    pub lossy: bool,
}

/// Why a file was not analysed. Each is reported, none is fatal.
#[derive(Debug, thiserror::Error)]
pub enum Skipped {
    #[error("not a Java, Python or Rust file")]
    NotSource,
    #[error("larger than {} MB ({size} bytes)", MAX_FILE_BYTES / (1024 * 1024))]
    TooLarge { size: u64 },
    #[error("binary content")]
    Binary,
    #[error("cannot read: {0}")]
    Unreadable(#[from] std::io::Error),
}

/// Recognises a file's language by its extension, or by a `#!` line for extension-less scripts.
pub fn detect_language(path: &Path, first_bytes: &[u8]) -> Option<Language> {
    if let Some(language) = Language::from_path(path) {
        return Some(language);
    }
    if path.extension().is_some() {
        return None;
    }
    let first_line = first_bytes.split(|&byte| byte == b'\n').next()?;
    Language::from_shebang(std::str::from_utf8(first_line).ok()?)
}

/// Reads a source file, refusing huge and binary files.
pub fn read_source(path: &Path) -> Result<SourceFile, Skipped> {
    let metadata = fs::metadata(path)?;
    if metadata.len() > MAX_FILE_BYTES as u64 {
        return Err(Skipped::TooLarge {
            size: metadata.len(),
        });
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    // Read at most one byte past the limit: the file may have grown since `metadata`.
    fs::File::open(path)?
        .take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Skipped::TooLarge {
            size: bytes.len() as u64,
        });
    }
    let language = detect_language(path, &bytes).ok_or(Skipped::NotSource)?;
    // Text files do not hold NUL bytes; object files and images do, early on.
    if bytes.iter().take(8192).any(|&byte| byte == 0) {
        return Err(Skipped::Binary);
    }
    let (text, lossy) = crate::extract::decode_source(&bytes);
    Ok(SourceFile {
        language,
        text,
        lossy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_and_reports_repaired_bytes() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("test_x.py");
        fs::write(&path, b"def test_a():\n    s = '\xff'\n").unwrap();
        let file = read_source(&path).unwrap();
        assert_eq!(file.language, Language::Python);
        assert!(file.lossy);
        assert!(file.text.contains('\u{fffd}'));
    }

    #[test]
    fn refuses_binary_huge_and_foreign_files() {
        let directory = tempfile::tempdir().unwrap();
        let binary = directory.path().join("Blob.java");
        fs::write(&binary, b"\x00\x01class X {}").unwrap();
        assert!(matches!(read_source(&binary), Err(Skipped::Binary)));
        let huge = directory.path().join("huge.rs");
        fs::write(&huge, vec![b' '; MAX_FILE_BYTES + 1]).unwrap();
        assert!(matches!(read_source(&huge), Err(Skipped::TooLarge { .. })));
        let text = directory.path().join("notes.txt");
        fs::write(&text, "hello").unwrap();
        assert!(matches!(read_source(&text), Err(Skipped::NotSource)));
        assert!(matches!(
            read_source(&directory.path().join("missing.py")),
            Err(Skipped::Unreadable(_))
        ));
    }

    #[test]
    fn scripts_without_extension_are_recognised_by_their_first_line() {
        assert_eq!(
            detect_language(Path::new("bin/run_tests"), b"#!/usr/bin/env python3\n"),
            Some(Language::Python)
        );
        assert_eq!(detect_language(Path::new("bin/run"), b"#!/bin/sh\n"), None);
        assert_eq!(
            detect_language(Path::new("x.sh"), b"#!/usr/bin/env python3\n"),
            None
        );
    }
}
