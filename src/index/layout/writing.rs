//! Laying format 3 out: the strings section, the tables of strings, the summary, and the
//! directory that places every section at an aligned offset behind the header.

use super::{ABSENT, ALIGNMENT, DIRECTORY_ENTRY_LEN, SUMMARY_LEN, Summary};

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
