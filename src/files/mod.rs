//! Reading source files from disk for the command-line front ends: language detection, size
//! limits, binary and non-UTF-8 content. The language server gets its text from the editor.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::analysis::MAX_FILE_BYTES;
use crate::language::Language;

mod ignores;
mod prune;
pub mod write;

pub use prune::{Directories, is_hidden, tool_directory};

/// Fewer files than this are read and judged on the calling thread: the thread pool's start, and
/// the memory each of its threads takes for itself (a stack, an allocator arena), cost a short
/// check more than the threads save.
pub const PARALLEL_FILES: usize = 8;

/// `f` of each item, in order: on every core when there are [`PARALLEL_FILES`] items or more,
/// else on the calling thread.
pub fn map_files<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    if items.len() >= PARALLEL_FILES {
        items.into_par_iter().map(f).collect()
    } else {
        items.into_iter().map(f).collect()
    }
}

/// A source file read for analysis.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub language: Language,
    pub text: String,
    /// Invalid UTF-8 was replaced; byte offsets refer to the repaired text.
    pub lossy: bool,
}

/// Why a file was not analysed. Each is reported, none is fatal.
#[derive(Debug, thiserror::Error)]
pub enum Skipped {
    #[error("not a Java, Python or Rust file")]
    NotSource,
    #[error("larger than {} MB ({size} bytes)", MAX_FILE_BYTES / (1024 * 1024))]
    TooLarge { size: u64 },
    #[error("binary content")]
    Binary,
    #[error("cannot read: {0}")]
    Unreadable(#[from] std::io::Error),
}

/// Recognises a file's language by its extension, or by a `#!` line for extension-less scripts.
pub fn detect_language(path: &Path, first_bytes: &[u8]) -> Option<Language> {
    if let Some(language) = Language::from_path(path) {
        return Some(language);
    }
    if path.extension().is_some() {
        return None;
    }
    let first_line = first_bytes.split(|&byte| byte == b'\n').next()?;
    Language::from_shebang(std::str::from_utf8(first_line).ok()?)
}

/// Reads a whole file that must be a regular file of at most `limit` bytes, as settings, models,
/// indexes and history files are read: a device (`/dev/zero`) would be read until memory runs
/// out, and a FIFO would block until someone writes to it.
pub fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let (file, metadata) = open_regular(path)?;
    let too_large = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than the limit of {} MB", limit >> 20),
        )
    };
    if metadata.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    // At most one byte past the limit: the file may have grown since `metadata`.
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Opens a file for reading if it is a regular file (links followed), with its metadata. The file
/// is opened without waiting (`O_NONBLOCK`), then checked: a FIFO put in place of a checked file
/// cannot block the open either.
pub fn open_regular(path: &Path) -> std::io::Result<(fs::File, fs::Metadata)> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    #[cfg(not(unix))]
    regular_metadata(path)?;
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    check_regular(&metadata)?;
    Ok((file, metadata))
}

/// The metadata of a regular file (links followed), or an error naming what the path is instead.
pub fn regular_metadata(path: &Path) -> std::io::Result<fs::Metadata> {
    let metadata = fs::metadata(path)?;
    check_regular(&metadata)?;
    Ok(metadata)
}

fn check_regular(metadata: &fs::Metadata) -> std::io::Result<()> {
    if metadata.is_file() {
        return Ok(());
    }
    let what = if metadata.is_dir() {
        "a directory"
    } else {
        "not a regular file (a device, a FIFO or a socket)"
    };
    Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, what))
}

/// Reads a source file, refusing huge and binary files, and anything but a regular file.
pub fn read_source(path: &Path) -> Result<SourceFile, Skipped> {
    let (file, metadata) = open_regular(path)?;
    if metadata.len() > MAX_FILE_BYTES as u64 {
        return Err(Skipped::TooLarge {
            size: metadata.len(),
        });
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    // Read at most one byte past the limit: the file may have grown since `metadata`.
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    source_from_bytes(path, &bytes)
}

/// Applies [`read_source`]'s checks to content read elsewhere, such as a blob from git's index:
/// the language from `path` and the first line, the size limit, binary and non-UTF-8 content.
pub fn source_from_bytes(path: &Path, bytes: &[u8]) -> Result<SourceFile, Skipped> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Skipped::TooLarge {
            size: bytes.len() as u64,
        });
    }
    let language = detect_language(path, bytes).ok_or(Skipped::NotSource)?;
    // Text files do not hold NUL bytes; object files and images do, early on.
    if bytes.iter().take(8192).any(|&byte| byte == 0) {
        return Err(Skipped::Binary);
    }
    let (text, lossy) = crate::extract::decode_source(bytes);
    Ok(SourceFile {
        language,
        text,
        lossy,
    })
}

/// A problem met while walking directories; reported, then the walk goes on.
#[derive(Debug)]
pub struct WalkProblem {
    pub path: Option<std::path::PathBuf>,
    pub message: String,
    pub kind: WalkProblemKind,
}

