//! Which files a change touches, and their versions before and after, from the `git` command
//! line: `--staged` compares git's index with `HEAD`, `--diff-base` the working tree with the
//! branch point of a ref. Which tests inside those files changed is decided in [`super`].
//!
//! Every command runs with `GIT_OPTIONAL_LOCKS=0`, so git does not even refresh its index file:
//! checking never writes to the repository. Nothing the repository's configuration names is run
//! ([`git_command`]): no fsmonitor, hook, external diff, text conversion, filter or pager. Ignore
//! files are read by flakesense, never by git, which would wait on a FIFO named `.gitignore`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::analysis::MAX_FILE_BYTES;

/// A git working tree.
#[derive(Debug, Clone)]
pub struct Repository {
    /// The top level of the working tree, as git reports it.
    pub top: PathBuf,
}

/// Where the new version of a changed file is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewVersion {
    /// A blob in git's index (`--staged`).
    Blob(String),
    /// The file in the working tree (`--diff-base`).
    WorkingTree,
}

/// A file added, modified or renamed by the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// Relative to the top level, `/`-separated.
    pub path: String,
    pub new: NewVersion,
    /// The blob of the version before the change; `None` when the change adds the file.
    pub base: Option<String>,
}

/// A blob's content, or why it was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blob {
    Content(Vec<u8>),
    TooLarge(u64),
}

/// git's modes for symbolic links and submodules: neither is a source file to read.
/// How changes are listed: machine-readable, full hashes, renames followed, deletions left out.
const RAW_DIFF: &[&str] = &[
    "--raw",
    "-z",
    "--no-abbrev",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "-M",
    "--diff-filter=AMR",
];
const SYMLINK_MODE: &str = "120000";
const GITLINK_MODE: &str = "160000";

impl Repository {
    /// The repository holding `directory`, or `None` when it is not inside one. Fails only when
    /// git itself cannot be run.
    pub fn discover(directory: &Path) -> Result<Option<Repository>> {
        let output = git_command(directory)
            .args(["rev-parse", "--show-toplevel"])
            .output()
            .context("cannot run git (is it installed?)")?;
        if !output.status.success() {
            return Ok(None);
        }
        let top = String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_string();
        if top.is_empty() {
            // Inside the .git directory, or a bare repository: no working tree.
            return Ok(None);
        }
        Ok(Some(Repository {
            top: PathBuf::from(top),
        }))
    }

    /// Files the staged change adds, modifies or renames: git's index against `HEAD` (against
    /// nothing before the first commit).
    pub fn staged(&self) -> Result<Vec<ChangedFile>> {
        let raw = self.run(&[&["diff", "--cached"], RAW_DIFF].concat())?;
        Ok(parse_raw_diff(&raw, true))
    }

