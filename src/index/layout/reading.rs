//! Reading format 3 where it lies: the directory of sections, the checks of every table against
//! the summary's counts and of every offset and number the tables hold, and the strings of a
//! checked table.

use std::ops::Range;

use super::{
    ALIGNMENT, DIRECTORY_ENTRY_LEN, ENTRY_LEN, EntryRecord, SUMMARY_LEN, Summary, kind, le_f64,
    le_u16, le_u32, le_u64,
};
use crate::index::{FormatError, Label, Origin};

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
        // No section may lie in the directory or in another: a byte read as two tables (a
        // count and a norm) could agree with each check alone.
        let directory_end = header_len + 8 + count * DIRECTORY_ENTRY_LEN;
        let mut by_start: Vec<(usize, u32)> = (0..ranges.len())
            .map(|slot| (slot, kind::REQUIRED[slot]))
            .collect();
        by_start.sort_by_key(|&(slot, _)| (ranges[slot].start, ranges[slot].end));
        let mut free_from = directory_end;
        for (slot, section_kind) in by_start {
            if ranges[slot].start < free_from {
                return corrupt(format!(
                    "section {section_kind} overlaps the directory or another section"
                ));
            }
            free_from = free_from.max(ranges[slot].end);
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
                || Label::from_code(record.label).is_none()
                || Origin::from_code(record.origin).is_none()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::layout::writing::{payload, summary_bytes};

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