/// What went wrong. Only [`WalkProblemKind::Unreadable`] is an IO failure; the others are
/// properties of the tree, skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkProblemKind {
    /// A symbolic link leads back to one of its ancestors, or to itself.
    Loop,
    /// A symbolic link to nothing.
    BrokenLink,
    /// A symbolic link to a place outside the tree being walked: the walk does not leave it.
    LinkOutside,
    Unreadable,
    /// An ignore file that is not a regular file: not read, so what it names is walked.
    IgnoreFile,
}

/// The Java, Python and Rust files under `roots` (files given directly are kept whatever their
/// name). `.gitignore`, `.ignore` and git's exclude files are honoured, hidden directories,
/// virtual environments and build tools' output skipped ([`tool_directory`]), and paths
/// matching `exclude` (relative to `base`) left out. Symbolic links are
/// followed only while they stay inside `base` (or inside the root named, when that lies
/// outside `base`); links leading out, broken links and loops are reported and skipped. The
/// order is sorted, so output is stable.
pub fn walk_sources(
    roots: &[std::path::PathBuf],
    base: &Path,
    exclude: &globset::GlobSet,
) -> (Vec<std::path::PathBuf>, Vec<WalkProblem>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let excluded = |path: &Path| {
        let relative = path.strip_prefix(base).unwrap_or(path);
        exclude.is_match(relative)
    };
    for root in roots {
        if root.is_file() {
            if !excluded(root) {
                found.push(root.clone());
            }
            continue;
        }
        if !root.exists() {
            problems.push(WalkProblem {
                path: Some(root.clone()),
                message: "no such file or directory".to_string(),
                kind: WalkProblemKind::Unreadable,
            });
            continue;
        }
        let canonical_root = root.canonicalize().unwrap_or_else(|_| root.clone());
        let boundary = match base.canonicalize() {
            Ok(base) if canonical_root.starts_with(&base) => base,
            _ => canonical_root,
        };
        let outside: Arc<Mutex<Vec<WalkProblem>>> = Arc::default();
        let record = outside.clone();
        let ignores = Arc::new(ignores::Ignores::new());
        let ignoring = ignores.clone();
        // The repository's ignore files are read here ([`ignores`]), never by the walking crate,
        // which would block on a FIFO; the user's own global excludes it reads itself.
        let walker = ignore::WalkBuilder::new(root)
            .follow_links(true)
            .require_git(false)
            .ignore(false)
            .git_ignore(false)
            .git_exclude(false)
            .parents(false)
            .filter_entry(move |entry| {
                let is_directory = entry.file_type().is_some_and(|kind| kind.is_dir());
                if is_directory && entry.depth() > 0 && tool_directory(entry.path()).is_some() {
                    return false;
                }
                if ignoring.ignored(entry.path(), is_directory) {
                    return false;
                }
                if !entry.path_is_symlink() {
                    return true;
                }
                // Broken links and loops fail to resolve here and are reported by the walk.
                match entry.path().canonicalize() {
                    Ok(target) if !target.starts_with(&boundary) => {
                        record
                            .lock()
                            .unwrap_or_else(|poisoned| poisoned.into_inner())
                            .push(WalkProblem {
                                path: Some(entry.path().to_path_buf()),
                                message: format!(
                                    "a symbolic link out of the tree, to {}",
                                    crate::terminal::escape(&target.display().to_string())
                                ),
                                kind: WalkProblemKind::LinkOutside,
                            });
                        false
                    }
                    _ => true,
                }
            })
            .build();
        for entry in walker {
            match entry {
                Ok(entry) => {
                    let path = entry.path();
                    if entry.file_type().is_some_and(|kind| kind.is_file())
                        && Language::from_path(path).is_some()
                        && !excluded(path)
                    {
                        found.push(path.to_path_buf());
                    }
                }
                Err(error) => {
                    let path = walk_error_path(&error);
                    let kind = if is_loop(&error) {
                        WalkProblemKind::Loop
                    } else {
                        path.as_deref()
                            .map_or(WalkProblemKind::Unreadable, link_problem)
                    };
                    problems.push(WalkProblem {
                        path,
                        message: error.to_string(),
                        kind,
                    });
                }
            }
        }
        problems.append(
            &mut outside
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        problems.extend(
            ignores
                .take_refused()
                .into_iter()
                .map(|(path, error)| WalkProblem {
                    path: Some(path),
                    message: format!("ignore file not read: {error}"),
                    kind: WalkProblemKind::IgnoreFile,
                }),
        );
    }
    found.sort();
    found.dedup();
    (found, problems)
}

fn walk_error_path(error: &ignore::Error) -> Option<std::path::PathBuf> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}

/// What is wrong with a path the walk could not follow: a broken link or a link loop (to
/// itself, which the walk reports as an IO error), or an unreadable file or directory.
fn link_problem(path: &Path) -> WalkProblemKind {
    let is_link =
        fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink());
    match fs::metadata(path) {
        Err(error) if is_link && error.kind() == std::io::ErrorKind::NotFound => {
            WalkProblemKind::BrokenLink
        }
        // ELOOP, "too many levels of symbolic links", the one other way a link fails to resolve.
        Err(_) if is_link => WalkProblemKind::Loop,
        _ => WalkProblemKind::Unreadable,
    }
}

fn is_loop(error: &ignore::Error) -> bool {
    match error {
        ignore::Error::Loop { .. } => true,
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => is_loop(err),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