    /// The commit where `reference` and `HEAD` diverged, as a pull request's diff starts.
    pub fn merge_base(&self, reference: &str) -> Result<String> {
        let output = git_command(&self.top)
            .args(["merge-base", "--end-of-options", reference, "HEAD"])
            .output()
            .context("cannot run git")?;
        if !output.status.success() {
            bail!(
                "cannot find where `{reference}` and HEAD diverged: {}",
                first_line(&output.stderr).unwrap_or("git merge-base failed")
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    }

    /// Files the working tree adds, modifies or renames since `base` (a commit), untracked files
    /// that are not ignored included: they are new tests a push would add once committed.
    pub fn changed_since(&self, base: &str) -> Result<Vec<ChangedFile>> {
        let raw = self.run(&[&["diff"], RAW_DIFF, &[base, "--"]].concat())?;
        let mut changed = parse_raw_diff(&raw, false);
        let tracked = self.run(&["ls-files", "--cached", "-z"])?;
        let tracked: std::collections::HashSet<&[u8]> = tracked
            .split(|&byte| byte == 0)
            .filter(|path| !path.is_empty())
            .collect();
        // Untracked sources that are not ignored, found by flakesense's own walk.
        let (sources, problems) = crate::files::walk_sources(
            std::slice::from_ref(&self.top),
            &self.top,
            &Default::default(),
        );
        if let Some(problem) = problems
            .iter()
            .find(|problem| problem.kind == crate::files::WalkProblemKind::IgnoreFile)
        {
            bail!(
                "{}: {}",
                problem.path.as_deref().unwrap_or(&self.top).display(),
                problem.message
            );
        }
        for source in sources {
            // A nested repository's files (a submodule's) are not this one's to add, nor files
            // under a linked directory: git sees the link, one untracked path, not a directory.
            let elsewhere = source
                .ancestors()
                .skip(1)
                .take_while(|directory| *directory != self.top)
                .any(|directory| {
                    directory.join(".git").exists()
                        || std::fs::symlink_metadata(directory)
                            .is_ok_and(|metadata| metadata.file_type().is_symlink())
                });
            if elsewhere {
                continue;
            }
            let path = crate::workspace::relative_path(&self.top, &source);
            if !tracked.contains(path.as_bytes()) {
                changed.push(ChangedFile {
                    path,
                    new: NewVersion::WorkingTree,
                    base: None,
                });
            }
        }
        changed.sort_by(|a, b| a.path.cmp(&b.path));
        changed.dedup_by(|a, b| a.path == b.path);
        Ok(changed)
    }

    /// Reads blobs in one `git cat-file --batch` process. Blobs larger than the analysis limit
    /// are not kept in memory.
    pub fn read_blobs(&self, ids: &[&str]) -> Result<HashMap<String, Blob>> {
        let mut blobs = HashMap::new();
        if ids.is_empty() {
            return Ok(blobs);
        }
        let mut child = git_command(&self.top)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run git cat-file")?;
        let mut stdin = child.stdin.take().context("git cat-file has no stdin")?;
        let request: String = ids.iter().map(|id| format!("{id}\n")).collect();
        // Write from another thread: git answers while it reads, and a full pipe on either side
        // would otherwise block both processes.
        let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
        let mut stdout = BufReader::new(child.stdout.take().context("git cat-file has no stdout")?);
        for &id in ids {
            let mut header = String::new();
            stdout
                .read_line(&mut header)
                .context("cannot read from git cat-file")?;
            let fields: Vec<&str> = header.split_whitespace().collect();
            let [_, kind, size] = fields[..] else {
                bail!("git cannot read object {id}: {}", header.trim());
            };
            let size: u64 = size
                .parse()
                .with_context(|| format!("git cat-file answered `{}`", header.trim()))?;
            let blob = if kind == "blob" && size <= MAX_FILE_BYTES as u64 {
                let mut content = vec![0; size as usize];
                stdout.read_exact(&mut content)?;
                Blob::Content(content)
            } else {
                std::io::copy(&mut (&mut stdout).take(size), &mut std::io::sink())?;
                Blob::TooLarge(size)
            };
            // Each object is followed by a line feed.
            stdout.read_exact(&mut [0])?;
            blobs.insert(id.to_string(), blob);
        }
        writer
            .join()
            .map_err(|_| anyhow::anyhow!("the thread writing to git cat-file panicked"))?
            .context("cannot write to git cat-file")?;
        drop(stdout);
        let status = child.wait()?;
        if !status.success() {
            bail!("git cat-file failed ({status})");
        }
        Ok(blobs)
    }

    /// Runs git at the top level and returns its standard output.
    fn run(&self, args: &[&str]) -> Result<Vec<u8>> {
        let output = git_command(&self.top)
            .args(args)
            .output()
            .context("cannot run git")?;
        if !output.status.success() {
            bail!(
                "git {} failed: {}",
                args.first().copied().unwrap_or_default(),
                first_line(&output.stderr).unwrap_or("no message")
            );
        }
        Ok(output.stdout)
    }
}

/// git in `directory`, with everything the repository's configuration could have it run turned
/// off: a cloned repository's `.git/config` is the repository's to write, not the user's.
pub(crate) fn git_command(directory: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .arg("--no-pager")
        .arg("-C")
        .arg(directory)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.pager=cat",
            "-c",
            "diff.external=",
            "-c",
            "core.untrackedCache=false",
        ])
        .args(no_filters(directory))
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_EXTERNAL_DIFF")
        .stdin(Stdio::null());
    command
}

