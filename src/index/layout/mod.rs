//! Format 3: an index laid out to be used where it lies, in a memory-mapped file or in the bytes
//! embedded in the binary. Nothing is decoded per entry when a file is opened: the vectors are
//! stored as the scan reads them, strings and token bags are found through tables of offsets,
//! and only the small parameters (tokeniser, projection, signal priors) are decoded.
//!
//! Behind the header of [`super::file`] (magic, version, flags, payload length, CRC-32), the
//! payload starts with a directory of sections, then the sections, each at a file offset that is
//! a multiple of [`ALIGNMENT`]. All integers are little-endian.
//!
//! | bytes | field |
//! |---|---|
//! | 4 | number of sections (u32) |
//! | 4 | reserved, 0 |
//! | 24 each | a section: kind (u32), reserved (u32), file offset (u64), length (u64) |
//!
//! The sections, by kind (see [`kind`]):
//!
//! | kind | content |
//! |---|---|
//! | summary | entries (u64), vocabulary tokens (u64), signal ids (u64), dimensions (u32), languages (u32 bit set) |
//! | params | the [`super::ModelParams`], bincode 2 (standard configuration, serde) |
//! | vocabulary offsets, text | token `t` is `text[offsets[t]..offsets[t + 1]]` (u32 offsets, one more than tokens) |
//! | vocabulary order | token ids (u32) sorted by their text, for binary search |
//! | document frequency | per token, the entries holding it (u32) |
//! | entries | one [`ENTRY_LEN`]-byte record per entry (see [`EntryRecord`]) |
//! | strings | the UTF-8 text the entry records point into |
//! | signal offsets, text | the catalogue ids that entries name, as the vocabulary is stored |
//! | entry signals | per entry, a run of u16 indices into the signal ids |
//! | bag offsets, bytes | entry `e`'s token bag is `bytes[offsets[e]..offsets[e + 1]]` (u32 offsets): LEB128 pairs of (token id minus the previous one, count) |
//! | squared norms | per entry, its vector's squared norm (u32) |
//! | inverse norms | per entry, 1/sqrt of it, 0 for a zero vector (f64) |
//! | vectors | the projected vectors as signed bytes, in blocks of [`super::vectors::BLOCK`] entries, each block column by column (see [`super::vectors`]) |
//!
//! A reader checks the header's version against the payload's format, the directory (no
//! section overlaps it or another), every section's length against the summary's counts, every
//! offset an entry or a token holds, and every number it uses (each vector's norms against its
//! values, the prior's numbers) before it answers anything, so that no byte of a damaged or
//! crafted file is trusted; that is a pass over the small tables and one over the vectors,
//! never over the text.

pub mod reading;
pub mod token_bags;
pub mod writing;

use std::ops::Range;

/// Section offsets are multiples of this, from the start of the file: every table can be read in
/// place as its element type (the header is 28 bytes long, so the directory pads the first one).
pub const ALIGNMENT: usize = 64;

/// Bytes of one entry record.
pub const ENTRY_LEN: usize = 56;

/// What a string reference holds for an absent string (an entry without a path or code).
const ABSENT: u32 = u32::MAX;

/// The kinds of sections. Unknown kinds are skipped, so a later release may add sections
/// without a new version as long as older readers lose nothing they need.
pub mod kind {
    pub const SUMMARY: u32 = 1;
    pub const PARAMS: u32 = 2;
    pub const VOCABULARY_OFFSETS: u32 = 3;
    pub const VOCABULARY_TEXT: u32 = 4;
    pub const VOCABULARY_ORDER: u32 = 5;
    pub const DOCUMENT_FREQUENCY: u32 = 6;
    pub const ENTRIES: u32 = 7;
    pub const STRINGS: u32 = 8;
    pub const SIGNAL_OFFSETS: u32 = 9;
    pub const SIGNAL_TEXT: u32 = 10;
    pub const ENTRY_SIGNALS: u32 = 11;
    pub const BAG_OFFSETS: u32 = 12;
    pub const BAG_BYTES: u32 = 13;
    pub const SQUARED_NORMS: u32 = 14;
    pub const INVERSE_NORMS: u32 = 15;
    pub const VECTORS: u32 = 16;

    /// Every kind a reader needs, in the order a writer writes them.
    pub const REQUIRED: [u32; 16] = [
        SUMMARY,
        PARAMS,
        VOCABULARY_OFFSETS,
        VOCABULARY_TEXT,
        VOCABULARY_ORDER,
        DOCUMENT_FREQUENCY,
        ENTRIES,
        STRINGS,
        SIGNAL_OFFSETS,
        SIGNAL_TEXT,
        ENTRY_SIGNALS,
        BAG_OFFSETS,
        BAG_BYTES,
        SQUARED_NORMS,
        INVERSE_NORMS,
        VECTORS,
    ];
}

const SUMMARY_LEN: usize = 32;
const DIRECTORY_ENTRY_LEN: usize = 24;

#[inline]
pub fn le_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

#[inline]
pub fn le_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

#[inline]
pub fn le_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from(le_u32(bytes, at)) | (u64::from(le_u32(bytes, at + 4)) << 32)
}

#[inline]
pub fn le_f64(bytes: &[u8], at: usize) -> f64 {
    f64::from_bits(le_u64(bytes, at))
}

/// The counts every other section is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub entries: usize,
    pub vocabulary: usize,
    pub signal_ids: usize,
    pub dims: usize,
    /// Bit `language as usize` is set when some entry is of that language.
    pub languages: u32,
}

/// One entry as its record holds it: references into the strings, small codes for the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryRecord {
    pub id: (u32, u32),
    pub project: (u32, u32),
    pub source: (u32, u32),
    pub path: (u32, u32),
    pub code: (u32, u32),
    /// The first index of its run in the entry signals, and the run's length.
    pub signals: (u32, u16),
    /// Bit `category as usize` per category.
    pub categories: u16,
    pub language: u8,
    pub label: u8,
    pub origin: u8,
}

impl EntryRecord {
    pub fn read(bytes: &[u8], position: usize) -> EntryRecord {
        let at = position * ENTRY_LEN;
        let record = &bytes[at..at + ENTRY_LEN];
        let pair = |at: usize| (le_u32(record, at), le_u32(record, at + 4));
        EntryRecord {
            id: pair(0),
            project: pair(8),
            source: pair(16),
            path: pair(24),
            code: pair(32),
            signals: (le_u32(record, 40), le_u16(record, 44)),
            categories: le_u16(record, 46),
            language: record[48],
            label: record[49],
            origin: record[50],
        }
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        for (offset, len) in [self.id, self.project, self.source, self.path, self.code] {
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        out.extend_from_slice(&self.signals.0.to_le_bytes());
        out.extend_from_slice(&self.signals.1.to_le_bytes());
        out.extend_from_slice(&self.categories.to_le_bytes());
        out.extend_from_slice(&[self.language, self.label, self.origin]);
        out.extend_from_slice(&[0; 5]);
    }

    /// A present string's range in the strings section; `None` for an absent one.
    pub fn range((offset, len): (u32, u32)) -> Option<Range<usize>> {
        (len != ABSENT).then(|| offset as usize..offset as usize + len as usize)
    }
}
