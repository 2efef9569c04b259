//! The project's labels, `.flakesense/index`: the one way to write them.
//!
//! Several processes write the same index: two language servers on one workspace (eglot starts
//! one per major mode, two editor windows do the same), `flakesense train --repo`, a command that
//! records what it observed. Each writer takes an exclusive lock on a file beside the index
//! (`index.lock`), reads the index as it is on disk at that moment, applies its own change and
//! renames a new file over the old one before it lets go of the lock. A writer therefore never
//! writes back a stale copy, and no label another process recorded is lost. Readers need no
//! lock: the rename replaces the file whole, so a reader sees the old index or the new one.
//!
//! [`record`] is the function other code calls to record labels; [`update`] is the locked
//! read-modify-write underneath, for writers that rebuild the whole index.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result, bail};

use crate::category::Category;
use crate::embed::TokenBag;
use crate::extract::TestMethod;
use crate::files::write::{self, Place};
use crate::index::{Entry, EntryRef, Index, IndexWriter, Label, LoadError, NewEntry, Origin};
use crate::workspace::{self, ProjectIndex};

/// A label to record for one test of the workspace.
#[derive(Debug, Clone)]
pub struct TestLabel {
    /// The test as extraction found it; its id names the entry, its code is tokenised as
    /// `train --repo` tokenises it (flakiness markers left out).
    pub test: TestMethod,
    /// The test's file relative to the workspace root, `/`-separated.
    pub path: String,
    /// [`Label::Flaky`] or [`Label::Stable`]; [`Label::Unlabelled`] takes a label back (the test
    /// stays in the index as a similar test, naming no verdict).
    pub label: Label,
    /// For a flaky test, its likely causes; ignored for others.
    pub categories: Vec<Category>,
    /// Who gave the label: [`Origin::Manual`] for a person, whose labels a later `train --repo`
    /// keeps; [`Origin::History`] for what a command observed.
    pub origin: Origin,
    /// What the entry's `source` says: `editor`, `confirm`, ...
    pub source: String,
}

/// What [`record`] did.
#[derive(Debug)]
pub struct Recorded {
    /// The index as written.
    pub index: Index,
    /// Where the file is.
    pub path: PathBuf,
    /// The file as written, for a reader that wants to know whether it changed since.
    pub stamp: Option<FileStamp>,
    /// A damaged index found in its place was moved here (and why it was damaged); the new
    /// index holds only the labels of this call.
    pub moved_aside: Option<(LoadError, PathBuf)>,
    /// Per label given, in order: whether it was written ([`record_with`] may keep an entry).
    pub written: Vec<bool>,
}

/// Records labels in the index of the workspace at `root`, creating it on first use. Holds the
/// index's lock while it reads the file as it is on disk, changes or adds each test's entry and
/// writes the file atomically, so concurrent writers in other processes lose nothing.
///
/// Refuses (and leaves alone) a file that is not an index or comes from a newer release; moves a
/// damaged one aside as `index.corrupt-N`, as the language server does.
pub fn record(root: &Path, labels: &[TestLabel]) -> Result<Recorded> {
    record_with(root, labels, |_, label, _| Some(label.clone()))
}

