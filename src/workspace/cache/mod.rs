//! A cache of the workspace's signal shares: per source file, the counts the prior needs (tests,
//! and tests per risk feature), keyed by the file's path, size and modification time. A run reads
//! it, counts again only the files that changed, and writes it back atomically; `check`,
//! `predict` and the language server share it.
//!
//! It lives outside the working tree, so that checking writes nothing there ([`location`]): in
//! the git directory of the repository holding the workspace (`.git/flakesense/`, per worktree),
//! else in the user's cache directory (`$XDG_CACHE_HOME/flakesense/`, else `~/.cache/flakesense/`).
//!
//! A Python file's counts also depend on the pytest configuration and `conftest.py` files of its
//! directories (its tests' fixtures), so its key holds their stamps too. The whole cache belongs
//! to one build: its key holds the release and the signal catalogues. A cache that cannot be
//! read, is damaged or comes from another build is rebuilt silently: it is never an error.

use std::collections::HashMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::language::Language;
use crate::prevalence::{Counts, Prevalence};

const MAGIC: &[u8; 8] = b"FLKSNSC2";
/// No cache this tool writes comes near this; a larger file is not read.
const MAX_CACHE_BYTES: u64 = 256 << 20;

/// What a file's counts were made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileKey {
    len: u64,
    modified_nanos: u128,
    /// For a Python file, the stamps of the pytest configuration and `conftest.py` files of its
    /// directories; 0 for other files.
    surroundings: u64,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    build: u64,
    /// The workspace the counts are of: a cache file named by a hash of its path is never taken
    /// for another's.
    root: String,
    files: Vec<(String, FileKey, Vec<Counts>)>,
}

/// Where the cache of the workspace at `root` lives, or `None` when there is nowhere to keep it
/// (no git directory, no home): then every run counts afresh.
///
/// In a git working tree, the git directory (a worktree's own, which `.git` names when it is a
/// file): `flakesense/prevalence` for the workspace at the top of the working tree,
/// `flakesense/prevalence-HASH` for one below it (a monorepo's `flakesense.toml` in a
/// subdirectory). Elsewhere the user's cache directory, `flakesense/workspaces/NAME-HASH`.
pub fn location(root: &Path) -> Option<PathBuf> {
    place(root, "prevalence").map(|(_, path)| path)
}

/// Where the cache file `name` of the workspace at `root` lives ([`location`] is `prevalence`'s),
/// and the directory it is written below with no symbolic link from there down
/// ([`crate::files::write::Place::Below`]): the git directory, or the user's cache directory.
pub(super) fn place(root: &Path, name: &str) -> Option<(PathBuf, PathBuf)> {
    let file_name = name;
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    if let Some((top, git_directory)) = git_directory(&root) {
        let relative = root.strip_prefix(&top).unwrap_or(Path::new(""));
        let name = if relative.as_os_str().is_empty() {
            file_name.to_string()
        } else {
            format!(
                "{file_name}-{:016x}",
                stable_hash(&relative.to_string_lossy())
            )
        };
        let path = git_directory.join("flakesense").join(name);
        return Some((git_directory, path));
    }
    let name = root
        .file_name()
        .map(|name| {
            name.to_string_lossy()
                .replace(|c: char| !c.is_alphanumeric(), "_")
        })
        .unwrap_or_default();
    let hash = stable_hash(&root.to_string_lossy());
    let base = user_cache_directory()?;
    let path = base
        .join("flakesense/workspaces")
        .join(format!("{name}-{hash:016x}"))
        .join(file_name);
    Some((base, path))
}

/// The top of the git working tree holding `directory` and its git directory: `.git` itself, or
/// the directory a `.git` file names (`gitdir: ...`, in a worktree or a submodule).
fn git_directory(directory: &Path) -> Option<(PathBuf, PathBuf)> {
    directory.ancestors().find_map(|top| {
        let dot_git = top.join(".git");
        if dot_git.is_dir() {
            return Some((top.to_path_buf(), dot_git));
        }
        let text = crate::files::read_regular(&dot_git, 4096).ok()?;
        let named = String::from_utf8_lossy(&text);
        let named = named.trim().strip_prefix("gitdir:")?.trim();
        let named = top.join(named);
        // Only a git directory (it holds `HEAD`): a `.git` file naming any other directory
        // would have the cache written there.
        named
            .join("HEAD")
            .is_file()
            .then(|| (top.to_path_buf(), named))
    })
}

/// The user's cache directory: `$XDG_CACHE_HOME`, else `~/.cache` (`%LOCALAPPDATA%` on Windows).
fn user_cache_directory() -> Option<PathBuf> {
    let absolute = |variable: &str| {
        std::env::var_os(variable)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".cache")))
        .or_else(|| absolute("LOCALAPPDATA"))
}

/// FNV-1a: the same on every platform and release, so a workspace keeps its cache's name.
fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The cached counts of one workspace, and the stamps of its Python surroundings.
pub struct PrevalenceCache {
    /// Where the cache is read from and written to, and the directory it is written below;
    /// `None`: nowhere.
    path: Option<(PathBuf, PathBuf)>,
    files: HashMap<String, (FileKey, Prevalence)>,
    /// Per directory, the stamps of its pytest configuration and `conftest.py` files, with those
    /// of its parents up to the root.
    directories: Mutex<HashMap<PathBuf, u64>>,
    root: PathBuf,
}

