//! Byte offsets of the core to LSP positions and back, in the negotiated position encoding.
//!
//! The analysis speaks byte ranges; editors count columns in UTF-16 code units unless both sides
//! agree on UTF-8 during `initialize` (LSP 3.17, `general.positionEncodings`).

use std::ops::Range;

use tower_lsp_server::ls_types::{self as lsp, PositionEncodingKind};

use crate::line_index::{ColumnUnit, LineIndex};

/// The position encoding agreed with the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    Utf8,
    /// The protocol's default, and the only one every client understands.
    #[default]
    Utf16,
}

impl PositionEncoding {
    /// UTF-8 when the client offers it (columns are then byte offsets, nothing to convert),
    /// UTF-16 otherwise.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> PositionEncoding {
        let offers_utf8 = offered
            .unwrap_or_default()
            .contains(&PositionEncodingKind::UTF8);
        if offers_utf8 {
            PositionEncoding::Utf8
        } else {
            PositionEncoding::Utf16
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
        }
    }

    fn unit(self) -> ColumnUnit {
        match self {
            PositionEncoding::Utf8 => ColumnUnit::Utf8,
            PositionEncoding::Utf16 => ColumnUnit::Utf16,
        }
    }
}

/// A text with its line index: everything needed to convert positions.
#[derive(Debug, Clone, Copy)]
pub struct TextLines<'a> {
    pub text: &'a str,
    pub lines: &'a LineIndex,
}

impl TextLines<'_> {
    pub fn position(&self, offset: usize, encoding: PositionEncoding) -> lsp::Position {
        let (line, character) = self.lines.position(self.text, offset, encoding.unit());
        lsp::Position { line, character }
    }

    pub fn range(&self, range: &Range<usize>, encoding: PositionEncoding) -> lsp::Range {
        lsp::Range {
            start: self.position(range.start, encoding),
            end: self.position(range.end, encoding),
        }
    }

    /// The byte offset of a position; positions past a line's end or the text's end are clamped
    /// as the specification asks.
    pub fn offset(&self, position: lsp::Position, encoding: PositionEncoding) -> usize {
        self.lines.offset(
            self.text,
            position.line,
            position.character,
            encoding.unit(),
        )
    }

    pub fn byte_range(&self, range: lsp::Range, encoding: PositionEncoding) -> Range<usize> {
        let start = self.offset(range.start, encoding);
        let end = self.offset(range.end, encoding).max(start);
        start..end
    }

    /// The tree-sitter point of a byte offset: a row and a column in bytes.
    pub fn point(&self, offset: usize) -> tree_sitter::Point {
        let (row, column) = self.lines.position(self.text, offset, ColumnUnit::Utf8);
        tree_sitter::Point::new(row as usize, column as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_is_chosen_only_when_offered() {
        assert_eq!(PositionEncoding::negotiate(None), PositionEncoding::Utf16);
        assert_eq!(
            PositionEncoding::negotiate(Some(&[PositionEncodingKind::UTF16])),
            PositionEncoding::Utf16
        );
        assert_eq!(
            PositionEncoding::negotiate(Some(&[
                PositionEncodingKind::UTF32,
                PositionEncodingKind::UTF8
            ])),
            PositionEncoding::Utf8
        );
    }

    #[test]
    fn ranges_count_columns_in_the_negotiated_unit() {
        let text = "// é😀\nvoid testé() {}\n";
        let lines = LineIndex::new(text);
        let text_lines = TextLines {
            text,
            lines: &lines,
        };
        let name = text.find("testé").unwrap();
        let range = name.."testé".len() + name;
        let utf16 = text_lines.range(&range, PositionEncoding::Utf16);
        assert_eq!((utf16.start.line, utf16.start.character), (1, 5));
        assert_eq!(utf16.end.character, 10);
        let utf8 = text_lines.range(&range, PositionEncoding::Utf8);
        assert_eq!(utf8.end.character, 11);
        for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16] {
            let back = text_lines.byte_range(text_lines.range(&range, encoding), encoding);
            assert_eq!(back, range);
        }
        let emoji = text.find('😀').unwrap();
        assert_eq!(
            text_lines.position(emoji + 4, PositionEncoding::Utf16),
            lsp::Position::new(0, 6)
        );
        assert_eq!(text_lines.point(name), tree_sitter::Point::new(1, 5));
    }
}
