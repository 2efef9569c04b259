//! The source files of a workspace, walked once and shared: the symbol index and the signal
//! shares both read every file, and a short run (`check --staged`, the language server's
//! start) would otherwise walk the whole tree once for each.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::files;

/// The Java, Python and Rust files under a workspace's root outside its `exclude` patterns
/// ([`files::walk_sources`]), walked when first asked for. The list is of that moment: whoever
/// must see files added later (the language server counting again after saves) makes a new one.
#[derive(Debug)]
pub struct WorkspaceSources {
    root: PathBuf,
    exclude: globset::GlobSet,
    walked: OnceLock<Vec<PathBuf>>,
}

impl WorkspaceSources {
    pub fn new(root: &Path, exclude: globset::GlobSet) -> WorkspaceSources {
        WorkspaceSources {
            root: root.to_path_buf(),
            exclude,
            walked: OnceLock::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The files, sorted; the first caller walks the tree, later ones (on any thread) wait for
    /// that walk and share it. Files that cannot be walked to are left out: whoever judges them
    /// reports why.
    pub fn paths(&self) -> &[PathBuf] {
        self.walked.get_or_init(|| {
            files::walk_sources(std::slice::from_ref(&self.root), &self.root, &self.exclude).0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_are_walked_once_and_shared_until_a_new_list_is_made() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tests")).unwrap();
        std::fs::write(root.path().join("tests/a_test.py"), "def test_a(): pass\n").unwrap();
        std::fs::write(root.path().join("notes.txt"), "not a source\n").unwrap();
        let sources = WorkspaceSources::new(root.path(), globset::GlobSet::empty());
        let first = sources.paths().to_vec();
        assert_eq!(first, vec![root.path().join("tests/a_test.py")]);
        std::fs::write(root.path().join("tests/b_test.py"), "def test_b(): pass\n").unwrap();
        assert_eq!(sources.paths(), first, "the list of the first walk");
        let again = WorkspaceSources::new(root.path(), globset::GlobSet::empty());
        assert_eq!(again.paths().len(), 2, "a new list walks again");
    }
}
