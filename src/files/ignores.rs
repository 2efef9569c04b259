//! The ignore files a walk honours (`.ignore`, `.gitignore`, git's `info/exclude`), read by
//! flakesense itself and only from regular files: the walking crate would open a FIFO named
//! `.gitignore` and wait for a writer forever.
//!
//! The precedence is the walking crate's: a match in a `.ignore` (the nearest directory first)
//! decides before any `.gitignore`; `.gitignore` files count up to the directory holding `.git`,
//! whose `info/exclude` comes last.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// No ignore file comes near this; a larger one is refused like a device.
const MAX_IGNORE_BYTES: u64 = 4 << 20;

/// The ignore files of one directory.
struct Directory {
    ignore: Gitignore,
    gitignore: Gitignore,
    /// The directory holds `.git`: `.gitignore` files above it do not count.
    has_git: bool,
    exclude: Gitignore,
}

/// The ignore files of the directories a walk meets, each read once; and the ones refused.
pub struct Ignores {
    /// The directory relative paths start from.
    current: PathBuf,
    /// Per directory, its own ignore files and those of its ancestors, nearest first: what a
    /// path in it is matched against, each directory's files read once, the chain made once per
    /// directory instead of once per path.
    chains: Mutex<HashMap<PathBuf, Chain>>,
    refused: Mutex<Vec<(PathBuf, String)>>,
}

type Chain = Arc<Vec<Arc<Directory>>>;

impl Ignores {
    pub fn new() -> Ignores {
        Ignores {
            current: std::env::current_dir().unwrap_or_default(),
            chains: Mutex::default(),
            refused: Mutex::default(),
        }
    }

    /// Whether the ignore files of `path`'s directories leave it out.
    pub fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        // Absolute and without `.` parts, as the matchers' roots are.
        let path: PathBuf = self.current.join(path).components().collect();
        let chain = match path.parent() {
            Some(parent) => self.chain(parent),
            None => Chain::default(),
        };
        let decided = |matched: Match<&ignore::gitignore::Glob>| match matched {
            Match::None => None,
            Match::Ignore(_) => Some(true),
            Match::Whitelist(_) => Some(false),
        };
        if let Some(ignored) = chain
            .iter()
            .find_map(|directory| decided(directory.ignore.matched(&path, is_dir)))
        {
            return ignored;
        }
        for directory in chain.iter() {
            if let Some(ignored) = decided(directory.gitignore.matched(&path, is_dir)) {
                return ignored;
            }
            if directory.has_git {
                return decided(directory.exclude.matched(&path, is_dir)).unwrap_or(false);
            }
        }
        false
    }

    /// The ignore files that were not regular files, with what they were instead.
    pub fn take_refused(&self) -> Vec<(PathBuf, String)> {
        std::mem::take(&mut *lock(&self.refused))
    }

    /// The ignore files of `directory` and its ancestors, nearest first.
    fn chain(&self, directory: &Path) -> Chain {
        if let Some(chain) = lock(&self.chains).get(directory) {
            return chain.clone();
        }
        let mut chain = vec![self.directory(directory)];
        if let Some(parent) = directory.parent() {
            chain.extend(self.chain(parent).iter().cloned());
        }
        let chain = Arc::new(chain);
        lock(&self.chains).insert(directory.to_path_buf(), chain.clone());
        chain
    }

    fn directory(&self, directory: &Path) -> Arc<Directory> {
        let dot_git = directory.join(".git");
        let has_git = dot_git.exists();
        Arc::new(Directory {
            ignore: self.matcher(directory, &directory.join(".ignore")),
            gitignore: self.matcher(directory, &directory.join(".gitignore")),
            has_git,
            exclude: if dot_git.is_dir() {
                self.matcher(directory, &dot_git.join("info/exclude"))
            } else {
                Gitignore::empty()
            },
        })
    }

    /// The patterns of the ignore file at `file`, for paths below `directory`.
    fn matcher(&self, directory: &Path, file: &Path) -> Gitignore {
        // A missing file, the common case, costs one failed `lstat`-like call.
        if std::fs::symlink_metadata(file).is_err() {
            return Gitignore::empty();
        }
        let bytes = match super::read_regular(file, MAX_IGNORE_BYTES) {
            Ok(bytes) => bytes,
            Err(error) => {
                lock(&self.refused).push((file.to_path_buf(), error.to_string()));
                return Gitignore::empty();
            }
        };
        let mut builder = GitignoreBuilder::new(directory);
        for line in String::from_utf8_lossy(&bytes).lines() {
            // A line that is no valid pattern is passed over, as git passes it over.
            let _ = builder.add_line(Some(file.to_path_buf()), line);
        }
        builder.build().unwrap_or_else(|_| Gitignore::empty())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