/// Settings that empty every filter driver the configuration defines (`filter.NAME.clean`,
/// `smudge`, `process`): git would run a clean filter to hash a changed file of the working tree.
/// Listing the configuration runs nothing.
fn no_filters(directory: &Path) -> Vec<String> {
    let Ok(output) = Command::new("git")
        .arg("-C")
        .arg(directory)
        .args([
            "config",
            "--null",
            "--name-only",
            "--get-regexp",
            r"^filter\.",
        ])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    let mut drivers: Vec<String> = output
        .stdout
        .split(|&byte| byte == 0)
        .filter_map(|key| {
            let key = std::str::from_utf8(key).ok()?.trim();
            let rest = key.strip_prefix("filter.")?;
            Some(rest.rsplit_once('.')?.0.to_string())
        })
        .collect();
    drivers.sort();
    drivers.dedup();
    drivers
        .iter()
        .flat_map(|driver| {
            ["clean", "smudge", "process"]
                .into_iter()
                .map(move |part| format!("filter.{driver}.{part}="))
                .chain([format!("filter.{driver}.required=false")])
        })
        .flat_map(|setting| ["-c".to_string(), setting])
        .collect()
}

fn first_line(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()?
        .lines()
        .find(|line| !line.trim().is_empty())
}

/// Parses `git diff --raw -z --no-abbrev` output: per file a header
/// `:old_mode new_mode old_id new_id status`, then one path, or two for a rename (old, new).
/// `new_is_blob` says whether the new side is a blob (`--cached`) or the working tree.
fn parse_raw_diff(raw: &[u8], new_is_blob: bool) -> Vec<ChangedFile> {
    let mut fields = raw
        .split(|&byte| byte == 0)
        .map(|field| String::from_utf8_lossy(field).into_owned());
    let mut changed = Vec::new();
    while let Some(header) = fields.next() {
        let Some(header) = header.strip_prefix(':') else {
            continue;
        };
        let parts: Vec<&str> = header.split(' ').collect();
        let [_, new_mode, old_id, new_id, status] = parts[..] else {
            continue;
        };
        let renamed = status.starts_with('R') || status.starts_with('C');
        let Some(first_path) = fields.next() else {
            break;
        };
        let path = if renamed {
            match fields.next() {
                Some(new_path) => new_path,
                None => break,
            }
        } else {
            first_path
        };
        if new_mode == SYMLINK_MODE || new_mode == GITLINK_MODE {
            continue;
        }
        let is_null = |id: &str| id.bytes().all(|byte| byte == b'0');
        let base = (!status.starts_with('A') && !is_null(old_id)).then(|| old_id.to_string());
        let new = if new_is_blob && !is_null(new_id) {
            NewVersion::Blob(new_id.to_string())
        } else {
            NewVersion::WorkingTree
        };
        changed.push(ChangedFile { path, new, base });
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const ZERO: &str = "0000000000000000000000000000000000000000";

    #[test]
    fn parses_additions_modifications_and_renames() {
        let raw = format!(
            ":000000 100644 {ZERO} {A} A\0tests/test_new.py\0\
             :100644 100644 {A} {B} M\0src/FooTest.java\0\
             :100644 100644 {A} {B} R087\0old/x_test.rs\0new/x_test.rs\0\
             :100644 120000 {A} {B} M\0link.py\0\
             :160000 160000 {A} {B} M\0vendor/sub\0"
        );
        let changed = parse_raw_diff(raw.as_bytes(), true);
        assert_eq!(
            changed,
            [
                ChangedFile {
                    path: "tests/test_new.py".into(),
                    new: NewVersion::Blob(A.into()),
                    base: None,
                },
                ChangedFile {
                    path: "src/FooTest.java".into(),
                    new: NewVersion::Blob(B.into()),
                    base: Some(A.into()),
                },
                ChangedFile {
                    path: "new/x_test.rs".into(),
                    new: NewVersion::Blob(B.into()),
                    base: Some(A.into()),
                },
            ]
        );
    }

    #[test]
    fn the_working_tree_side_has_no_blob() {
        let raw = format!(":100644 100644 {A} {ZERO} M\0a.py\0");
        let changed = parse_raw_diff(raw.as_bytes(), false);
        assert_eq!(changed[0].new, NewVersion::WorkingTree);
        assert_eq!(changed[0].base.as_deref(), Some(A));
    }
}
