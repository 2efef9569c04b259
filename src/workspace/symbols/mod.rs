//! The workspace's symbols: which file defines each class, function, fixture and module, read
//! with the tags queries the grammars ship (`tags.scm`, tree-sitter's code-navigation queries)
//! and kept in the cache beside the signal shares ([`super::cache`]), per file by its size and
//! modification time, so a run reads again only the files that changed.
//!
//! A cache that cannot be read, is damaged or comes from another build is rebuilt silently.

mod tags;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

pub use tags::{Definition, DefinitionKind, definitions};

use super::cache;
use crate::files;
use crate::language::Language;

const MAGIC: &[u8; 8] = b"FLKSYMB1";

/// What a file's definitions were read from: its length and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    len: u64,
    modified_nanos: u128,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let metadata = std::fs::metadata(path).ok()?;
        let modified_nanos = metadata
            .modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_nanos();
        Some(Stamp {
            len: metadata.len(),
            modified_nanos,
        })
    }
}

/// One file's definitions as read.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileSymbols {
    stamp: Stamp,
    definitions: Vec<Definition>,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    build: u64,
    root: String,
    files: Vec<(String, FileSymbols)>,
}

/// The definitions of a workspace's source files, by file and by name.
#[derive(Debug, Default, Clone)]
pub struct Symbols {
    /// Repository-relative path, `/`-separated.
    files: HashMap<String, FileSymbols>,
    /// Per name, the files defining it (paths as in `files`).
    by_name: HashMap<String, Vec<String>>,
    /// The files of this read whose definitions were read anew, not taken from the cache.
    fresh: usize,
}

/// A place a name is defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<'a> {
    pub path: &'a str,
    pub definition: &'a Definition,
}

impl Symbols {
    /// The symbols of the workspace at `root`: those of the cache where a file is unchanged,
    /// read anew elsewhere, for the source files of `paths` (absolute, under `root`). The cache
    /// is written back when anything changed. Files that cannot be read define nothing. Without
    /// `use_cache` every file is read and no cache is touched.
    pub fn read(root: &Path, paths: &[PathBuf], use_cache: bool) -> Symbols {
        let place = cache::place(root, "symbols").filter(|_| use_cache);
        let mut cached = place
            .as_ref()
            .and_then(|(_, path)| read_stored(path))
            .filter(|stored| {
                stored.build == cache::build_key() && stored.root == cache::root_text(root)
            })
            .map(|stored| stored.files.into_iter().collect::<HashMap<_, _>>())
            .unwrap_or_default();
        let known = cached.len();
        let items: Vec<(String, &PathBuf, Option<FileSymbols>)> = paths
            .iter()
            .map(|path| {
                let relative = super::relative_path(root, path);
                let kept = cached.remove(&relative);
                (relative, path, kept)
            })
            .collect();
        let read: Vec<(String, FileSymbols, bool)> =
            files::map_files(items, |(relative, path, kept)| {
                let stamp = Stamp::of(path)?;
                if let Some(kept) = kept.filter(|kept| kept.stamp == stamp) {
                    return Some((relative, kept, false));
                }
                let definitions = read_definitions(path).unwrap_or_default();
                Some((relative, FileSymbols { stamp, definitions }, true))
            })
            .into_iter()
            .flatten()
            .collect();
        let fresh = read.iter().filter(|(_, _, fresh)| *fresh).count();
        let mut symbols = Symbols {
            fresh,
            ..Symbols::default()
        };
        for (relative, file, _) in read {
            symbols.insert(relative, file);
        }
        if let Some((base, path)) = &place
            && (fresh > 0 || known != symbols.files.len())
        {
            // Failing to write is not an error: the next run reads the files again.
            let _ = write_stored(base, path, &symbols.stored(root));
        }
        symbols
    }

    /// Reads the definitions of one file again (the language server, when a file is saved or
    /// changes on disk), or forgets the file when it is gone or is no source file.
    pub fn update(&mut self, root: &Path, path: &Path) {
        let relative = super::relative_path(root, path);
        self.remove(&relative);
        let Some(stamp) = Stamp::of(path) else {
            return;
        };
        if Language::from_path(path).is_none() {
            return;
        }
        let definitions = read_definitions(path).unwrap_or_default();
        self.insert(relative, FileSymbols { stamp, definitions });
    }

    /// Writes the symbols to the workspace's cache (the language server, after updates).
    pub fn save(&self, root: &Path) {
        if let Some((base, path)) = cache::place(root, "symbols") {
            let _ = write_stored(&base, &path, &self.stored(root));
        }
    }

    /// The places `name` is defined, as a definition of one of `kinds`, in files of `language`.
    pub fn find(&self, language: Language, name: &str, kinds: &[DefinitionKind]) -> Vec<Found<'_>> {
        let paths = self
            .by_name
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut found = Vec::new();
        for path in paths {
            if Language::from_path(Path::new(path)) != Some(language) {
                continue;
            }
            let Some(file) = self.files.get(path) else {
                continue;
            };
            found.extend(
                file.definitions
                    .iter()
                    .filter(|definition| {
                        definition.name == name && kinds.contains(&definition.kind)
                    })
                    .map(|definition| Found { path, definition }),
            );
        }
        found
    }

    /// How many files the symbols are of.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// How many files this read parsed anew (the others came from the cache).
    pub fn fresh(&self) -> usize {
        self.fresh
    }

    fn insert(&mut self, relative: String, file: FileSymbols) {
        let mut names: Vec<&str> = file.definitions.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            self.by_name
                .entry(name.to_string())
                .or_default()
                .push(relative.clone());
        }
        self.files.insert(relative, file);
    }

    fn remove(&mut self, relative: &str) {
        let Some(file) = self.files.remove(relative) else {
            return;
        };
        for definition in &file.definitions {
            if let Some(paths) = self.by_name.get_mut(&definition.name) {
                paths.retain(|path| path != relative);
                if paths.is_empty() {
                    self.by_name.remove(&definition.name);
                }
            }
        }
    }

    fn stored(&self, root: &Path) -> Stored {
        let mut files: Vec<(String, FileSymbols)> = self
            .files
            .iter()
            .map(|(path, file)| (path.clone(), file.clone()))
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        Stored {
            build: cache::build_key(),
            root: cache::root_text(root),
            files,
        }
    }
}

/// The definitions of the source file at `path`; `None` when it cannot be read, is not UTF-8,
/// or does not parse within the budget.
fn read_definitions(path: &Path) -> Option<Vec<Definition>> {
    let file = files::read_source(path).ok()?;
    if file.lossy {
        return None;
    }
    let tree = crate::extract::parse(file.language, &file.text, None)?;
    Some(definitions(file.language, &file.text, &tree))
}

fn read_stored(path: &Path) -> Option<Stored> {
    cache::read_cache_file(path, MAGIC)
}

fn write_stored(base: &Path, path: &Path, stored: &Stored) -> std::io::Result<()> {
    cache::write_cache_file(base, path, MAGIC, stored)
}

#[cfg(test)]
mod tests;
