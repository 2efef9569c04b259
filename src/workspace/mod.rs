//! A project's own index of labelled tests, `.flakesense/index` at the workspace root: where it
//! lives, how it is created, and what happens when it is damaged; and what the workspace's
//! files say about each other: how common each signal is among its tests, and the
//! [`surroundings`] a file's tests are read with.

pub mod cache;
mod others;
mod sources;
mod surroundings;
pub mod symbols;

pub use others::OtherFiles;
pub use sources::WorkspaceSources;
pub use surroundings::{SurroundingsReader, discovery, surroundings_file_names};

use std::path::{Path, PathBuf};

use crate::analysis;
use crate::embed::{Projection, Tokenizer};
use crate::files;
use crate::index::{Index, LoadError, ModelParams};
use crate::language::Language;
use crate::prevalence::Prevalence;
use crate::signals::Signals;

/// The project index's path, relative to the workspace root.
pub const INDEX_PATH: &str = ".flakesense/index";

pub fn index_path(root: &Path) -> PathBuf {
    root.join(INDEX_PATH)
}

/// The workspace root of a path: the nearest ancestor holding `.flakesense`, `flakesense.toml`
/// or `.git`, else the path itself (or its directory, for a file). Never the current directory:
/// a file checked from a home directory must not make the whole home the workspace.
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
                // Present even when it cannot be followed (a broken link, a loop): reading it
                // then fails with a clear error, the same in every command.
                .any(|marker| std::fs::symlink_metadata(directory.join(marker)).is_ok())
        })
        .unwrap_or(start)
        .to_path_buf()
}

/// A larger workspace (an editor opened on a home directory, a monorepo) is counted from this
/// many of its source files, evenly spaced in path order: shares of a few thousand files are
/// precise enough, and reading them stays a matter of seconds.
const MAX_COUNTED_FILES: usize = 5_000;

/// How common each signal is among the tests of a workspace's `sources` (Python files pytest
/// would not collect left out): what a shipped model's prior weighs signals by. Files that
/// cannot be read are passed over; whoever judges them reports why.
///
/// With `use_cache`, the counts of files unchanged since the last run come from the workspace's
/// cache ([`cache`]), and the cache is written back with this run's counts.
pub fn prevalence(sources: &WorkspaceSources, use_cache: bool) -> Prevalence {
    let root = sources.root();
    let paths = sources.paths();
    let surroundings = SurroundingsReader::new(root);
    let stride = paths.len().div_ceil(MAX_COUNTED_FILES).max(1);
    let sample: Vec<&PathBuf> = paths.iter().step_by(stride).collect();
    let cache = use_cache.then(|| cache::PrevalenceCache::read(root));
    let counted: Vec<(String, Option<cache::FileKey>, Prevalence, bool)> =
        files::map_files(sample, |path| {
            let relative = relative_path(root, path);
            let language = Language::from_path(path);
            let key = cache
                .as_ref()
                .zip(language)
                .and_then(|(cache, language)| cache.key(language, path));
            if let Some((cache, key)) = cache.as_ref().zip(key.as_ref())
                && let Some(cached) = cache.get(&relative, key)
            {
                return Some((relative, Some(*key), cached.clone(), false));
            }
            let file = files::read_source(path).ok()?;
            if file.lossy {
                return None;
            }
            let surroundings = surroundings.for_file(file.language, path);
            let counts = if surroundings
                .discovery
                .collects_walked(file.language, path, root)
            {
                let read =
                    analysis::read_tests(file.language, &relative, &file.text, &surroundings);
                tally(file.language, &read.signals)
            } else {
                Prevalence::default()
            };
            Some((relative, key, counts, true))
        })
        .into_iter()
        .flatten()
        .collect();
    if let Some(cache) = &cache
        && (counted.iter().any(|(_, _, _, fresh)| *fresh) || cache.len() != counted.len())
    {
        let kept: Vec<(String, cache::FileKey, Prevalence)> = counted
            .iter()
            .filter_map(|(relative, key, counts, _)| {
                Some((relative.clone(), (*key)?, counts.clone()))
            })
            .collect();
        cache.write(&kept);
    }
    counted
        .into_iter()
        .map(|(_, _, counts, _)| counts)
        .reduce(Prevalence::merged)
        .unwrap_or_default()
}

/// A path relative to the workspace root, `/`-separated, as ids and evidence show it.
pub fn relative_path(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// How common each signal is among some tests of one language in a workspace, given the
/// signals of each.
pub fn tally(language: Language, signals: &[Signals]) -> Prevalence {
    signals.iter().map(|signals| (language, signals)).collect()
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
    load_index(&index_path(root))
}

/// Loads the index at `path`, moving a damaged one aside.
pub fn load_index(path: &Path) -> ProjectIndex {
    if !path.exists() {
        return ProjectIndex::Missing;
    }
    match Index::load_unmapped(path) {
        Ok(index) => ProjectIndex::Loaded(Box::new(index)),
        Err(error) if error.is_corruption() => match quarantine(path) {
            Ok(moved_to) => ProjectIndex::Corrupt { error, moved_to },
            Err(_) => ProjectIndex::Unusable(error),
        },
        Err(error) => ProjectIndex::Unusable(error),
    }
}

/// The project index of the workspace at `root`, for a command that judges tests (`check`,
/// `predict`), if there is one. Read only: the language server moves a damaged index aside, a
/// command that judges must not touch the working tree, so it stops with an error instead.
pub fn read_project_index(root: &Path) -> anyhow::Result<Option<std::sync::Arc<Index>>> {
    let path = index_path(root);
    if !path.exists() {
        return Ok(None);
    }
    // `LoadError` names the file and its cause in its own message.
    let index = Index::load_unmapped(&path).map_err(|error| {
        anyhow::anyhow!(
            "the project index is unusable (delete it, or open the project in an editor running flakesense to move it aside): {error}"
        )
    })?;
    Ok(Some(std::sync::Arc::new(index)))
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
            .save(crate::files::write::Place::Named, &index_path(root.path()))
            .unwrap();
        assert!(
            matches!(load_project_index(root.path()), ProjectIndex::Loaded(index) if index.is_empty())
        );
    }

    #[test]
    fn a_damaged_index_is_moved_aside_not_lost() {
        let root = tempfile::tempdir().unwrap();
        let path = index_path(root.path());
        Index::empty(new_index_params())
            .save(crate::files::write::Place::Named, &path)
            .unwrap();
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

    #[test]
    fn the_root_is_the_nearest_marked_ancestor() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join(".git")).unwrap();
        let nested = root.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(find_root(&nested), root.path());
    }
}
