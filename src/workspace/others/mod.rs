//! The other files of a workspace that a file's tests reach: the files that define what its code
//! uses ([`context::wanted`]: base classes, helper modules, fixtures' plugin modules, the code
//! under test), found by path or through the workspace's [`Symbols`], and what those use in turn,
//! breadth first and bounded.
//!
//! Each file is read, parsed and scanned once per version (its stamp), however many test files
//! reach it; the language server keeps one [`OtherFiles`] for its whole life.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use super::WorkspaceSources;
use super::symbols::{DefinitionKind, Symbols};
use crate::analysis::ParsedFile;
use crate::context::{self, Wanted};
use crate::files;
use crate::labels::FileStamp;
use crate::language::Language;

/// Files are followed this many steps from the test's file: a base class's base class's file is
/// 2, what a helper module imports is 2, and so on.
pub const MAX_FILE_DEPTH: usize = 3;

/// At most this many other files per test file, the nearest (by steps) kept: a file whose
/// imports reach half the repository would otherwise be judged with all of it.
pub const MAX_OTHER_FILES: usize = 16;

/// Beyond this many files read, the parsed files are forgotten and read again when reached: a
/// language server open on a monorepo for a day must not keep every file it ever reached.
const MAX_KEPT_FILES: usize = 2_048;

/// How the workspace's symbols are known.
enum SymbolsState {
    /// Read on the first lookup that needs them, from the workspace's source files (`check`),
    /// with the cache or without it.
    OnDemand(Arc<WorkspaceSources>, bool),
    /// Not known yet: being read in the background (the language server). Lookups by name find
    /// nothing until then; files named by path are still found.
    Pending,
    Known(Arc<Symbols>),
}

/// A file as last read: its stamp then, and what it held with what it uses.
type Read = (
    Option<FileStamp>,
    Option<(Arc<ParsedFile>, Arc<Vec<Wanted>>)>,
);

/// Finds and reads the other files a workspace's files reach.
pub struct OtherFiles {
    root: PathBuf,
    symbols: RwLock<SymbolsState>,
    read: Mutex<HashMap<String, Read>>,
    /// A lookup by name found nothing because the symbols were pending: what was judged then
    /// is judged again once they are known.
    missed: AtomicBool,
}

impl std::fmt::Debug for OtherFiles {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("OtherFiles")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl OtherFiles {
    /// Reads the workspace's symbols when a lookup first needs them, from its `sources`, with
    /// the cache when `use_cache` (see [`Symbols::read`]).
    pub fn on_demand(sources: Arc<WorkspaceSources>, use_cache: bool) -> OtherFiles {
        let root = sources.root().to_path_buf();
        OtherFiles::with_state(&root, SymbolsState::OnDemand(sources, use_cache))
    }

    /// Symbols come later, through [`OtherFiles::set_symbols`].
    pub fn pending(root: &Path) -> OtherFiles {
        OtherFiles::with_state(root, SymbolsState::Pending)
    }

