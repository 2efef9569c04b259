//! The open documents: their text, version and syntax tree, kept in step with the editor's edits.
//!
//! Edits are applied the moment they arrive, before the handler awaits anything (the design
//! notes: tower-lsp runs up to four handlers at once, and a handler that awaits first may apply
//! its edit after a later one). The kept tree receives the same edits through
//! [`tree_sitter::Tree::edit`], so the next parse only re-reads what changed.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

use crate::language::Language;
use crate::line_index::LineIndex;
use crate::lsp::judging::{Analysis, PredictionCache};
use crate::lsp::position::{PositionEncoding, TextLines};
use crate::lsp::reread::LastRead;

/// One document the editor has open.
#[derive(Debug)]
pub struct Document {
    pub language: Language,
    /// The path tests ids are built from: relative to the workspace root when the file lies in it.
    pub relative_path: String,
    pub version: i32,
    pub text: String,
    pub lines: LineIndex,
    /// The tree of the last parse, edited since to match `text`.
    pub tree: Option<tree_sitter::Tree>,
    /// What the read of the last analysed version found, which the next read may keep.
    pub last_read: Option<Arc<LastRead>>,
    /// The judgement of the last analysed version, `None` before the first one.
    pub analysis: Option<Arc<Analysis>>,
    /// Predictions by test code, so a keystroke re-predicts only the test it touched.
    pub cache: Arc<Mutex<PredictionCache>>,
    /// The document was found too large and said so; said again only after it shrank.
    pub reported_too_large: bool,
    /// The session generation in which the analysis of the latest diagnostics published began,
    /// `None` before the first: a command that changed the labels waits for its own.
    pub published_generation: Option<u64>,
}

impl Document {
    pub fn new(language: Language, relative_path: String, version: i32, text: String) -> Document {
        Document {
            language,
            relative_path,
            version,
            lines: LineIndex::new(&text),
            text,
            tree: None,
            last_read: None,
            analysis: None,
            cache: Arc::default(),
            reported_too_large: false,
            published_generation: None,
        }
    }

    pub fn text_lines(&self) -> TextLines<'_> {
        TextLines {
            text: &self.text,
            lines: &self.lines,
        }
    }

    /// Applies the changes of one `didChange`, in order, each to the text the previous one left.
    pub fn apply_changes(
        &mut self,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        encoding: PositionEncoding,
    ) {
        for change in changes {
            match change.range {
                Some(range) => {
                    let replaced = self.text_lines().byte_range(range, encoding);
                    self.replace(replaced, &change.text);
                }
                None => {
                    self.text = change.text;
                    self.lines = LineIndex::new(&self.text);
                    self.tree = None;
                }
            }
        }
        self.version = version;
    }

    /// Replaces a byte range of the text and tells the kept tree about it.
    fn replace(&mut self, replaced: Range<usize>, new_text: &str) {
        let text_lines = self.text_lines();
        let start_position = text_lines.point(replaced.start);
        let old_end_position = text_lines.point(replaced.end);
        self.text.replace_range(replaced.clone(), new_text);
        self.lines = LineIndex::new(&self.text);
        let new_end_byte = replaced.start + new_text.len();
        let new_end_position = self.text_lines().point(new_end_byte);
        if let Some(tree) = &mut self.tree {
            tree.edit(&tree_sitter::InputEdit {
                start_byte: replaced.start,
                old_end_byte: replaced.end,
                new_end_byte,
                start_position,
                old_end_position,
                new_end_position,
            });
        }
    }
}

/// The open documents by URI, behind a std mutex: every access is short and never awaits.
#[derive(Debug, Default)]
pub struct DocumentStore {
    documents: Mutex<HashMap<Uri, Document>>,
}

impl DocumentStore {
    pub fn lock(&self) -> MutexGuard<'_, HashMap<Uri, Document>> {
        // A panic while the lock was held left a document at worst half edited; the next full
        // change or reopen repairs it, so serving on beats refusing every request.
        self.documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range as LspRange};

    fn change(start: (u32, u32), end: (u32, u32), text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(LspRange::new(
                Position::new(start.0, start.1),
                Position::new(end.0, end.1),
            )),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn edits_apply_in_order_in_utf16_columns() {
        let mut document = Document::new(
            Language::Java,
            "A.java".into(),
            1,
            "// é😀 x\nclass A {}\n".into(),
        );
        // Column 6 in UTF-16 lies after the emoji (a surrogate pair, two units); the second
        // edit sees the text the first one left.
        document.apply_changes(
            2,
            vec![
                change((0, 6), (0, 6), "!"),
                change((1, 6), (1, 7), "B"),
                change((0, 0), (0, 0), "/*x*/\n"),
            ],
            PositionEncoding::Utf16,
        );
        assert_eq!(document.text, "/*x*/\n// é😀! x\nclass B {}\n");
        assert_eq!(document.version, 2);
        assert_eq!(document.lines.line_count(), 4);
    }

    #[test]
    fn an_edited_tree_reparses_to_the_same_tree_as_a_fresh_parse() {
        let source = "class ATest {\n    @Test\n    void first() { Thread.sleep(10); }\n}\n";
        let mut document = Document::new(Language::Java, "ATest.java".into(), 1, source.into());
        document.tree = crate::extract::parse(Language::Java, &document.text, None);
        let after_sleep = "    void second() { Thread.sleep(10);".len() as u32;
        document.apply_changes(
            2,
            vec![
                change((2, 9), (2, 14), "second"),
                change(
                    (2, after_sleep),
                    (2, after_sleep),
                    "\n        assertTrue(done);",
                ),
            ],
            PositionEncoding::Utf8,
        );
        let incremental =
            crate::extract::parse(Language::Java, &document.text, document.tree.as_ref())
                .expect("parses");
        let fresh = crate::extract::parse(Language::Java, &document.text, None).expect("parses");
        assert_eq!(
            incremental.root_node().to_sexp(),
            fresh.root_node().to_sexp()
        );
        let tests = crate::extract::extract_tests_from_tree(
            Language::Java,
            "ATest.java",
            &document.text,
            &incremental,
        )
        .tests;
        assert_eq!(tests[0].name, "second");
        assert!(tests[0].code.contains("assertTrue(done)"));
    }

    #[test]
    fn a_change_without_a_range_replaces_the_text_and_drops_the_tree() {
        let mut document = Document::new(Language::Rust, "a.rs".into(), 1, "fn a() {}".into());
        document.tree = crate::extract::parse(Language::Rust, &document.text, None);
        document.apply_changes(
            5,
            vec![TextDocumentContentChangeEvent {
                range: None,
                range_length: None,
                text: "fn b() {}\n".into(),
            }],
            PositionEncoding::Utf16,
        );
        assert_eq!(document.text, "fn b() {}\n");
        assert!(document.tree.is_none());
    }
}
