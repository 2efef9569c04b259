//! Converts byte offsets to lines and columns and back, in the units editors count in.

/// How a column is counted: the LSP's negotiated position encodings, and characters for humans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnUnit {
    /// UTF-8 code units: bytes.
    Utf8,
    /// UTF-16 code units, the LSP default.
    Utf16,
    /// Unicode scalar values, as a terminal shows them (`file:line:col`).
    Char,
}

/// The start offset of every line of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, byte)| byte == b'\n')
                .map(|(offset, _)| offset + 1),
        );
        LineIndex { line_starts }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The zero-based line and column of a byte offset. An offset past the end, or inside a
    /// multi-byte character, is clamped to the nearest valid position before it.
    pub fn position(&self, text: &str, offset: usize, unit: ColumnUnit) -> (u32, u32) {
        let offset = floor_char_boundary(text, offset);
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let prefix = &text[self.line_starts[line]..offset];
        (line as u32, column_width(prefix, unit))
    }

    /// The byte offset of a zero-based line and column. A column past the end of its line means
    /// the end of the line (before its line break), a line past the end means the end of the
    /// text, and a column inside a character means the start of that character, as the LSP
    /// specification asks of servers.
    pub fn offset(&self, text: &str, line: u32, column: u32, unit: ColumnUnit) -> usize {
        let Some(&line_start) = self.line_starts.get(line as usize) else {
            return text.len();
        };
        let line_end = self
            .line_starts
            .get(line as usize + 1)
            .map_or(text.len(), |&next| next - 1);
        let line_text = &text[line_start..line_end];
        let line_text = line_text.strip_suffix('\r').unwrap_or(line_text);
        let mut counted = 0u32;
        for (offset, character) in line_text.char_indices() {
            let width = match unit {
                ColumnUnit::Utf8 => character.len_utf8() as u32,
                ColumnUnit::Utf16 => character.len_utf16() as u32,
                ColumnUnit::Char => 1,
            };
            if counted + width > column {
                return line_start + offset;
            }
            counted += width;
        }
        line_start + line_text.len()
    }
}

fn column_width(prefix: &str, unit: ColumnUnit) -> u32 {
    match unit {
        ColumnUnit::Utf8 => prefix.len() as u32,
        ColumnUnit::Utf16 => prefix.encode_utf16().count() as u32,
        ColumnUnit::Char => prefix.chars().count() as u32,
    }
}

fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "ab\né😀x\r\nlast";

    #[test]
    fn positions_count_in_each_unit() {
        let index = LineIndex::new(TEXT);
        assert_eq!(index.line_count(), 3);
        let x = TEXT.find('x').unwrap();
        assert_eq!(index.position(TEXT, x, ColumnUnit::Utf8), (1, 6));
        assert_eq!(index.position(TEXT, x, ColumnUnit::Utf16), (1, 3));
        assert_eq!(index.position(TEXT, x, ColumnUnit::Char), (1, 2));
        assert_eq!(index.position(TEXT, TEXT.len(), ColumnUnit::Utf16), (2, 4));
        assert_eq!(index.position(TEXT, 0, ColumnUnit::Utf16), (0, 0));
    }

    #[test]
    fn offsets_invert_positions() {
        let index = LineIndex::new(TEXT);
        for unit in [ColumnUnit::Utf8, ColumnUnit::Utf16, ColumnUnit::Char] {
            for (offset, _) in TEXT.char_indices() {
                let (line, column) = index.position(TEXT, offset, unit);
                if TEXT[offset..].starts_with('\n') && TEXT[..offset].ends_with('\r') {
                    continue; // the position of a CRLF's LF is that of its CR
                }
                assert_eq!(
                    index.offset(TEXT, line, column, unit),
                    offset,
                    "{unit:?} {offset}"
                );
            }
        }
    }

    #[test]
    fn out_of_range_positions_are_clamped() {
        let index = LineIndex::new(TEXT);
        assert_eq!(index.offset(TEXT, 0, 99, ColumnUnit::Utf16), 2);
        assert_eq!(
            index.offset(TEXT, 1, 99, ColumnUnit::Utf16),
            TEXT.find('\r').unwrap()
        );
        assert_eq!(index.offset(TEXT, 9, 0, ColumnUnit::Utf16), TEXT.len());
        // Column 2 in UTF-16 falls inside the surrogate pair of the emoji: its start.
        assert_eq!(
            index.offset(TEXT, 1, 2, ColumnUnit::Utf16),
            TEXT.find('😀').unwrap()
        );
        // An offset inside a multi-byte character is clamped to its start.
        assert_eq!(
            index.position(TEXT, TEXT.find('é').unwrap() + 1, ColumnUnit::Char),
            (1, 0)
        );
    }
}