    fn with_state(root: &Path, state: SymbolsState) -> OtherFiles {
        OtherFiles {
            root: root.to_path_buf(),
            symbols: RwLock::new(state),
            read: Mutex::default(),
            missed: AtomicBool::new(false),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The symbols of the workspace's `sources`, read now (see [`Symbols::read`]) on a thread
    /// pool of their own.
    ///
    /// Not on rayon's shared pool, whose threads may be waiting for these very symbols (a check
    /// judging files in parallel), nor on the calling thread, which in a rayon worker would take
    /// up other files' work while it waits and could ask for the symbols again.
    pub fn read_symbols(sources: &WorkspaceSources, use_cache: bool) -> Symbols {
        let read = || Symbols::read(sources.root(), sources.paths(), use_cache);
        std::thread::scope(|scope| {
            let reading = scope.spawn(|| {
                match rayon::ThreadPoolBuilder::new()
                    .thread_name(|n| format!("flakesense-symbols-{n}"))
                    .build()
                {
                    Ok(pool) => pool.install(read),
                    Err(_) => read(),
                }
            });
            reading.join().unwrap_or_default()
        })
    }

    /// The symbols are known: lookups by name use them from now on. Whether a lookup missed
    /// them before, so that what it judged should be judged again.
    pub fn set_symbols(&self, symbols: Arc<Symbols>) -> bool {
        *self.symbols.write().unwrap_or_else(PoisonError::into_inner) =
            SymbolsState::Known(symbols);
        self.missed.swap(false, Ordering::SeqCst)
    }

    /// The symbols as known now; `None` while they are pending.
    pub fn symbols(&self) -> Option<Arc<Symbols>> {
        if let SymbolsState::Known(symbols) =
            &*self.symbols.read().unwrap_or_else(PoisonError::into_inner)
        {
            return Some(symbols.clone());
        }
        let mut state = self.symbols.write().unwrap_or_else(PoisonError::into_inner);
        match &*state {
            SymbolsState::Known(symbols) => Some(symbols.clone()),
            SymbolsState::Pending => None,
            SymbolsState::OnDemand(sources, use_cache) => {
                let symbols = Arc::new(OtherFiles::read_symbols(sources, *use_cache));
                *state = SymbolsState::Known(symbols.clone());
                Some(symbols)
            }
        }
    }

    /// Forgets what was read of the file at `path`, so the next read takes it anew (its stamp
    /// is checked anyway; a save of the same length within the clock's resolution is not seen).
    pub fn forget(&self, path: &Path) {
        let relative = super::relative_path(&self.root, path);
        self.read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&relative);
    }

    /// The files of the workspace that the `language` file at `path` (relative to the root)
    /// reaches, nearest first, read as its text `source` (parsed as `tree`) uses them, and, for
    /// Python, as its `conftests` use them (the `pytest_plugins` they name). Never the file
    /// itself or one of `conftests`; only files of `language`.
    pub fn reached(
        &self,
        language: Language,
        path: &str,
        source: &str,
        tree: &tree_sitter::Tree,
        conftests: &[Arc<ParsedFile>],
    ) -> Vec<Arc<ParsedFile>> {
        let file = context::SourceFile { source, tree };
        let mut queue: VecDeque<(Wanted, usize, String)> = VecDeque::new();
        for wanted in context::wanted(language, path, file) {
            queue.push_back((wanted, 1, path.to_string()));
        }
        for conftest in conftests {
            let file = context::SourceFile {
                source: &conftest.text,
                tree: &conftest.tree,
            };
            for wanted in context::wanted(language, &conftest.path, file) {
                queue.push_back((wanted, 1, conftest.path.clone()));
            }
        }
        let mut seen: HashSet<String> = std::iter::once(path.to_string())
            .chain(conftests.iter().map(|conftest| conftest.path.clone()))
            .collect();
        let mut found = Vec::new();
        while let Some((wanted, depth, from)) = queue.pop_front() {
            if found.len() >= MAX_OTHER_FILES {
                break;
            }
            let Some(relative) = self.find(language, &wanted, &from) else {
                continue;
            };
            if !seen.insert(relative.clone()) {
                continue;
            }
            let Some((parsed, uses)) = self.read_file(language, &relative) else {
                continue;
            };
            found.push(parsed);
            if depth < MAX_FILE_DEPTH {
                for wanted in uses.iter() {
                    queue.push_back((wanted.clone(), depth + 1, relative.clone()));
                }
            }
        }
        found
    }

    /// The file (relative to the root) that defines what `wanted` names for the file at `from`.
    fn find(&self, language: Language, wanted: &Wanted, from: &str) -> Option<String> {
        match wanted {
            Wanted::File(candidates) => candidates
                .iter()
                .filter_map(|candidate| normalized(candidate))
                .find(|candidate| self.root.join(candidate).is_file()),
            Wanted::Type(name) => self.nearest(
                language,
                name,
                &[DefinitionKind::Class, DefinitionKind::Interface],
                from,
            ),
            Wanted::Function(name) => self.nearest(
                language,
                name,
                &[DefinitionKind::Function, DefinitionKind::Method],
                from,
            ),
        }
    }

    /// Of the files defining `name` as one of `kinds`, the one nearest `from` (most directories
    /// in common), then a Java file named after it, then the first by path.
    fn nearest(
        &self,
        language: Language,
        name: &str,
        kinds: &[DefinitionKind],
        from: &str,
    ) -> Option<String> {
        let Some(symbols) = self.symbols() else {
            self.missed.store(true, Ordering::SeqCst);
            return None;
        };
        let found = symbols.find(language, name, kinds);
        let directories = |path: &str| -> Vec<String> {
            let mut segments: Vec<String> = path.split('/').map(str::to_string).collect();
            segments.pop();
            segments
        };
        let from_directories = directories(from);
        let shared = |path: &str| {
            directories(path)
                .iter()
                .zip(&from_directories)
                .take_while(|(a, b)| a == b)
                .count()
        };
        let named_after = |path: &str| {
            Path::new(path)
                .file_stem()
                .is_some_and(|stem| stem.to_str() == Some(name))
        };
        found
            .iter()
            .map(|found| found.path)
            .filter(|path| *path != from)
            .min_by(|a, b| {
                shared(b)
                    .cmp(&shared(a))
                    .then(named_after(b).cmp(&named_after(a)))
                    .then(a.cmp(b))
            })
            .map(str::to_string)
    }

    /// The file at `relative`, read, parsed and scanned, with what it uses; `None` when it is
    /// not a readable UTF-8 source file of `language`.
    fn read_file(
        &self,
        language: Language,
        relative: &str,
    ) -> Option<(Arc<ParsedFile>, Arc<Vec<Wanted>>)> {
        let path = self.root.join(relative);
        let stamp = FileStamp::of(&path);
        let known = self
            .read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(relative)
            .cloned();
        if let Some((known_stamp, read)) = known
            && known_stamp == stamp
        {
            return read.filter(|(parsed, _)| parsed.language == language);
        }
        let read = stamp
            .and_then(|_| files::read_source(&path).ok())
            .filter(|file| !file.lossy)
            .and_then(|file| ParsedFile::new(file.language, relative.to_string(), file.text))
            .map(|parsed| {
                let uses = context::wanted(
                    parsed.language,
                    relative,
                    context::SourceFile {
                        source: &parsed.text,
                        tree: &parsed.tree,
                    },
                );
                (Arc::new(parsed), Arc::new(uses))
            });
        let mut kept = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() >= MAX_KEPT_FILES {
            kept.clear();
        }
        kept.insert(relative.to_string(), (stamp, read.clone()));
        read.filter(|(parsed, _)| parsed.language == language)
    }
}

/// A candidate path with its `.` and `..` segments resolved, `/`-separated; `None` when it
/// leaves the workspace or is absolute: nothing outside the root is read.
fn normalized(candidate: &str) -> Option<String> {
    let mut segments: Vec<&str> = Vec::new();
    for component in Path::new(candidate).components() {
        match component {
            Component::Normal(segment) => segments.push(segment.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                segments.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!segments.is_empty()).then(|| segments.join("/"))
}

#[cfg(test)]
mod tests;
