//! The index file: a fixed header guarding the payload, written atomically.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `FLKSNSIX` |
//! | 4 | format version (u32) |
//! | 4 | flags (u32, reserved, 0) |
//! | 8 | payload length (u64) |
//! | 4 | CRC-32 of the payload (u32) |
//! | n | payload |
//!
//! Format 3's payload is a directory of sections read in place (see [`super::layout`]); formats 1
//! and 2 held one bincode 2 value (standard configuration, serde encoding), as format 3's small
//! parameters section still does.
//!
//! bincode decodes a length prefix by allocating it, so a corrupt prefix could ask for gigabytes.
//! The checksum rejects damaged files before decoding, and the decoder runs with a limit a few
//! times the payload's size, so even a file crafted to pass the checksum cannot allocate much.

use crate::files::write::Place;
use std::fs::File;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

pub const MAGIC: [u8; 8] = *b"FLKSNSIX";
/// The version this build writes and the newest it reads. Version 2 added the project-relative
/// weights of the signal prior; version 3 laid the index out to be read in place, labelled
/// entries flaky, stable or unlabelled and kept the catalogue's signals of flaky ones. Files of
/// versions 1 and 2 still load (see `index/v1.rs` and `index/v2.rs`).
pub const FORMAT_VERSION: u32 = 3;
/// Bytes before the payload.
pub const HEADER_LEN: usize = 28;
/// No index this tool writes comes near this; a larger payload length is a corrupt header.
const MAX_PAYLOAD_LEN: u64 = 1 << 30;

/// Why an index could not be read. The language server branches on these: a foreign or future
/// file is left alone, a damaged one is moved aside and rebuilt.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("not a flakesense index (unknown magic bytes)")]
    Foreign,
    #[error("truncated: {found} bytes where the header promises {expected}")]
    Truncated { expected: u64, found: u64 },
    #[error(
        "written by a newer flakesense (index format {found}; this build reads up to {FORMAT_VERSION})"
    )]
    FutureVersion { found: u32 },
    #[error("corrupted: the checksum does not match the data")]
    ChecksumMismatch,
    #[error("corrupted: {0}")]
    Undecodable(String),
    #[error("the index is too large to write ({0} bytes)")]
    TooLarge(u64),
    /// A number that no writer produces: NaN, an infinity, a probability outside 0 and 1.
    #[error("corrupted: invalid number {0}")]
    InvalidNumber(String),
    /// Sizes that would take far more memory than the file's length accounts for.
    #[error("corrupted: implausible sizes: {0}")]
    Implausible(String),
}

/// An index file that could not be loaded, and where it is.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read index {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot load index {path}: {source}")]
    Format { path: PathBuf, source: FormatError },
}

impl LoadError {
    /// True when the file exists but its content is damaged (truncated, bit flips, undecodable);
    /// false for a file that is not ours, from a newer release, or unreadable.
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            LoadError::Format {
                source: FormatError::Truncated { .. }
                    | FormatError::ChecksumMismatch
                    | FormatError::Undecodable(_)
                    | FormatError::InvalidNumber(_)
                    | FormatError::Implausible(_),
                ..
            }
        )
    }
}

/// Encodes `payload` with bincode behind a header of `version`: a file of format 1 or 2, whose
/// payload was one bincode value, for tests that keep reading them.
#[cfg(test)]
pub fn encode_legacy<T: serde::Serialize>(payload: &T, version: u32) -> Vec<u8> {
    let body = bincode::serde::encode_to_vec(payload, bincode::config::standard())
        .expect("test data encodes");
    let mut bytes = frame(&body);
    bytes[8..12].copy_from_slice(&version.to_le_bytes());
    bytes
}

/// A payload's bytes behind the header that names and checks them, with this build's version.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + body.len());
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
    bytes.extend_from_slice(body);
    bytes
}

/// Checks the header and decodes the payload as one bincode value.
#[cfg(test)]
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, FormatError> {
    let (_, payload) = open(bytes)?;
    decode_payload(payload)
}

