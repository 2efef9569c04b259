//! What reading a file's tests takes from its workspace, read from disk once per run (or, in the
//! language server, again when a file changes): how pytest finds tests there (its configuration
//! files) and the `conftest.py` files its fixtures come from.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::analysis::{ParsedFile, Surroundings};
use crate::context;
use crate::extract::{self, Discovery, PytestSettings};
use crate::files;
use crate::language::Language;

/// Reads and caches the [`Surroundings`] of the files of one workspace.
#[derive(Debug)]
pub struct SurroundingsReader {
    root: PathBuf,
    discoveries: Discoveries,
    conftests: Conftests,
}

impl SurroundingsReader {
    pub fn new(root: &Path) -> SurroundingsReader {
        SurroundingsReader {
            root: root.to_path_buf(),
            discoveries: Discoveries::new(root),
            conftests: Conftests::new(root),
        }
    }

    /// How the test runners find tests in the `language` file at `path`, for callers that only
    /// find tests.
    pub fn discovery(&self, language: Language, path: &Path) -> Arc<Discovery> {
        self.discoveries.for_file(language, path)
    }

    /// Forgets what was read from the file at `path` when it is one that surroundings are read
    /// from (a pytest configuration file or a `conftest.py`), so the next read takes it anew;
    /// whether it was one. Both are read again anyway when their size or modification time
    /// changes, which a quick save of the same length can leave as it was.
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
            // Settings apply to every directory below theirs: forget them all.
            self.discoveries
                .by_directory
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
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
        }
    }
}

/// pytest configuration files larger than this are not read: real ones hold a few kilobytes, and
/// a file at that path could be anything (`/dev/zero` behind a link).
const MAX_PYTEST_CONFIG_BYTES: u64 = 1024 * 1024;

/// How the test runners collect the tests of the `language` file at `path` in the workspace at
/// `root`: for Python, the pytest settings of the nearest pytest configuration file, looking in the
/// file's directory and then in each parent up to `root`, as pytest looks for its configuration
/// (all the way up for a file outside `root`). A file pytest would refuse (invalid TOML) gives
/// pytest's defaults. Java's and Rust's runners have nothing to configure.
pub fn discovery(root: &Path, language: Language, path: &Path) -> Discovery {
    Discoveries::new(root)
        .for_file(language, path)
        .as_ref()
        .clone()
}

/// [`discovery`] for many files of one workspace, reading each directory's configuration once,
/// and again when one of its configuration files appears, goes or changes its size or
/// modification time (the language server keeps one for its whole life, and a client need not
/// tell it of files it does not show).
#[derive(Debug)]
struct Discoveries {
    root: PathBuf,
    by_directory: Mutex<HashMap<PathBuf, Level>>,
}

/// What one directory's own configuration files said, and their stamps when they were read.
#[derive(Debug, Clone)]
struct Level {
    stamps: [Stamp; extract::PYTEST_CONFIG_FILES.len()],
    /// The settings of the first file with a pytest section; `None` sends the search upwards.
    own: Option<Arc<Discovery>>,
}

impl Discoveries {
    fn new(root: &Path) -> Discoveries {
        Discoveries {
            root: root.to_path_buf(),
            by_directory: Mutex::default(),
        }
    }

    fn for_file(&self, language: Language, path: &Path) -> Arc<Discovery> {
        match (language, path.parent()) {
            (Language::Python, Some(directory)) => self.for_directory(directory),
            _ => Arc::default(),
        }
    }

    fn for_directory(&self, directory: &Path) -> Arc<Discovery> {
        if let Some(own) = self.own_settings(directory) {
            return own;
        }
        match directory.parent() {
            Some(parent) if directory != self.root && !parent.as_os_str().is_empty() => {
                self.for_directory(parent)
            }
            _ => Arc::default(),
        }
    }

    /// The settings `directory`'s own configuration files give, read again when their stamps
    /// changed.
    fn own_settings(&self, directory: &Path) -> Option<Arc<Discovery>> {
        let stamps = extract::PYTEST_CONFIG_FILES.map(|name| stamp(&directory.join(name)));
        let known = self
            .by_directory
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(directory)
            .cloned();
        if let Some(known) = known
            && known.stamps == stamps
        {
            return known.own;
        }
        let own = pytest_settings_in(directory).map(|pytest| Arc::new(Discovery { pytest }));
        self.by_directory
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                directory.to_path_buf(),
                Level {
                    stamps,
                    own: own.clone(),
                },
            );
        own
    }
}

/// The pytest settings of the first configuration file of `directory` that holds a pytest
/// section, in pytest's order.
fn pytest_settings_in(directory: &Path) -> Option<PytestSettings> {
    extract::PYTEST_CONFIG_FILES.iter().find_map(|name| {
        let text = read_small_regular_file(&directory.join(name))?;
        match PytestSettings::from_config_file(name, &text) {
            Ok(settings) => settings,
            Err(_) => Some(PytestSettings::default()),
        }
    })
}

