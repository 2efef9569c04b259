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
//! A reader checks the directory, every section's length against the summary's counts, every
//! offset an entry or a token holds, and every number it uses (norms, the prior's numbers)
//! before it answers anything, so that no byte of a damaged or crafted file is trusted; that
//! is a pass over the small tables, never over the vectors or the text.

use std::ops::Range;

use super::FormatError;

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

/// Appends strings to the strings section, storing each distinct project, source or path once.
#[derive(Default)]
pub struct Strings {
    pub bytes: Vec<u8>,
    shared: std::collections::HashMap<String, (u32, u32)>,
}

impl Strings {
    pub fn add(&mut self, text: &str) -> (u32, u32) {
        let offset = self.bytes.len() as u32;
        self.bytes.extend_from_slice(text.as_bytes());
        (offset, text.len() as u32)
    }

    /// A string that many entries repeat.
    pub fn add_shared(&mut self, text: &str) -> (u32, u32) {
        if let Some(&reference) = self.shared.get(text) {
            return reference;
        }
        let reference = self.add(text);
        self.shared.insert(text.to_string(), reference);
        reference
    }

    pub fn add_optional(&mut self, text: Option<&str>, shared: bool) -> (u32, u32) {
        match (text, shared) {
            (None, _) => (0, ABSENT),
            (Some(text), true) => self.add_shared(text),
            (Some(text), false) => self.add(text),
        }
    }
}

/// A table of strings as the vocabulary and the signal ids are stored: offsets and text.
pub fn string_table<'a>(strings: impl IntoIterator<Item = &'a str>) -> (Vec<u8>, Vec<u8>) {
    let mut offsets = 0u32.to_le_bytes().to_vec();
    let mut text = Vec::new();
    for string in strings {
        text.extend_from_slice(string.as_bytes());
        offsets.extend_from_slice(&(text.len() as u32).to_le_bytes());
    }
    (offsets, text)
}

pub fn summary_bytes(summary: &Summary) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(SUMMARY_LEN);
    bytes.extend_from_slice(&(summary.entries as u64).to_le_bytes());
    bytes.extend_from_slice(&(summary.vocabulary as u64).to_le_bytes());
    bytes.extend_from_slice(&(summary.signal_ids as u64).to_le_bytes());
    bytes.extend_from_slice(&(summary.dims as u32).to_le_bytes());
    bytes.extend_from_slice(&summary.languages.to_le_bytes());
    bytes
}

/// Lays sections out behind a directory: the payload that the header frames. `header_len` is
/// where the payload starts in the file, which section offsets count from.
pub fn payload(header_len: usize, sections: &[(u32, &[u8])]) -> Vec<u8> {
    let directory_len = 8 + DIRECTORY_ENTRY_LEN * sections.len();
    let align = |offset: usize| offset.div_ceil(ALIGNMENT) * ALIGNMENT;
    let mut offsets = Vec::with_capacity(sections.len());
    let mut end = align(header_len + directory_len);
    for (_, bytes) in sections {
        offsets.push(end);
        end = align(end + bytes.len());
    }
    let mut payload = Vec::with_capacity(end - header_len);
    payload.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    payload.extend_from_slice(&0u32.to_le_bytes());
    for ((kind, bytes), offset) in sections.iter().zip(&offsets) {
        payload.extend_from_slice(&kind.to_le_bytes());
        payload.extend_from_slice(&0u32.to_le_bytes());
        payload.extend_from_slice(&(*offset as u64).to_le_bytes());
        payload.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    }
    for ((_, bytes), offset) in sections.iter().zip(&offsets) {
        payload.resize(offset - header_len, 0);
        payload.extend_from_slice(bytes);
    }
    payload
}

/// Where each section lies in a file whose header was checked, and the summary's counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub summary: Summary,
    sections: [Range<usize>; kind::REQUIRED.len()],
}

fn corrupt<T>(what: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError::Undecodable(what.into()))
}