/// Checks the header and the checksum: the file's format version and its payload's bytes.
pub fn open(bytes: &[u8]) -> Result<(u32, &[u8]), FormatError> {
    let (version, body, checksum) = header(bytes)?;
    if crc32fast::hash(body) != checksum {
        return Err(FormatError::ChecksumMismatch);
    }
    Ok((version, body))
}

/// Checks the header but not the checksum, for bytes that are the binary's own (see
/// [`super::Index::from_static`]).
pub fn open_unverified(bytes: &[u8]) -> Result<(u32, &[u8]), FormatError> {
    let (version, body, _) = header(bytes)?;
    Ok((version, body))
}

/// The version, the payload and the checksum the header promises, once the lengths agree.
fn header(bytes: &[u8]) -> Result<(u32, &[u8], u32), FormatError> {
    if !MAGIC.starts_with(&bytes[..bytes.len().min(MAGIC.len())]) {
        return Err(FormatError::Foreign);
    }
    if bytes.len() < HEADER_LEN {
        return Err(FormatError::Truncated {
            expected: HEADER_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = word(8);
    if version > FORMAT_VERSION {
        return Err(FormatError::FutureVersion { found: version });
    }
    let payload_len = u64::from(word(16)) | (u64::from(word(20)) << 32);
    let checksum = word(24);
    let available = (bytes.len() - HEADER_LEN) as u64;
    if payload_len > MAX_PAYLOAD_LEN || available < payload_len {
        return Err(FormatError::Truncated {
            expected: HEADER_LEN as u64 + payload_len,
            found: bytes.len() as u64,
        });
    }
    if available > payload_len {
        return Err(FormatError::Undecodable(format!(
            "{} bytes after the end of the data",
            available - payload_len
        )));
    }
    Ok((version, &bytes[HEADER_LEN..], checksum))
}

/// Decodes a payload checked by [`open`].
pub fn decode_payload<T: DeserializeOwned>(body: &[u8]) -> Result<T, FormatError> {
    // The limit is a const generic; pick the smallest tier above the payload's own size.
    match body.len() {
        0..=0x40_0000 => decode_limited::<T, 0x100_0000>(body),
        0x40_0001..=0x400_0000 => decode_limited::<T, 0x1000_0000>(body),
        _ => decode_limited::<T, { 4 << 30 }>(body),
    }
}

fn decode_limited<T: DeserializeOwned, const LIMIT: usize>(body: &[u8]) -> Result<T, FormatError> {
    let config = bincode::config::standard().with_limit::<LIMIT>();
    let (payload, read) = bincode::serde::decode_from_slice(body, config)
        .map_err(|error| FormatError::Undecodable(error.to_string()))?;
    if read != body.len() {
        return Err(FormatError::Undecodable(format!(
            "{} bytes left over after the data",
            body.len() - read
        )));
    }
    Ok(payload)
}

/// Reads an index file's bytes: only from a regular file, at most as many as a header and the
/// largest payload.
pub fn read(path: &Path) -> Result<Vec<u8>, LoadError> {
    crate::files::read_regular(path, HEADER_LEN as u64 + MAX_PAYLOAD_LEN).map_err(|source| {
        LoadError::Io {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Files smaller than this are read rather than mapped: a mapping costs more than the copy.
const SMALLEST_MAPPED: u64 = 256 << 10;

/// An index file's bytes, as [`map`] gives them.
pub enum Mapped {
    Read(Vec<u8>),
    Map(memmap2::Mmap),
}

/// An index file's bytes: only from a regular file, at most as many as a header and the largest
/// payload; a large one mapped into memory.
pub fn map(path: &Path) -> Result<Mapped, LoadError> {
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let metadata = crate::files::regular_metadata(path).map_err(io)?;
    if metadata.len() < SMALLEST_MAPPED {
        return read(path).map(Mapped::Read);
    }
    if metadata.len() > HEADER_LEN as u64 + MAX_PAYLOAD_LEN {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than the limit of {} MB", MAX_PAYLOAD_LEN >> 20),
        )));
    }
    let file = File::open(path).map_err(io)?;
    // SAFETY: a mapping is undefined behaviour if the file changes while it is mapped. flakesense
    // never changes an index file in place: it writes a new file and renames it over the old one
    // (see `write_bytes`), which leaves the mapped file as it was. The bytes are checked
    // (checksum, then every table) before anything is read from them.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    Ok(Mapped::Map(map))
}

/// Writes an index file atomically ([`crate::files::write::write_atomically`]): a crash leaves
/// the old file or the new one, and a process that mapped the old file keeps reading it unchanged.
pub fn write_bytes(place: Place, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    let payload_len = bytes.len().saturating_sub(HEADER_LEN) as u64;
    if payload_len > MAX_PAYLOAD_LEN {
        return Err(FormatError::TooLarge(payload_len).into());
    }
    crate::files::write::write_atomically(place, path, bytes)
        .with_context(|| format!("cannot write index {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Sample {
        names: Vec<String>,
        values: Vec<u32>,
    }

    fn sample() -> Sample {
        Sample {
            names: vec!["a".into(), "bc".into()],
            values: (0..100).collect(),
        }
    }

    fn encode(sample: &Sample) -> Result<Vec<u8>, FormatError> {
        Ok(encode_legacy(sample, FORMAT_VERSION))
    }

    #[test]
    fn round_trips() {
        let bytes = encode(&sample()).unwrap();
        assert_eq!(&bytes[..8], b"FLKSNSIX");
        assert_eq!(decode::<Sample>(&bytes).unwrap(), sample());
    }

    #[test]
    fn every_truncation_is_a_clear_error() {
        let bytes = encode(&sample()).unwrap();
        for length in 0..bytes.len() {
            let error = decode::<Sample>(&bytes[..length]).unwrap_err();
            assert!(
                matches!(error, FormatError::Truncated { .. }),
                "length {length}: {error}"
            );
        }
    }

    #[test]
    fn every_bit_flip_in_the_payload_is_caught() {
        let bytes = encode(&sample()).unwrap();
        for position in HEADER_LEN..bytes.len() {
            for bit in 0..8 {
                let mut damaged = bytes.clone();
                damaged[position] ^= 1 << bit;
                assert!(matches!(
                    decode::<Sample>(&damaged),
                    Err(FormatError::ChecksumMismatch)
                ));
            }
        }
    }

    #[test]
    fn a_future_version_is_named() {
        let mut bytes = encode(&sample()).unwrap();
        bytes[8..12].copy_from_slice(&7u32.to_le_bytes());
        let error = decode::<Sample>(&bytes).unwrap_err();
        assert!(matches!(error, FormatError::FutureVersion { found: 7 }));
        assert!(error.to_string().contains("newer flakesense"), "{error}");
    }

    #[test]
    fn foreign_files_are_recognised() {
        assert!(matches!(
            decode::<Sample>(b"PK\x03\x04 a zip file"),
            Err(FormatError::Foreign)
        ));
        assert!(matches!(
            decode::<Sample>(b"FLKSNS"),
            Err(FormatError::Truncated { .. })
        ));
    }

    #[test]
    fn a_huge_length_in_a_valid_looking_file_does_not_allocate() {
        // A payload that passes the checksum but claims a string of 2^40 bytes.
        let mut body = vec![2u8]; // two names follow
        body.push(253); // varint: u64 follows
        body.extend_from_slice(&(1u64 << 40).to_le_bytes());
        let bytes = frame(&body);
        assert!(matches!(
            decode::<Sample>(&bytes),
            Err(FormatError::Undecodable(_))
        ));
    }

    #[test]
    fn writes_atomically_and_reads_back() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("nested").join("index");
        write_bytes(Place::Named, &path, &encode(&sample()).unwrap()).unwrap();
        assert_eq!(decode::<Sample>(&read(&path).unwrap()).unwrap(), sample());
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        let error = read(&directory.path().join("missing")).unwrap_err();
        assert!(matches!(error, LoadError::Io { .. }));
        assert!(!error.is_corruption());
    }
}
