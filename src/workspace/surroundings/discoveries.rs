//! How pytest collects the tests of a directory: the settings of the nearest pytest configuration
//! file, read once per directory and again when one of its configuration files changes, and the
//! workspace's modules test classes derive from ([`super::modules`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::modules::ModuleReader;
use crate::extract::{self, Discovery, ModuleSource, PytestSettings};
use crate::labels::FileStamp;
use crate::language::Language;

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
/// and again when one of its configuration files appears, goes or changes its stamp (size,
/// modification time, inode): the language server keeps one for its whole life, and a client need
/// not tell it of files it does not show.
#[derive(Debug)]
pub(super) struct Discoveries {
    root: PathBuf,
    by_directory: Mutex<HashMap<PathBuf, Level>>,
    modules: Arc<dyn ModuleSource>,
    /// pytest's defaults, for a directory no configuration file speaks for.
    defaults: Arc<Discovery>,
    /// What Java's and Rust's runners read: nothing. One for every file.
    nothing: Arc<Discovery>,
}

/// What one directory's own configuration files said, and their stamps when they were read.
#[derive(Debug, Clone)]
struct Level {
    stamps: [Option<FileStamp>; extract::PYTEST_CONFIG_FILES.len()],
    /// The settings of the first file with a pytest section; `None` sends the search upwards.
    own: Option<Arc<Discovery>>,
}

impl Discoveries {
    pub(super) fn new(root: &Path) -> Discoveries {
        let modules: Arc<dyn ModuleSource> = Arc::new(ModuleReader::new(root));
        Discoveries {
            root: root.to_path_buf(),
            by_directory: Mutex::default(),
            defaults: Arc::new(Discovery {
                pytest: PytestSettings::default(),
                modules: Some(modules.clone()),
            }),
            nothing: Arc::default(),
            modules,
        }
    }

    /// Forgets every directory's settings: they apply to every directory below theirs.
    pub(super) fn forget(&self) {
        self.by_directory
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    pub(super) fn for_file(&self, language: Language, path: &Path) -> Arc<Discovery> {
        match (language, path.parent()) {
            (Language::Python, Some(directory)) => self.for_directory(directory),
            _ => self.nothing.clone(),
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
            _ => self.defaults.clone(),
        }
    }

    /// The settings `directory`'s own configuration files give, read again when their stamps
    /// changed.
    fn own_settings(&self, directory: &Path) -> Option<Arc<Discovery>> {
        let stamps = extract::PYTEST_CONFIG_FILES.map(|name| FileStamp::of(&directory.join(name)));
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
        let own = pytest_settings_in(directory).map(|pytest| {
            Arc::new(Discovery {
                pytest,
                modules: Some(self.modules.clone()),
            })
        });
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
    let bytes = crate::files::read_regular(path, MAX_PYTEST_CONFIG_BYTES).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::super::tests::write;
    use super::*;

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
            )
            .pytest,
            PytestSettings::default()
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
            discoveries
                .for_file(Language::Python, &root.path().join("test_x.py"))
                .pytest,
            PytestSettings::default()
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