/// [`record`], with a say for each label over the test's entry as it is on disk under the lock:
/// `decide` (given the label's position, the label and the entry) returns the label to write
/// (the one given, or one made from both), or `None` to keep the entry as it is. A writer whose
/// evidence may be weaker than what is stored decides here, where no other process can change
/// the entry meanwhile. When nothing is to be written, the file is left as it is (and not made),
/// but for a damaged one, which is replaced by an empty index as [`record`] always does.
pub fn record_with(
    root: &Path,
    labels: &[TestLabel],
    mut decide: impl FnMut(usize, &TestLabel, Option<EntryRef<'_>>) -> Option<TestLabel>,
) -> Result<Recorded> {
    let path = workspace::index_path(root);
    let project = project_name(root);
    update(Place::Below(root), &path, |current| {
        let (base, moved_aside) = match current {
            ProjectIndex::Missing => (None, None),
            ProjectIndex::Loaded(index) => (Some(*index), None),
            ProjectIndex::Corrupt { error, moved_to } => (None, Some((error, moved_to))),
            ProjectIndex::Unusable(error) => {
                bail!("{error}; not touching it: labels cannot be recorded until it is fixed or removed")
            }
        };
        let decided: Vec<Option<TestLabel>> = labels
            .iter()
            .enumerate()
            .map(|(position, label)| {
                let existing = base.as_ref().and_then(|index| {
                    index
                        .position(&label.test.id)
                        .map(|position| index.entry(position))
                });
                decide(position, label, existing)
            })
            .collect();
        let written: Vec<bool> = decided.iter().map(Option::is_some).collect();
        if !written.contains(&true) && moved_aside.is_none() {
            // Nothing to change: the file stays as it is, or is not made.
            let index = base.unwrap_or_else(|| Index::empty(workspace::new_index_params()));
            return Ok((None, (index, moved_aside, written)));
        }
        let mut writer = match &base {
            Some(index) => IndexWriter::from_index(index),
            None => IndexWriter::new(workspace::new_index_params()),
        };
        for label in decided.iter().flatten() {
            let entry = entry(label, &project);
            let bag = bag(writer.params().tokenizer, &label.test);
            writer.upsert(entry, &bag);
        }
        let index = writer.finish();
        Ok((Some(index.clone()), (index, moved_aside, written)))
    })
    .map(|((index, moved_aside, written), stamp)| Recorded {
        index,
        stamp: stamp.or_else(|| FileStamp::of(&path)),
        path: path.clone(),
        moved_aside,
        written,
    })
}

/// The entry a label makes: the one way a test's label becomes an index entry.
fn entry(label: &TestLabel, project: &str) -> Entry {
    let categories: &[Category] = if label.label.is_flaky() {
        &label.categories
    } else {
        &[]
    };
    Entry::new(NewEntry {
        id: &label.test.id,
        project,
        source: &label.source,
        language: label.test.language,
        label: label.label,
        categories,
        origin: label.origin,
        path: Some(&label.path),
        code: Some(&label.test.code),
    })
}

/// The test's tokens as `train --repo` counts them.
fn bag(tokenizer: crate::embed::Tokenizer, test: &TestMethod) -> TokenBag {
    TokenBag::from_code(
        tokenizer,
        test.language,
        &crate::history::tokenised_code(test),
    )
}

/// The `project` of the entries a workspace's labels make: the workspace folder's name.
pub fn project_name(root: &Path) -> String {
    root.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".to_string())
}

/// Runs `change` on the index at `path` as it is on disk, holding the index's exclusive lock;
/// the index `change` returns (if any) is written atomically before the lock is let go. Returns
/// what `change` returned, and the written file's stamp. The lock, the index and
/// `.flakesense/.gitignore` are written only as `place` allows ([`crate::files::write`]): a
/// workspace's index through no link.
///
/// `change` is given the file as [`workspace::load_index`] finds it: a damaged file has been
/// moved aside already.
pub fn update<T>(
    place: Place,
    path: &Path,
    change: impl FnOnce(ProjectIndex) -> Result<(Option<Index>, T)>,
) -> Result<(T, Option<FileStamp>)> {
    write::check(place, path).with_context(|| format!("cannot write index {}", path.display()))?;
    let _lock = IndexLock::acquire(place, path)?;
    let (index, result) = change(workspace::load_index(path))?;
    let stamp = match index {
        Some(index) => {
            index.save(place, path)?;
            FileStamp::of(path)
        }
        None => None,
    };
    Ok((result, stamp))
}

/// The exclusive lock of an index, held until dropped. The lock file stays: removing it would
/// let a process that opened it lock a file nobody else sees.
struct IndexLock {
    _file: File,
}

impl IndexLock {
    fn acquire(place: Place, index: &Path) -> Result<IndexLock> {
        let path = lock_path(index);
        let file = write::open_existing_or_new(place, &path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        ignore_lock_file(place, &path);
        file.lock()
            .with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(IndexLock { _file: file })
    }
}

/// The lock file of an index: its name with `.lock` appended, beside it.
pub fn lock_path(index: &Path) -> PathBuf {
    let mut name = index
        .file_name()
        .map(|name| name.to_os_string())
        .unwrap_or_else(|| "index".into());
    name.push(".lock");
    index.with_file_name(name)
}

/// Keeps the lock file out of git where flakesense owns the directory (`.flakesense`), so that
/// committing the index, as the README suggests, does not commit the lock with it.
fn ignore_lock_file(place: Place, lock: &Path) {
    let Some(directory) = lock.parent() else {
        return;
    };
    if directory.file_name().and_then(|name| name.to_str()) != Some(".flakesense") {
        return;
    }
    if let Some(name) = lock.file_name().and_then(|name| name.to_str()) {
        // Best effort: the lock was written in this directory, so only a link at
        // `.gitignore` (refused) or a full disk stops this.
        let _ = write::write_if_missing(
            place,
            &directory.join(".gitignore"),
            format!("/{name}\n").as_bytes(),
        );
    }
}

/// What identifies one version of a file: a writer renames a new file over the index, so its
/// inode changes with every write, and size and modification time catch editors and copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl FileStamp {
    /// The stamp of the file at `path`; `None` when there is none.
    pub fn of(path: &Path) -> Option<FileStamp> {
        let metadata = fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
        #[cfg(not(unix))]
        let inode = 0;
        Some(FileStamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            inode,
        })
    }
}

#[cfg(test)]
mod tests;
