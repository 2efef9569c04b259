//! What a check judges: the files of its paths or of a change, each with the version to read
//! and the version before the change, and how their paths are written.

use super::*;

/// Where the version of a file to judge comes from.
#[derive(Debug)]
pub(super) enum Source {
    Disk,
    Blob(Blob),
}

/// The version before the change, when only changed tests are judged.
#[derive(Debug)]
pub(super) enum Base {
    /// Judge every test.
    None,
    /// The change adds the file: every test is new.
    Added,
    Previous(Blob),
}

#[derive(Debug)]
pub(super) struct Target {
    pub(super) absolute: PathBuf,
    pub(super) relative: String,
    pub(super) display: String,
    pub(super) source: Source,
    pub(super) base: Base,
    /// Named on the command line: a file that is not Java, Python or Rust is reported.
    pub(super) named: bool,
    /// The directory it was found by walking: a Python file pytest would not collect
    /// (`python_files`, or below a directory of `norecursedirs`) is passed over, as pytest passes
    /// it over. Named files and the files of a change are judged.
    pub(super) walked_from: Option<PathBuf>,
}

/// The files to judge, their paths relative to the repository's top level (else the workspace
/// root).
pub(super) struct Collected {
    pub(super) targets: Vec<Target>,
    /// Problems met while walking directories.
    pub(super) skipped: Vec<SkippedFile>,
    pub(super) changes: Changes,
}

/// The files of the named paths (or the workspace), or those a change touches among them.
pub(super) fn collect(
    args: &CheckArgs,
    named: &[PathBuf],
    workspace_root: &Path,
    exclude: &globset::GlobSet,
    current: &Path,
) -> Result<Collected> {
    if args.staged || args.diff_base.is_some() {
        let repository = Repository::discover(workspace_root)?.with_context(|| {
            format!(
                "{} needs a git repository, and {} is not in one",
                if args.staged {
                    "--staged"
                } else {
                    "--diff-base"
                },
                workspace_root.display()
            )
        })?;
        let (changed, changes) = match &args.diff_base {
            Some(reference) => {
                let merge_base = repository.merge_base(reference)?;
                let changed = repository.changed_since(&merge_base)?;
                let changes = Changes::DiffBase {
                    reference: reference.clone(),
                    merge_base,
                };
                (changed, changes)
            }
            None => (repository.staged()?, Changes::Staged),
        };
        let targets = changed_targets(
            &repository,
            changed,
            named,
            workspace_root,
            exclude,
            current,
        )?;
        Ok(Collected {
            targets,
            skipped: Vec::new(),
            changes,
        })
    } else {
        let root = repository_root(workspace_root);
        let roots = if named.is_empty() {
            vec![workspace_root.to_path_buf()]
        } else {
            named.to_vec()
        };
        let (paths, problems) = files::walk_sources(&roots, workspace_root, exclude);
        let targets = paths
            .into_iter()
            .map(|absolute| Target {
                relative: relative_path(&absolute, &root),
                display: display_path(&absolute, current),
                named: named.contains(&absolute),
                walked_from: (!named.contains(&absolute))
                    .then(|| walk_root(&roots, &absolute))
                    .flatten(),
                absolute,
                source: Source::Disk,
                base: Base::None,
            })
            .collect();
        let skipped = problems
            .into_iter()
            .map(|problem| SkippedFile {
                path: problem
                    .path
                    .as_deref()
                    .map_or_else(String::new, |path| relative_path(path, &root)),
                display_path: problem
                    .path
                    .as_deref()
                    .map_or_else(String::new, |path| display_path(path, current)),
                kind: match problem.kind {
                    files::WalkProblemKind::Loop => SkipKind::SymlinkLoop,
                    files::WalkProblemKind::BrokenLink => SkipKind::BrokenSymlink,
                    files::WalkProblemKind::LinkOutside => SkipKind::SymlinkOutside,
                    files::WalkProblemKind::Unreadable | files::WalkProblemKind::IgnoreFile => {
                        SkipKind::Unreadable
                    }
                },
                reason: problem.message,
            })
            .collect();
        Ok(Collected {
            targets,
            skipped,
            changes: Changes::All,
        })
    }
}

/// The tests a change adds or modifies: a test is changed when its id is new or its
/// whitespace-normalised code differs from the base version's test with the same id.
pub(super) fn changed_tests<T>(
    tests: Vec<(TestMethod, T)>,
    language: Language,
    target: &Target,
    discovery: &Discovery,
) -> Vec<(TestMethod, T)> {
    let previous = match &target.base {
        Base::None | Base::Added => return tests,
        Base::Previous(Blob::Content(bytes)) => bytes,
        // A base too large to analyse was never judged: every test counts as new.
        Base::Previous(Blob::TooLarge(_)) => return tests,
    };
    let (previous_text, _) = extract::decode_source(previous);
    // The base is extracted under the new path, so a renamed file keeps its tests' ids.
    let before: std::collections::HashSet<(String, String)> =
        extract::extract_tests_with(language, &target.relative, &previous_text, discovery)
            .tests
            .into_iter()
            .map(|test| (test.id, crate::dataset::normalised_code(&test.code)))
            .collect();
    tests
        .into_iter()
        .filter(|(test, _)| {
            !before.contains(&(test.id.clone(), crate::dataset::normalised_code(&test.code)))
        })
        .collect()
}