impl Layout {
    /// Reads the directory of `file` (the whole file; its payload starts at `header_len`) and
    /// checks every table against the counts. The vectors and the text are not read.
    pub fn read(file: &[u8], header_len: usize) -> Result<Layout, FormatError> {
        let payload = &file[header_len..];
        if payload.len() < 8 {
            return corrupt("no section directory");
        }
        let count = le_u32(payload, 0) as usize;
        if count > (payload.len() - 8) / DIRECTORY_ENTRY_LEN {
            return corrupt(format!("{count} sections cannot fit the file"));
        }
        let mut sections: [Option<Range<usize>>; kind::REQUIRED.len()] = Default::default();
        for number in 0..count {
            let at = 8 + number * DIRECTORY_ENTRY_LEN;
            let section_kind = le_u32(payload, at);
            let offset = le_u64(payload, at + 8);
            let len = le_u64(payload, at + 16);
            let end = offset.checked_add(len);
            if offset < (header_len + 8) as u64 || end.is_none_or(|end| end > file.len() as u64) {
                return corrupt(format!("section {section_kind} lies outside the file"));
            }
            if !(offset as usize).is_multiple_of(ALIGNMENT) {
                return corrupt(format!("section {section_kind} is not aligned"));
            }
            let Some(slot) = kind::REQUIRED
                .iter()
                .position(|&known| known == section_kind)
            else {
                continue;
            };
            if sections[slot].is_some() {
                return corrupt(format!("section {section_kind} appears twice"));
            }
            sections[slot] = Some(offset as usize..(offset + len) as usize);
        }
        let mut ranges: [Range<usize>; kind::REQUIRED.len()] = Default::default();
        for (slot, section) in sections.into_iter().enumerate() {
            match section {
                Some(range) => ranges[slot] = range,
                None => return corrupt(format!("section {} is missing", kind::REQUIRED[slot])),
            }
        }
        let summary_bytes = &file[ranges[0].clone()];
        if summary_bytes.len() != SUMMARY_LEN {
            return corrupt("the summary has the wrong length");
        }
        let count = |at: usize| usize::try_from(le_u64(summary_bytes, at)).unwrap_or(usize::MAX);
        let summary = Summary {
            entries: count(0),
            vocabulary: count(8),
            signal_ids: count(16),
            dims: le_u32(summary_bytes, 24) as usize,
            languages: le_u32(summary_bytes, 28),
        };
        let layout = Layout {
            summary,
            sections: ranges,
        };
        layout.check_lengths()?;
        Ok(layout)
    }