impl PrevalenceCache {
    /// The cache of the workspace at `root`, kept at its [`location`]; empty when there is none
    /// or it cannot be used.
    pub fn read(root: &Path) -> PrevalenceCache {
        let path = place(root, "prevalence");
        let files = path
            .as_ref()
            .and_then(|(_, path)| read_stored(path))
            .filter(|stored| stored.build == build_key() && stored.root == root_text(root))
            .map(|stored| {
                stored
                    .files
                    .into_iter()
                    .filter_map(|(relative, key, counts)| {
                        Some((relative, (key, Prevalence::from_counts(&counts)?)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        PrevalenceCache {
            path,
            files,
            directories: Mutex::default(),
            root: root.to_path_buf(),
        }
    }

    /// The key of the file at `path` (`relative` to the root) as it is now; `None` when it
    /// cannot be read.
    pub fn key(&self, language: Language, path: &Path) -> Option<FileKey> {
        let metadata = fs::metadata(path).ok()?;
        let modified_nanos = metadata
            .modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_nanos();
        let surroundings = match language {
            Language::Python => self.directory_stamps(path.parent()?),
            Language::Java | Language::Rust => 0,
        };
        Some(FileKey {
            len: metadata.len(),
            modified_nanos,
            surroundings,
        })
    }

    /// How many files the cache holds.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The cached counts of a file, when its key is the one they were made from.
    pub fn get(&self, relative: &str, key: &FileKey) -> Option<&Prevalence> {
        self.files
            .get(relative)
            .filter(|(cached, _)| cached == key)
            .map(|(_, prevalence)| prevalence)
    }

    /// Writes the counts of this run's files (and only those: files deleted or renamed since
    /// drop out) atomically. Failing to write is not an error: the next run counts again.
    pub fn write(&self, files: &[(String, FileKey, Prevalence)]) {
        let Some((base, path)) = &self.path else {
            return;
        };
        let stored = Stored {
            build: build_key(),
            root: root_text(&self.root),
            files: files
                .iter()
                .map(|(relative, key, prevalence)| (relative.clone(), *key, prevalence.counts()))
                .collect(),
        };
        let _ = write_stored(base, path, &stored);
    }

    fn directory_stamps(&self, directory: &Path) -> u64 {
        if let Some(&stamps) = self
            .directories
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(directory)
        {
            return stamps;
        }
        let mut hasher = std::hash::DefaultHasher::new();
        if directory != self.root
            && directory.starts_with(&self.root)
            && let Some(parent) = directory.parent()
        {
            self.directory_stamps(parent).hash(&mut hasher);
        }
        for name in super::surroundings_file_names() {
            if let Ok(metadata) = fs::metadata(directory.join(name)) {
                name.hash(&mut hasher);
                metadata.len().hash(&mut hasher);
                metadata.modified().ok().hash(&mut hasher);
            }
        }
        let stamps = hasher.finish();
        self.directories
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(directory.to_path_buf(), stamps);
        stamps
    }
}

/// The workspace root as a cache file records it.
pub(super) fn root_text(root: &Path) -> String {
    root.canonicalize()
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// What the counts of this build depend on besides the files: the release, the signal
/// catalogues, and the binary itself (a rebuild during development may count differently).
pub(super) fn build_key() -> u64 {
    static KEY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *KEY.get_or_init(|| {
        let mut hasher = std::hash::DefaultHasher::new();
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        for language in Language::ALL {
            crate::signals::catalogue::source_of(language).hash(&mut hasher);
        }
        if let Ok(metadata) = std::env::current_exe().and_then(fs::metadata) {
            metadata.len().hash(&mut hasher);
            metadata.modified().ok().hash(&mut hasher);
        }
        hasher.finish()
    })
}

fn read_stored(path: &Path) -> Option<Stored> {
    read_cache_file(path, MAGIC)
}

fn write_stored(base: &Path, path: &Path, stored: &Stored) -> std::io::Result<()> {
    write_cache_file(base, path, MAGIC, stored)
}

/// A cache file's value, when it starts with `magic` and decodes whole; `None` otherwise.
pub(super) fn read_cache_file<T: serde::de::DeserializeOwned>(
    path: &Path,
    magic: &[u8; 8],
) -> Option<T> {
    let bytes = crate::files::read_regular(path, MAX_CACHE_BYTES).ok()?;
    let payload = bytes.strip_prefix(magic)?;
    let limit = bincode::config::standard().with_limit::<{ 4 * MAX_CACHE_BYTES as usize }>();
    let (stored, read) = bincode::serde::decode_from_slice::<T, _>(payload, limit).ok()?;
    (read == payload.len()).then_some(stored)
}

/// Writes `value` after `magic` to the cache file at `path`, below `base`, atomically.
pub(super) fn write_cache_file<T: Serialize>(
    base: &Path,
    path: &Path,
    magic: &[u8; 8],
    value: &T,
) -> std::io::Result<()> {
    let mut bytes = magic.to_vec();
    bincode::serde::encode_into_std_write(value, &mut bytes, bincode::config::standard())
        .map_err(std::io::Error::other)?;
    crate::files::write::write_atomically(crate::files::write::Place::Below(base), path, &bytes)
}

#[cfg(test)]
mod tests;
