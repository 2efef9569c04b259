//! A project's own index of labelled tests, `.flakesense/index` at the workspace root: where it
//! lives, how it is created, and what happens when it is damaged.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rayon::prelude::*;

use crate::embed::{Projection, Tokenizer};
use crate::extract::{self, Discovery, PytestSettings, TestMethod};
use crate::files;
use crate::index::{Index, LoadError, ModelParams};
use crate::prevalence::Prevalence;
use crate::signals;

/// The project index's path, relative to the workspace root.
pub const INDEX_PATH: &str = ".flakesense/index";

pub fn index_path(root: &Path) -> PathBuf {
    root.join(INDEX_PATH)
}

/// The workspace root of a path: the nearest ancestor holding `.flakesense`, `flakesense.toml`
/// or `.git`, else the path itself (or its directory, for a file).
pub fn find_root(start: &Path) -> PathBuf {
    let start = if start.is_file() {
        start.parent().unwrap_or(start)
    } else {
        start
    };
    start
        .ancestors()
        .find(|directory| {
            [".flakesense", crate::config::CONFIG_FILE, ".git"]
                .iter()
                .any(|marker| directory.join(marker).exists())
        })
        .unwrap_or(start)
        .to_path_buf()
}

/// A larger workspace (an editor opened on a home directory, a monorepo) is counted from this
/// many of its source files, evenly spaced in path order: shares of a few thousand files are
/// precise enough, and reading them stays a matter of seconds.
const MAX_COUNTED_FILES: usize = 5_000;

/// How common each signal is among the tests of the workspace at `root` (files matching
/// `exclude` left out, and Python files pytest would not collect): what a shipped model's prior
/// weighs signals by. Files that cannot be read are passed over; whoever judges them reports why.
pub fn prevalence(root: &Path, exclude: &globset::GlobSet) -> Prevalence {
    let (paths, _) = files::walk_sources(&[root.to_path_buf()], root, exclude);
    let discoveries = Discoveries::new(root);
    let stride = paths.len().div_ceil(MAX_COUNTED_FILES).max(1);
    let sample: Vec<&PathBuf> = paths.iter().step_by(stride).collect();
    sample
        .par_iter()
        .filter_map(|path| Some((path, files::read_source(path).ok()?)))
        .filter(|(_, file)| !file.lossy)
        .filter_map(|(path, file)| {
            let discovery = discoveries.for_file(path);
            discovery.collects_file(file.language, path).then(|| {
                let path = path.to_string_lossy();
                tally(
                    &extract::extract_tests_with(file.language, &path, &file.text, &discovery)
                        .tests,
                )
            })
        })
        .reduce(Prevalence::default, Prevalence::merged)
}

/// pytest configuration files larger than this are not read: real ones hold a few kilobytes, and
/// a file at that path could be anything (`/dev/zero` behind a link).
const MAX_PYTEST_CONFIG_BYTES: u64 = 1024 * 1024;

/// How the test runners collect the tests of the file at `path` in the workspace at `root`: the
/// pytest settings of the nearest pytest configuration file, looking in the file's directory and
/// then in each parent up to `root`, as pytest looks for its configuration (all the way up for a
/// file outside `root`). A file pytest would refuse (invalid TOML) gives pytest's defaults.
pub fn discovery(root: &Path, path: &Path) -> Discovery {
    Discoveries::new(root).for_file(path).as_ref().clone()
}

/// [`discovery`] for many files of one workspace, reading each directory's configuration once.
#[derive(Debug)]
pub struct Discoveries {
    root: PathBuf,
    by_directory: Mutex<HashMap<PathBuf, Arc<Discovery>>>,
}

impl Discoveries {
    pub fn new(root: &Path) -> Discoveries {
        Discoveries {
            root: root.to_path_buf(),
            by_directory: Mutex::default(),
        }
    }

    pub fn for_file(&self, path: &Path) -> Arc<Discovery> {
        match path.parent() {
            Some(directory) => self.for_directory(directory),
            None => Arc::default(),
        }
    }