/// The files of a change to judge, with their versions before and after.
pub(super) fn changed_targets(
    repository: &Repository,
    changed: Vec<ChangedFile>,
    named: &[PathBuf],
    workspace_root: &Path,
    exclude: &globset::GlobSet,
    current: &Path,
) -> Result<Vec<Target>> {
    let mut directories = files::Directories::default();
    let surroundings = workspace::SurroundingsReader::new(workspace_root);
    let changed: Vec<ChangedFile> = changed
        .into_iter()
        .filter(|file| {
            let absolute = repository.top.join(&file.path);
            let path = Path::new(&file.path);
            let maybe_source = Language::from_path(path).is_some() || path.extension().is_none();
            let wanted = named.is_empty() || named.iter().any(|name| absolute.starts_with(name));
            let excluded = exclude.is_match(absolute.strip_prefix(workspace_root).unwrap_or(path));
            maybe_source
                && wanted
                && !excluded
                && runners_look_there(
                    file,
                    &absolute,
                    named,
                    workspace_root,
                    &mut directories,
                    &surroundings,
                )
        })
        .collect();
    let ids: Vec<&str> = changed
        .iter()
        .flat_map(|file| {
            let new = match &file.new {
                NewVersion::Blob(id) => Some(id.as_str()),
                NewVersion::WorkingTree => None,
            };
            new.into_iter().chain(file.base.as_deref())
        })
        .collect();
    let blobs = repository.read_blobs(&ids)?;
    let take = |id: &str| -> Result<Blob> {
        match blobs.get(id) {
            Some(blob) => Ok(blob.clone()),
            None => bail!("git did not return object {id}"),
        }
    };
    let mut targets = Vec::with_capacity(changed.len());
    for file in changed {
        let absolute = repository.top.join(&file.path);
        let source = match &file.new {
            NewVersion::Blob(id) => Source::Blob(take(id)?),
            NewVersion::WorkingTree => Source::Disk,
        };
        let base = match &file.base {
            Some(id) => Base::Previous(take(id)?),
            None => Base::Added,
        };
        targets.push(Target {
            display: display_path(&absolute, current),
            relative: file.path,
            absolute,
            source,
            base,
            named: false,
            walked_from: None,
        });
    }
    Ok(targets)
}

/// Whether the runners would meet the changed file at `absolute` walking the workspace (or the
/// path named that holds it): none of its directories is hidden, a virtual environment, a build
/// tool's output or, for Python, one of pytest's `norecursedirs`. A change lists the files of an
/// untracked `.venv` one by one, and its `lib64` link to a directory as a file: neither is a test
/// of the project.
fn runners_look_there(
    file: &ChangedFile,
    absolute: &Path,
    named: &[PathBuf],
    workspace_root: &Path,
    directories: &mut files::Directories,
    surroundings: &workspace::SurroundingsReader,
) -> bool {
    if file.new == NewVersion::WorkingTree && absolute.is_dir() {
        return false;
    }
    let from = walk_root(named, absolute).unwrap_or_else(|| workspace_root.to_path_buf());
    if !directories.entered(&from, absolute) {
        return false;
    }
    match Language::from_path(absolute) {
        Some(language @ Language::Python) => surroundings
            .discovery(language, absolute)
            .enters_directories(language, absolute, &from),
        _ => true,
    }
}

/// The directory of `roots` a walk found `path` in: the deepest that holds it.
fn walk_root(roots: &[PathBuf], path: &Path) -> Option<PathBuf> {
    roots
        .iter()
        .filter(|root| path.starts_with(root))
        .max_by_key(|root| root.components().count())
        .cloned()
}

/// The top level of the git working tree holding `directory`, found without running git; the
/// directory itself outside a repository. Report paths are relative to it, as code scanning wants.
pub(super) fn repository_root(directory: &Path) -> PathBuf {
    directory
        .ancestors()
        .find(|ancestor| ancestor.join(".git").exists())
        .unwrap_or(directory)
        .to_path_buf()
}

/// `path` relative to `root` with `/` separators, or the whole path when it lies elsewhere.
pub(super) fn relative_path(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = relative
        .components()
        .map(|component| component.as_os_str().to_string_lossy().into_owned())
        .collect();
    if relative.is_absolute() {
        relative.to_string_lossy().into_owned()
    } else {
        parts.join("/")
    }
}

/// How a person in `current` refers to `path`: relative when it lies below, else absolute.
pub(super) fn display_path(path: &Path, current: &Path) -> String {
    match path.strip_prefix(current) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// Removes `.` and resolves `..` without touching the file system: a named path need not
/// exist (a staged file deleted from the working tree) and symbolic links stay as named.
pub(super) fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}
