//! A cache of the workspace's signal shares, `.flakesense/cache/prevalence`: per source file, the
//! counts the prior needs (tests, and tests per risk feature), keyed by the file's path, size and
//! modification time. A run reads it, counts again only the files that changed, and writes it
//! back atomically; `check`, `predict` and the language server share it (ruff keeps its cache
//! the same way). The directory keeps itself out of git with a `.gitignore` of its own.
//!
//! A Python file's counts also depend on the pytest configuration and `conftest.py` files of its
//! directories (its tests' fixtures), so its key holds their stamps too. The whole cache belongs
//! to one build: its key holds the release and the signal catalogues. A cache that cannot be
//! read, is damaged or comes from another build is rebuilt silently: it is never an error.

use std::collections::HashMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::language::Language;
use crate::prevalence::{Counts, Prevalence};

/// The cache file, relative to the workspace root.
pub const CACHE_PATH: &str = ".flakesense/cache/prevalence";

const MAGIC: &[u8; 8] = b"FLKSNSC1";
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
    files: Vec<(String, FileKey, Vec<Counts>)>,
}

/// The cached counts of one workspace, and the stamps of its Python surroundings.
pub struct PrevalenceCache {
    path: PathBuf,
    files: HashMap<String, (FileKey, Prevalence)>,
    /// Per directory, the stamps of its pytest configuration and `conftest.py` files, with those
    /// of its parents up to the root.
    directories: Mutex<HashMap<PathBuf, u64>>,
    root: PathBuf,
}

impl PrevalenceCache {
    /// The cache of the workspace at `root`, empty when there is none or it cannot be used.
    pub fn read(root: &Path) -> PrevalenceCache {
        let path = root.join(CACHE_PATH);
        let files = read_stored(&path)
            .filter(|stored| stored.build == build_key())
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
        let stored = Stored {
            build: build_key(),
            files: files
                .iter()
                .map(|(relative, key, prevalence)| (relative.clone(), *key, prevalence.counts()))
                .collect(),
        };
        let _ = write_stored(&self.path, &stored);
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

/// What the counts of this build depend on besides the files: the release, the signal
/// catalogues, and the binary itself (a rebuild during development may count differently).
fn build_key() -> u64 {
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
    let metadata = fs::metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_CACHE_BYTES {
        return None;
    }
    let bytes = fs::read(path).ok()?;
    let payload = bytes.strip_prefix(MAGIC)?;
    let limit = bincode::config::standard().with_limit::<{ 4 * MAX_CACHE_BYTES as usize }>();
    let (stored, read) = bincode::serde::decode_from_slice::<Stored, _>(payload, limit).ok()?;
    (read == payload.len()).then_some(stored)
}

fn write_stored(path: &Path, stored: &Stored) -> std::io::Result<()> {
    let directory = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(directory)?;
    let gitignore = directory.join(".gitignore");
    if !gitignore.exists() {
        fs::write(
            &gitignore,
            "# written by flakesense: the cache is not to be committed\n*\n",
        )?;
    }
    let mut bytes = MAGIC.to_vec();
    bincode::serde::encode_into_std_write(stored, &mut bytes, bincode::config::standard())
        .map_err(std::io::Error::other)?;
    // A name of this process and write: concurrent runs never write the same temporary file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let temporary = directory.join(format!(
        ".prevalence.{}.{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let written = (|| {
        let mut file = fs::File::create(&temporary)?;
        file.write_all(&bytes)?;
        fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests;
