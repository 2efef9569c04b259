//! `flakesense confirm --compare REF`: the chosen tests run at a git revision (before) and in
//! the working tree (after), under the same conditions and runs, so that a fix is proved by the
//! counts: "before (HEAD): failed 7 of 20 runs under noise; after (working tree): 0 of 20".
//!
//! REF's tree is written into a temporary directory outside the repository through a temporary
//! index of its own (`git read-tree`, then `git checkout-index`): the repository is not changed
//! (no worktree entry, its index untouched, no hook run, `core.fsmonitor` off), and the
//! directory is removed when the comparison ends, finished, failed or interrupted. (`git archive`
//! would leave out the files marked `export-ignore`, tests often among them.) What git does not
//! track is not there, but for the project's virtual environment (`.venv`, `venv`), linked in so
//! that pytest runs with the same interpreter; submodules are left empty.
//!
//! Each test is found again in REF's tree by its id; a test REF does not have is reported as
//! such and the others still run.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::choose::{self, ChosenTest};
use super::condition::Host;
use super::engine::{self, Confirmation, Progress, Settings};
use super::process::{Stop, Stopped};
use super::verdict::TestVerdict;
use crate::config::ConfirmConfig;

/// The revision compared with: as the user named it, and the commit it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    pub name: String,
    pub commit: String,
}

impl Revision {
    /// `HEAD (3f2c1d0)`.
    pub fn label(&self) -> String {
        format!(
            "{} ({})",
            self.name,
            &self.commit[..self.commit.len().min(7)]
        )
    }
}

/// A test's runs at the revision.
#[derive(Debug, Clone)]
pub enum Before {
    /// The revision does not have the test: why, as a sentence's end.
    Missing(String),
    Ran {
        verdict: TestVerdict,
        runner: Option<&'static str>,
    },
}

/// Both sides, per chosen test in their order.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub revision: Revision,
    pub before: Vec<Before>,
    /// The working tree's runs, as `confirm` without `--compare` gives them.
    pub after: Confirmation,
}

/// A revision's tree in a temporary directory, removed when dropped.
struct TreeAt {
    revision: Revision,
    /// The repository's top level, canonical.
    top: PathBuf,
    scratch: tempfile::TempDir,
}

impl TreeAt {
    fn tree(&self) -> PathBuf {
        self.scratch.path().join("tree")
    }

    /// Writes the tree of `reference`, of the repository holding `directory`.
    fn materialise(directory: &Path, reference: &str) -> Result<TreeAt> {
        let top = git(directory)
            .args(["rev-parse", "--show-toplevel"])
            .output()
            .context("cannot run git, which --compare needs")?;
        if !top.status.success() {
            bail!(
                "--compare needs a git repository, and {} is not in one",
                directory.display()
            );
        }
        let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim_end_matches('\n'));
        let top = top.canonicalize().unwrap_or(top);
        let commit = git(&top)
            .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{reference}^{{commit}}"))
            .output()
            .context("cannot run git")?;
        if !commit.status.success() {
            bail!(
                "--compare {reference}: no commit of {} is named `{reference}`",
                top.display()
            );
        }
        let revision = Revision {
            name: reference.to_string(),
            commit: String::from_utf8_lossy(&commit.stdout).trim().to_string(),
        };
        let scratch = tempfile::Builder::new()
            .prefix("flakesense-compare-")
            .tempdir()
            .context("cannot make a temporary directory for the revision's tree")?;
        let index = scratch.path().join("index");
        let mut prefix = scratch.path().join("tree").into_os_string();
        prefix.push("/");
        let mut prefix_argument = std::ffi::OsString::from("--prefix=");
        prefix_argument.push(&prefix);
        let mut read_tree = git(&top);
        read_tree
            .env("GIT_INDEX_FILE", &index)
            .args(["read-tree", &revision.commit]);
        let mut checkout = git(&top);
        checkout
            .env("GIT_INDEX_FILE", &index)
            .args(["checkout-index", "--all", "--force"])
            .arg(&prefix_argument);
        for (what, mut command) in [("read-tree", read_tree), ("checkout-index", checkout)] {
            let output = command.output().context("cannot run git")?;
            if !output.status.success() {
                bail!(
                    "cannot write the tree of {} into {}: git {what}: {}",
                    revision.label(),
                    scratch.path().display(),
                    String::from_utf8_lossy(&output.stderr).trim()
                );
            }
        }
        std::fs::create_dir_all(scratch.path().join("tree"))?;
        Ok(TreeAt {
            revision,
            top,
            scratch,
        })
    }

    /// Where the working tree's `root` is in the revision's tree.
    fn counterpart(&self, root: &Path) -> Result<PathBuf> {
        let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let inside = canonical.strip_prefix(&self.top).with_context(|| {
            format!(
                "the workspace {} is outside its git repository {}",
                root.display(),
                self.top.display()
            )
        })?;
        Ok(self.tree().join(inside))
    }
}