/// The text of a regular file of at most [`MAX_PYTEST_CONFIG_BYTES`]; `None` for anything else.
fn read_small_regular_file(path: &Path) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_PYTEST_CONFIG_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_PYTEST_CONFIG_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The `conftest.py` files of a workspace, each read and parsed once however many test files
/// take fixtures from it, and again when its size or modification time changes (the language
/// server keeps one for its whole life). Files that cannot be read, or are not UTF-8, are passed
/// over: their fixtures are not known.
#[derive(Debug)]
struct Conftests {
    root: PathBuf,
    parsed: Mutex<HashMap<String, Parsed>>,
}

/// A conftest file as last read: when, and what it held.
type Parsed = (Stamp, Option<Arc<ParsedFile>>);

/// What tells a file changed: its length and modification time (none: it is not a regular file).
type Stamp = Option<(u64, Option<std::time::SystemTime>)>;

fn stamp(path: &Path) -> Stamp {
    std::fs::metadata(path)
        .ok()
        .filter(|metadata| metadata.is_file())
        .map(|metadata| (metadata.len(), metadata.modified().ok()))
}

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
        let stamp = stamp(&path);
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

    fn write(path: &Path, text: &str) {
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

    #[test]
    fn the_nearest_pytest_configuration_up_to_the_root_wins() {
        let workspace = tempfile::tempdir().unwrap();
        let root = workspace.path().join("repo");
        // Above the root: never read.
        write(
            &workspace.path().join("pytest.ini"),
            "[pytest]\npython_functions = outside_\n",
        );
        write(
            &root.join("setup.cfg"),
            "[tool:pytest]\npython_classes = test_*\n",
        );
        // A pyproject.toml without a pytest table does not stop the search.
        write(
            &root.join("t/pyproject.toml"),
            "[tool.black]\nline-length = 99\n",
        );
        write(
            &root.join("t/unit/tox.ini"),
            "[pytest]\npython_functions = check_\n",
        );
        write(
            &root.join("t/unit/pytest.ini"),
            "[pytest]\npython_functions = verify_\n",
        );
        let discoveries = Discoveries::new(&root);
        let functions = |path: &str| {
            discoveries
                .for_file(Language::Python, &root.join(path))
                .pytest
                .functions()
                .to_vec()
        };
        let classes = |path: &str| {
            discoveries
                .for_file(Language::Python, &root.join(path))
                .pytest
                .classes()
                .to_vec()
        };
        assert_eq!(classes("t/test_a.py"), ["test_*"]);
        assert_eq!(functions("t/test_a.py"), ["test"]);
        // pytest.ini wins over tox.ini in its directory, and over setup.cfg further up.
        assert_eq!(functions("t/unit/test_b.py"), ["verify_"]);
        assert_eq!(classes("t/unit/deeper/test_c.py"), ["Test"]);
        assert_eq!(
            discovery(&root, Language::Python, &root.join("test_d.py"))
                .pytest
                .classes(),
            ["test_*"]
        );
        let bare = tempfile::tempdir().unwrap();
        assert_eq!(
            discovery(
                bare.path(),
                Language::Python,
                &bare.path().join("test_e.py")
            ),
            Discovery::default()
        );
    }

    #[test]
    fn configuration_files_that_appear_change_or_go_are_read_again() {
        let workspace = tempfile::tempdir().unwrap();
        let root = workspace.path();
        let discoveries = Discoveries::new(root);
        let functions = || {
            discoveries
                .for_file(Language::Python, &root.join("t/test_a.py"))
                .pytest
                .functions()
                .to_vec()
        };
        assert_eq!(functions(), ["test"]);
        write(
            &root.join("setup.cfg"),
            "[tool:pytest]\npython_functions = check_\n",
        );
        assert_eq!(functions(), ["check_"], "a new file in a parent directory");
        write(
            &root.join("t/tox.ini"),
            "[pytest]\npython_functions = verify_\n",
        );
        assert_eq!(functions(), ["verify_"], "a new file nearer the test");
        write(
            &root.join("t/tox.ini"),
            "[pytest]\npython_functions = confirm_\n",
        );
        assert_eq!(functions(), ["confirm_"], "a file that changed");
        std::fs::remove_file(root.join("t/tox.ini")).unwrap();
        assert_eq!(functions(), ["check_"], "a file that went");
        // Java's and Rust's runners read none of it.
        assert_eq!(
            *discoveries.for_file(Language::Rust, &root.join("t/a.rs")),
            Discovery::default()
        );
    }

    #[test]
    fn unreadable_or_invalid_configuration_gives_defaults() {
        let root = tempfile::tempdir().unwrap();
        write(
            &root.path().join("pyproject.toml"),
            "[tool.pytest.ini_options\n",
        );
        write(
            &root.path().join("a/setup.cfg"),
            "[tool:pytest]\npython_classes = Check\n",
        );
        std::fs::create_dir_all(root.path().join("a/b/pytest.ini")).unwrap();
        let discoveries = Discoveries::new(root.path());
        assert_eq!(
            *discoveries.for_file(Language::Python, &root.path().join("test_x.py")),
            Discovery::default()
        );
        // A directory named pytest.ini is not a configuration file.
        assert_eq!(
            discoveries
                .for_file(Language::Python, &root.path().join("a/b/test_x.py"))
                .pytest
                .classes(),
            ["Check"]
        );
    }
}