    pub fn section<'a>(&self, file: &'a [u8], section_kind: u32) -> &'a [u8] {
        let slot = kind::REQUIRED
            .iter()
            .position(|&known| known == section_kind)
            .unwrap_or(0);
        &file[self.sections[slot].clone()]
    }

    fn len_of(&self, section_kind: u32) -> usize {
        let slot = kind::REQUIRED
            .iter()
            .position(|&known| known == section_kind)
            .unwrap_or(0);
        self.sections[slot].len()
    }

    /// Every table's length follows from the counts; a mismatch is a damaged file.
    fn check_lengths(&self) -> Result<(), FormatError> {
        let Summary {
            entries,
            vocabulary,
            signal_ids,
            dims,
            ..
        } = self.summary;
        let times = |count: usize, size: usize| count.checked_mul(size);
        let expected = [
            (
                kind::VOCABULARY_OFFSETS,
                times(vocabulary, 4).and_then(|n| n.checked_add(4)),
            ),
            (kind::VOCABULARY_ORDER, times(vocabulary, 4)),
            (kind::DOCUMENT_FREQUENCY, times(vocabulary, 4)),
            (kind::ENTRIES, times(entries, ENTRY_LEN)),
            (
                kind::SIGNAL_OFFSETS,
                times(signal_ids, 4).and_then(|n| n.checked_add(4)),
            ),
            (
                kind::BAG_OFFSETS,
                times(entries, 4).and_then(|n| n.checked_add(4)),
            ),
            (kind::SQUARED_NORMS, times(entries, 4)),
            (kind::INVERSE_NORMS, times(entries, 8)),
            (kind::VECTORS, times(entries, dims)),
        ];
        for (section_kind, length) in expected {
            if length != Some(self.len_of(section_kind)) {
                return corrupt(format!(
                    "section {section_kind} does not match {entries} entries, {vocabulary} tokens and {dims} dimensions"
                ));
            }
        }
        if !self.len_of(kind::ENTRY_SIGNALS).is_multiple_of(2) {
            return corrupt("the entries' signals are not whole numbers");
        }
        Ok(())
    }

    /// Checks what the entries, the tables of strings and the norms hold: offsets within their
    /// sections and in order, text that is UTF-8 with references on character boundaries, codes
    /// that name a language, a label and an origin, finite norms.
    pub fn check_contents(&self, file: &[u8]) -> Result<(), FormatError> {
        let strings = std::str::from_utf8(self.section(file, kind::STRINGS))
            .map_err(|_| FormatError::Undecodable("an entry's text is not UTF-8".into()))?;
        check_string_table(
            self.section(file, kind::VOCABULARY_OFFSETS),
            self.section(file, kind::VOCABULARY_TEXT),
            "vocabulary",
        )?;
        check_string_table(
            self.section(file, kind::SIGNAL_OFFSETS),
            self.section(file, kind::SIGNAL_TEXT),
            "signal ids",
        )?;
        let vocabulary = self.summary.vocabulary;
        let order = self.section(file, kind::VOCABULARY_ORDER);
        if (0..vocabulary).any(|position| le_u32(order, position * 4) as usize >= vocabulary) {
            return corrupt("the vocabulary's order names a token it does not have");
        }
        let entry_signals = self.section(file, kind::ENTRY_SIGNALS);
        let signal_count = entry_signals.len() / 2;
        let entries = self.section(file, kind::ENTRIES);
        for position in 0..self.summary.entries {
            let record = EntryRecord::read(entries, position);
            for (reference, optional) in [
                (record.id, false),
                (record.project, false),
                (record.source, false),
                (record.path, true),
                (record.code, true),
            ] {
                match EntryRecord::range(reference) {
                    None if optional => {}
                    None => return corrupt(format!("entry {position} lacks a name")),
                    Some(range) => {
                        if range.end > strings.len()
                            || !strings.is_char_boundary(range.start)
                            || !strings.is_char_boundary(range.end)
                        {
                            return corrupt(format!("entry {position} points outside its text"));
                        }
                    }
                }
            }
            let (start, len) = record.signals;
            if start as usize + len as usize > signal_count
                || (0..len as usize).any(|offset| {
                    le_u16(entry_signals, (start as usize + offset) * 2) as usize
                        >= self.summary.signal_ids
                })
            {
                return corrupt(format!("entry {position} names unknown signals"));
            }
            if usize::from(record.language) >= crate::language::Language::ALL.len()
                || super::Label::from_code(record.label).is_none()
                || super::Origin::from_code(record.origin).is_none()
                || record.categories >> crate::category::Category::ALL.len() != 0
            {
                return corrupt(format!("entry {position} has an unknown code"));
            }
        }
        let bag_offsets = self.section(file, kind::BAG_OFFSETS);
        let bag_bytes = self.len_of(kind::BAG_BYTES);
        let mut previous = 0;
        for position in 0..=self.summary.entries {
            let offset = le_u32(bag_offsets, position * 4) as usize;
            if offset < previous || offset > bag_bytes || (position == 0 && offset != 0) {
                return corrupt("the token bags' offsets are out of order");
            }
            previous = offset;
        }
        let inverse_norms = self.section(file, kind::INVERSE_NORMS);
        if (0..self.summary.entries).any(|position| {
            let value = le_f64(inverse_norms, position * 8);
            !value.is_finite() || value < 0.0
        }) {
            return Err(FormatError::InvalidNumber(
                "a vector's norm is not a finite number".to_string(),
            ));
        }
        Ok(())
    }
}

/// Checks a table of strings: its offsets start at 0, never decrease, end at the text's length
/// and fall on character boundaries of text that is UTF-8.
fn check_string_table(offsets: &[u8], text: &[u8], what: &str) -> Result<(), FormatError> {
    let Ok(text) = std::str::from_utf8(text) else {
        return corrupt(format!("the {what} are not UTF-8"));
    };
    let count = offsets.len() / 4;
    let mut previous = 0;
    for position in 0..count {
        let offset = le_u32(offsets, position * 4) as usize;
        if offset < previous
            || offset > text.len()
            || !text.is_char_boundary(offset)
            || (position == 0 && offset != 0)
        {
            return corrupt(format!("the {what}' offsets are out of order"));
        }
        previous = offset;
    }
    if previous != text.len() {
        return corrupt(format!("the {what}' offsets do not cover their text"));
    }
    Ok(())
}