/// git, asked in `directory`, with everything the repository's configuration could have it run
/// turned off (as `check` runs it: checking a revision's files out would run its filter drivers),
/// and on the index it is given, not the caller's.
fn git(directory: &Path) -> Command {
    let mut command = crate::check::git_command(directory);
    command.env_remove("GIT_INDEX_FILE");
    command
}

/// The test as the revision's tree holds it (`ref_root` the workspace root there), or why not.
fn find_at(test: &ChosenTest, ref_root: &Path, revision: &Revision) -> Result<ChosenTest, String> {
    let file = ref_root.join(&test.path);
    if !file.is_file() {
        return Err(format!("{} has no file {}", revision.name, test.path));
    }
    let found = choose::working_tree_tests(ref_root, &file, &test.path);
    let Some(method) = found.into_iter().find(|found| found.id == test.test.id) else {
        return Err(format!(
            "{} has no test {} in {}",
            revision.name, test.test.name, test.path
        ));
    };
    let mut at = choose::chosen(method, &file, &test.path, &choose::found_text(&file), None);
    // What the code suggests stays the working tree's: the same hint on both sides.
    at.score = test.score;
    at.predicted = test.predicted;
    at.signals.clone_from(&test.signals);
    Ok(at)
}

/// Links the working tree's virtual environments (`.venv`, `venv`, from each test's directory
/// up to the workspace root) into the revision's tree where it has none, so that both sides
/// run with the same interpreter. Removing the tree removes the links, never what they point to.
fn link_environments(tests: &[ChosenTest], root: &Path, ref_root: &Path) {
    for test in tests {
        let Some(directory) = test.file.parent() else {
            continue;
        };
        for directory in directory
            .ancestors()
            .take_while(|directory| directory.starts_with(root))
        {
            let Ok(inside) = directory.strip_prefix(root) else {
                continue;
            };
            for name in [".venv", "venv"] {
                let theirs = ref_root.join(inside).join(name);
                let ours = directory.join(name);
                if ours.is_dir()
                    && theirs.parent().is_some_and(Path::is_dir)
                    && std::fs::symlink_metadata(&theirs).is_err()
                {
                    // A failed link leaves pytest with `python3`, as for a project without one.
                    let _ = std::os::unix::fs::symlink(&ours, &theirs);
                }
            }
        }
    }
}

/// Runs `tests` (chosen in the working tree under `root`) at `reference`, then in the working
/// tree, with the same settings. `Ok(Err(Stopped))` when the stop was requested; the revision's
/// tree is removed in every case. Errors: `root` not in a git repository, an unknown reference.
#[allow(clippy::too_many_arguments)] // Reason: `engine::confirm`'s own arguments, and the revision.
pub fn compare(
    reference: &str,
    root: &Path,
    tests: &[ChosenTest],
    config: Option<&ConfirmConfig>,
    settings: &Settings,
    host: &Host,
    stop: &Stop,
    progress: &mut dyn FnMut(&Progress),
) -> Result<std::result::Result<Comparison, Stopped>> {
    let tree = match TreeAt::materialise(root, reference) {
        // Ctrl-C reached git too: what it left is removed with the temporary directory.
        Err(_) if stop.is_requested() => return Ok(Err(Stopped)),
        tree => tree?,
    };
    if stop.is_requested() {
        return Ok(Err(Stopped));
    }
    let ref_root = tree.counterpart(root)?;
    let found: Vec<Result<ChosenTest, String>> = tests
        .iter()
        .map(|test| find_at(test, &ref_root, &tree.revision))
        .collect();
    let present: Vec<ChosenTest> = found.iter().filter_map(|at| at.clone().ok()).collect();
    let mut ran = Vec::new();
    if !present.is_empty() {
        link_environments(tests, root, &ref_root);
        match engine::confirm(&ref_root, &present, config, settings, host, stop, progress)? {
            Ok(confirmation) => {
                ran = confirmation
                    .verdicts
                    .into_iter()
                    .zip(confirmation.runners)
                    .collect()
            }
            Err(Stopped) => return Ok(Err(Stopped)),
        }
    }
    let mut ran = ran.into_iter();
    let before = found
        .into_iter()
        .map(|at| match at {
            Err(reason) => Before::Missing(reason),
            Ok(_) => {
                let (verdict, runner) = ran
                    .next()
                    .unwrap_or_else(|| (TestVerdict::not_run("not run".to_string()), None));
                Before::Ran { verdict, runner }
            }
        })
        .collect();
    let after = match engine::confirm(root, tests, config, settings, host, stop, progress)? {
        Ok(after) => after,
        Err(Stopped) => return Ok(Err(Stopped)),
    };
    Ok(Ok(Comparison {
        revision: tree.revision.clone(),
        before,
        after,
    }))
}
