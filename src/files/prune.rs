//! Directories no test runner looks into, in any language: virtual environments, hidden
//! directories and what build tools write. Walks of a tree and the files of a change both leave
//! them out, so that a `.venv` nobody ignored, or cargo's `target/`, is never judged.
//!
//! pytest skips a directory holding a virtual environment whatever `norecursedirs` says (its
//! `_in_venv`: a `pyvenv.cfg`, or conda's `conda-meta/history`). Build tools are recognised by
//! their markers, never by a name alone: a Java package or a Rust module may well be called
//! `build` or `target`. pytest's own `norecursedirs` is a Python rule, kept with the project's
//! other pytest settings ([`crate::extract::Discovery::enters_directories`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Files beside a `build/` directory that make it Gradle's output.
const GRADLE_BUILD_FILES: [&str; 4] = [
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
];

/// What a directory the runners never enter holds, or `None` when it may hold sources. Hidden
/// directories are left to the caller: a walk skips them by itself.
pub fn tool_directory(directory: &Path) -> Option<&'static str> {
    let has_file = |name: &str| directory.join(name).is_file();
    if has_file("pyvenv.cfg") || has_file("conda-meta/history") {
        return Some("a virtual environment");
    }
    // The Cache Directory Tagging Specification: cargo tags its target directory so.
    if has_file("CACHEDIR.TAG") {
        return Some("a cache directory (CACHEDIR.TAG)");
    }
    let name = directory.file_name()?.to_str()?;
    let parent = directory.parent()?;
    let beside = |marker: &str| parent.join(marker).is_file();
    match name {
        "target" if beside("Cargo.toml") => Some("cargo's target directory"),
        "target" if beside("pom.xml") => Some("Maven's target directory"),
        "build" if GRADLE_BUILD_FILES.iter().any(|marker| beside(marker)) => {
            Some("Gradle's build directory")
        }
        _ => None,
    }
}

/// Whether a directory's name hides it (`.venv`, `.git`): walks skip those, as pytest's default
/// `norecursedirs` (`.*`) does.
pub fn is_hidden(directory: &Path) -> bool {
    directory
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with('.') && name != "." && name != "..")
}

/// Which directories of one tree the runners enter, each looked at once however many files lie
/// below it (a virtual environment holds thousands).
#[derive(Debug, Default)]
pub struct Directories {
    entered: HashMap<PathBuf, bool>,
}

impl Directories {
    /// Whether the runners enter every directory between `root` (not itself judged: a directory
    /// named on the command line is entered whatever it is) and the file at `path`: none hidden,
    /// none a virtual environment or a build tool's output.
    pub fn entered(&mut self, root: &Path, path: &Path) -> bool {
        let below: Vec<&Path> = path
            .ancestors()
            .skip(1)
            .take_while(|directory| *directory != root && directory.starts_with(root))
            .collect();
        below.into_iter().rev().all(|directory| {
            *self
                .entered
                .entry(directory.to_path_buf())
                .or_insert_with(|| !is_hidden(directory) && tool_directory(directory).is_none())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn virtual_environments_and_build_outputs_are_recognised_by_their_markers() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        touch(&root.join("env/pyvenv.cfg"));
        touch(&root.join("conda/conda-meta/history"));
        touch(&root.join("rust/Cargo.toml"));
        std::fs::create_dir_all(root.join("rust/target/debug")).unwrap();
        touch(&root.join("elsewhere/CACHEDIR.TAG"));
        touch(&root.join("maven/pom.xml"));
        std::fs::create_dir_all(root.join("maven/target/classes")).unwrap();
        touch(&root.join("gradle/build.gradle.kts"));
        std::fs::create_dir_all(root.join("gradle/build/classes")).unwrap();
        for directory in [
            "env",
            "conda",
            "rust/target",
            "elsewhere",
            "maven/target",
            "gradle/build",
        ] {
            assert!(
                tool_directory(&root.join(directory)).is_some(),
                "{directory}"
            );
        }
        // The same names without their tool's marker are source directories.
        std::fs::create_dir_all(root.join("java/src/main/java/com/ex/build")).unwrap();
        std::fs::create_dir_all(root.join("rust/src/target")).unwrap();
        std::fs::create_dir_all(root.join("plain/target")).unwrap();
        for directory in [
            "java/src/main/java/com/ex/build",
            "rust/src/target",
            "plain/target",
            "rust",
        ] {
            assert_eq!(tool_directory(&root.join(directory)), None, "{directory}");
        }
    }

    #[test]
    fn files_below_a_skipped_directory_are_not_entered_but_the_root_always_is() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        touch(&root.join("venv/pyvenv.cfg"));
        let mut directories = Directories::default();
        assert!(!directories.entered(root, &root.join(".venv/lib/site/test_x.py")));
        assert!(!directories.entered(root, &root.join("venv/lib/test_x.py")));
        assert!(directories.entered(root, &root.join("tests/test_x.py")));
        assert!(directories.entered(root, &root.join("test_x.py")));
        // Named on the command line, a hidden directory or an environment is entered.
        assert!(directories.entered(&root.join(".github"), &root.join(".github/test_x.py")));
        assert!(directories.entered(&root.join("venv"), &root.join("venv/test_x.py")));
    }
}