/// A string of a table checked by [`check_string_table`].
pub fn table_string<'a>(offsets: &[u8], text: &'a [u8], position: usize) -> &'a str {
    // Checked at load: the range is in bounds, on character boundaries of UTF-8 text.
    std::str::from_utf8(table_bytes(offsets, text, position)).unwrap_or_default()
}

/// The bytes of a string of a table, for comparing without checking them again: UTF-8 strings
/// order as their bytes do.
pub fn table_bytes<'a>(offsets: &[u8], text: &'a [u8], position: usize) -> &'a [u8] {
    let start = le_u32(offsets, position * 4) as usize;
    let end = le_u32(offsets, position * 4 + 4) as usize;
    &text[start..end]
}

/// Appends `value` as LEB128.
pub fn write_varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a LEB128 number at `*at`, advancing it; `None` at the end or past 32 bits.
pub fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut value: u64 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return u32::try_from(value).ok();
        }
    }
    None
}

/// A bag as it is stored: the token ids' differences and the counts, as LEB128.
pub fn encode_bag(bag: &[(u32, u32)], out: &mut Vec<u8>) {
    let mut previous = 0;
    for &(id, count) in bag {
        write_varint(out, id - previous);
        write_varint(out, count);
        previous = id;
    }
}

/// Decodes a stored bag; a malformed or out-of-vocabulary remainder is dropped, never trusted.
pub fn decode_bag(bytes: &[u8], vocabulary: usize) -> Vec<(u32, u32)> {
    let mut bag = Vec::with_capacity(bytes.len() / 2);
    let mut at = 0;
    let mut id: u32 = 0;
    while at < bytes.len() {
        let (Some(delta), Some(count)) = (read_varint(bytes, &mut at), read_varint(bytes, &mut at))
        else {
            break;
        };
        if !bag.is_empty() && delta == 0 {
            break;
        }
        match id.checked_add(delta) {
            Some(next) if (next as usize) < vocabulary => id = next,
            _ => break,
        }
        bag.push((id, count));
    }
    bag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_bags_round_trip() {
        let bag = vec![(0, 1), (3, 200), (70_000, 5), (u32::MAX - 1, u32::MAX)];
        let mut bytes = Vec::new();
        encode_bag(&bag, &mut bytes);
        assert_eq!(decode_bag(&bytes, u32::MAX as usize), bag);
        // A token outside the vocabulary ends the bag; so does a truncated number.
        assert_eq!(decode_bag(&bytes, 70_000), &bag[..2]);
        assert_eq!(
            decode_bag(&bytes[..bytes.len() - 1], u32::MAX as usize),
            &bag[..3]
        );
    }

    #[test]
    fn sections_are_aligned_and_found_again() {
        let header = vec![0u8; 28];
        let sections: Vec<(u32, Vec<u8>)> = kind::REQUIRED
            .iter()
            .map(|&section_kind| {
                let bytes = match section_kind {
                    kind::SUMMARY => summary_bytes(&Summary {
                        entries: 0,
                        vocabulary: 0,
                        signal_ids: 0,
                        dims: 3,
                        languages: 0,
                    }),
                    kind::VOCABULARY_OFFSETS | kind::SIGNAL_OFFSETS | kind::BAG_OFFSETS => {
                        vec![0; 4]
                    }
                    _ => Vec::new(),
                };
                (section_kind, bytes)
            })
            .collect();
        let borrowed: Vec<(u32, &[u8])> = sections
            .iter()
            .map(|(section_kind, bytes)| (*section_kind, bytes.as_slice()))
            .collect();
        let mut file = header.clone();
        file.extend(payload(header.len(), &borrowed));
        let layout = Layout::read(&file, header.len()).unwrap();
        assert_eq!(layout.summary.dims, 3);
        assert_eq!(layout.section(&file, kind::BAG_OFFSETS), [0; 4]);
        layout.check_contents(&file).unwrap();
        // A directory that promises more sections than fit is refused.
        file[28..32].copy_from_slice(&1000u32.to_le_bytes());
        assert!(Layout::read(&file, header.len()).is_err());
    }
}