    fn for_directory(&self, directory: &Path) -> Arc<Discovery> {
        let cached = self
            .by_directory
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(directory)
            .cloned();
        if let Some(cached) = cached {
            return cached;
        }
        let found = match pytest_settings_in(directory) {
            Some(pytest) => Arc::new(Discovery { pytest }),
            None => match directory.parent() {
                Some(parent) if directory != self.root && !parent.as_os_str().is_empty() => {
                    self.for_directory(parent)
                }
                _ => Arc::default(),
            },
        };
        self.by_directory
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(directory.to_path_buf(), found.clone());
        found
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

/// How common each signal is among some tests of a workspace.
pub fn tally(tests: &[TestMethod]) -> Prevalence {
    let mut prevalence = Prevalence::default();
    for test in tests {
        prevalence.add(test.language, &signals::detect(test.language, &test.code));
    }
    prevalence
}

/// The parameters of a new project index. They do not depend on the project, so a test marked
/// in the editor is embedded the same way on every machine.
pub fn new_index_params() -> ModelParams {
    ModelParams {
        tokenizer: Tokenizer::Code,
        projection: Projection {
            dims: 940,
            nonzeros_per_token: 4,
            seed: 42,
        },
        description: "project index of labels given in the editor or imported from its history"
            .to_string(),
        priors: Vec::new(),
    }
}

/// What was found at a workspace's index path.
#[derive(Debug)]
pub enum ProjectIndex {
    Missing,
    Loaded(Box<Index>),
    /// The file was damaged; it was moved to `moved_to` so nothing is lost, and a new index
    /// can be written in its place.
    Corrupt {
        error: LoadError,
        moved_to: PathBuf,
    },
    /// The file cannot be used but is not ours to move: unreadable, foreign, or from a newer
    /// release. It is left alone.
    Unusable(LoadError),
}

/// Loads a workspace's index, moving a damaged one aside.
pub fn load_project_index(root: &Path) -> ProjectIndex {
    let path = index_path(root);
    if !path.exists() {
        return ProjectIndex::Missing;
    }
    match Index::load(&path) {
        Ok(index) => ProjectIndex::Loaded(Box::new(index)),
        Err(error) if error.is_corruption() => match quarantine(&path) {
            Ok(moved_to) => ProjectIndex::Corrupt { error, moved_to },
            Err(_) => ProjectIndex::Unusable(error),
        },
        Err(error) => ProjectIndex::Unusable(error),
    }
}

/// Moves a damaged file aside as `<name>.corrupt-<n>`, never overwriting an earlier one.
pub fn quarantine(path: &Path) -> std::io::Result<PathBuf> {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("index");
    for attempt in 1u32.. {
        let candidate = path.with_file_name(format!("{name}.corrupt-{attempt}"));
        if !candidate.exists() {
            std::fs::rename(path, &candidate)?;
            return Ok(candidate);
        }
    }
    unreachable!("some numbered name is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_index_is_reported_as_missing() {
        let root = tempfile::tempdir().unwrap();
        assert!(matches!(
            load_project_index(root.path()),
            ProjectIndex::Missing
        ));
    }

    #[test]
    fn a_saved_index_loads() {
        let root = tempfile::tempdir().unwrap();
        Index::empty(new_index_params())
            .save(&index_path(root.path()))
            .unwrap();
        assert!(
            matches!(load_project_index(root.path()), ProjectIndex::Loaded(index) if index.is_empty())
        );
    }

    #[test]
    fn a_damaged_index_is_moved_aside_not_lost() {
        let root = tempfile::tempdir().unwrap();
        let path = index_path(root.path());
        Index::empty(new_index_params()).save(&path).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let ProjectIndex::Corrupt { moved_to, .. } = load_project_index(root.path()) else {
            panic!("a flipped byte is corruption");
        };
        assert!(!path.exists());
        assert_eq!(std::fs::read(&moved_to).unwrap(), bytes);
        // A second damaged file gets its own name.
        std::fs::write(&path, &bytes).unwrap();
        let ProjectIndex::Corrupt {
            moved_to: second, ..
        } = load_project_index(root.path())
        else {
            panic!("still corruption");
        };
        assert_ne!(second, moved_to);
    }

    #[test]
    fn a_foreign_file_is_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let path = index_path(root.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"not an index at all").unwrap();
        assert!(matches!(
            load_project_index(root.path()),
            ProjectIndex::Unusable(_)
        ));
        assert!(path.exists());
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
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
                .for_file(&root.join(path))
                .pytest
                .functions()
                .to_vec()
        };
        let classes = |path: &str| {
            discoveries
                .for_file(&root.join(path))
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
            discovery(&root, &root.join("test_d.py")).pytest.classes(),
            ["test_*"]
        );
        let bare = tempfile::tempdir().unwrap();
        assert_eq!(
            discovery(bare.path(), &bare.path().join("test_e.py")),
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
            *discoveries.for_file(&root.path().join("test_x.py")),
            Discovery::default()
        );
        // A directory named pytest.ini is not a configuration file.
        assert_eq!(
            discoveries
                .for_file(&root.path().join("a/b/test_x.py"))
                .pytest
                .classes(),
            ["Check"]
        );
    }

    #[test]
    fn the_root_is_the_nearest_marked_ancestor() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join(".git")).unwrap();
        let nested = root.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(find_root(&nested), root.path());
    }
}
