//! What reading a file's tests takes from its workspace, read from disk once per run (or, in the
//! language server, again when a file changes): how pytest finds tests there (its configuration
//! files) and the `conftest.py` files its fixtures come from.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::analysis::{ParsedFile, Surroundings};
use crate::context;
use crate::extract::{self, Discovery};
use crate::files;
use crate::labels::FileStamp;
use crate::language::Language;
use crate::workspace::OtherFiles;
use discoveries::Discoveries;
pub use discoveries::discovery;

mod discoveries;
mod modules;

/// The names of the files surroundings are read from: `conftest.py` and pytest's configuration
/// files.
pub fn surroundings_file_names() -> impl Iterator<Item = &'static str> {
    std::iter::once(context::CONFTEST).chain(extract::PYTEST_CONFIG_FILES)
}

/// Reads and caches the [`Surroundings`] of the files of one workspace.
#[derive(Debug)]
pub struct SurroundingsReader {
    root: PathBuf,
    discoveries: Discoveries,
    conftests: Conftests,
    others: Option<Arc<OtherFiles>>,
}

impl SurroundingsReader {
    /// A reader of each file alone, with its `conftest.py` files but no other file of the
    /// workspace: what counting signal shares reads.
    pub fn new(root: &Path) -> SurroundingsReader {
        SurroundingsReader {
            root: root.to_path_buf(),
            discoveries: Discoveries::new(root),
            conftests: Conftests::new(root),
            others: None,
        }
    }

    /// A reader whose files are read with the other files of the workspace their code reaches
    /// ([`OtherFiles`]): what judging a test reads.
    pub fn with_others(root: &Path, others: Arc<OtherFiles>) -> SurroundingsReader {
        SurroundingsReader {
            others: Some(others),
            ..SurroundingsReader::new(root)
        }
    }

    /// Where the files' other files are found, when they are read with them.
    pub fn others(&self) -> Option<&Arc<OtherFiles>> {
        self.others.as_ref()
    }

    /// How the test runners find tests in the `language` file at `path`, for callers that only
    /// find tests.
    pub fn discovery(&self, language: Language, path: &Path) -> Arc<Discovery> {
        self.discoveries.for_file(language, path)
    }

    /// Forgets what was read from the file at `path` when it is one that surroundings are read
    /// from (a pytest configuration file or a `conftest.py`), so the next read takes it anew;
    /// whether it was one. Both are read again anyway when their stamp (size, modification time,
    /// inode) changes, which a save in place of the same length can leave as it was.
    pub fn forget(&self, path: &Path) -> bool {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            return false;
        };
        if name == context::CONFTEST {
            let relative = super::relative_path(&self.root, path);
            self.conftests
                .parsed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&relative);
            true
        } else if extract::PYTEST_CONFIG_FILES.contains(&name) {
            self.discoveries.forget();
            true
        } else {
            false
        }
    }

    /// The surroundings of the file at `path` (absolute, or relative to the current directory).
    pub fn for_file(&self, language: Language, path: &Path) -> Surroundings {
        let relative = super::relative_path(&self.root, path);
        Surroundings {
            discovery: self.discoveries.for_file(language, path),
            conftests: self.conftests.for_file(language, &relative),
            others: self.others.clone(),
        }
    }
}

/// The `conftest.py` files of a workspace, each read and parsed once however many test files
/// take fixtures from it, and again when its stamp changes (the language
/// server keeps one for its whole life). Files that cannot be read, or are not UTF-8, are passed
/// over: their fixtures are not known.
#[derive(Debug)]
struct Conftests {
    root: PathBuf,
    parsed: Mutex<HashMap<String, Parsed>>,
}

/// A conftest file as last read: its stamp then (none: there was no file), and what it held.
type Parsed = (Option<FileStamp>, Option<Arc<ParsedFile>>);

impl Conftests {
    fn new(root: &Path) -> Conftests {
        Conftests {
            root: root.to_path_buf(),
            parsed: Mutex::default(),
        }
    }

    /// The `conftest.py` files that apply to the Python file at `relative` (workspace-relative),
    /// nearest directory first; none for other languages.
    fn for_file(&self, language: Language, relative: &str) -> Vec<Arc<ParsedFile>> {
        if language != Language::Python {
            return Vec::new();
        }
        context::conftest_candidates(relative)
            .into_iter()
            .filter_map(|candidate| self.parsed(candidate))
            .collect()
    }

    fn parsed(&self, relative: String) -> Option<Arc<ParsedFile>> {
        let path = self.root.join(&relative);
        let stamp = FileStamp::of(&path);
        let known = self
            .parsed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&relative)
            .cloned();
        if let Some((known_stamp, parsed)) = known
            && known_stamp == stamp
        {
            return parsed;
        }
        let parsed = stamp
            .and_then(|_| files::read_source(&path).ok())
            .filter(|file| !file.lossy && file.language == Language::Python)
            .and_then(|file| ParsedFile::new(Language::Python, relative.clone(), file.text))
            .map(Arc::new);
        self.parsed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(relative, (stamp, parsed.clone()));
        parsed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `text` to `path`, creating its directories.
    pub(super) fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_forgotten_file_is_read_again_even_when_its_size_and_time_did_not_change() {
        let workspace = tempfile::tempdir().unwrap();
        let root = workspace.path();
        let conftest = root.join("tests/conftest.py");
        write(&conftest, "A = 1\n");
        write(
            &root.join("pytest.ini"),
            "[pytest]\npython_functions = check_\n",
        );
        let reader = SurroundingsReader::new(root);
        let read = |reader: &SurroundingsReader| {
            let surroundings = reader.for_file(Language::Python, &root.join("tests/test_a.py"));
            (
                surroundings.conftests[0].text.clone(),
                surroundings.discovery.pytest.functions().to_vec(),
            )
        };
        assert_eq!(
            read(&reader),
            ("A = 1\n".to_string(), vec!["check_".to_string()])
        );

        // Saved again within the file system's time resolution, at the same length.
        let same_time = |path: &Path, text: &str| {
            let modified = std::fs::metadata(path).unwrap().modified().unwrap();
            std::fs::write(path, text).unwrap();
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(modified)
                .unwrap();
        };
        same_time(&conftest, "B = 2\n");
        same_time(
            &root.join("pytest.ini"),
            "[pytest]\npython_functions = verify\n",
        );
        assert_eq!(read(&reader).0, "A = 1\n", "the stamp alone cannot tell");

        assert!(reader.forget(&conftest));
        assert!(reader.forget(&root.join("pytest.ini")));
        assert!(!reader.forget(&root.join("tests/test_a.py")));
        assert_eq!(
            read(&reader),
            ("B = 2\n".to_string(), vec!["verify".to_string()])
        );
    }
}
