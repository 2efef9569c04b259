//! The signal-share cache: the same counts as without it, whatever changed in between.

use super::*;
use crate::workspace::{WorkspaceSources, prevalence};

/// The workspace's counts as a run now finds them, with the cache or without it.
fn shares(root: &Path, use_cache: bool) -> Prevalence {
    let sources = WorkspaceSources::new(root, globset::GlobSet::empty());
    prevalence(&sources, use_cache)
}

const SLEEPS: &str = "class SleepTest {\n    @Test\n    void waits() throws Exception {\n        Thread.sleep(100);\n    }\n}\n";
const PURE: &str =
    "class PureTest {\n    @Test\n    void adds() {\n        assertEquals(2, 1 + 1);\n    }\n}\n";

/// A workspace at the top of a git working tree, whose cache goes in its git directory.
fn workspace() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir(root.path().join(".git")).unwrap();
    write(root.path(), "src/SleepTest.java", SLEEPS);
    write(root.path(), "src/PureTest.java", PURE);
    write(
        root.path(),
        "tests/conftest.py",
        "import time\nimport pytest\n\n@pytest.fixture\ndef slow():\n    time.sleep(1)\n",
    );
    write(
        root.path(),
        "tests/test_uses.py",
        "def test_uses(slow):\n    assert slow is None\n",
    );
    root
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The counts with the cache (read, then written), checked against a count without it.
fn counted(root: &Path) -> Prevalence {
    let cached = shares(root, true);
    assert_eq!(cached, shares(root, false), "the cache changed the counts");
    cached
}

fn cached_files(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = PrevalenceCache::read(root).files.into_keys().collect();
    files.sort();
    files
}

#[test]
fn unchanged_files_are_read_from_the_cache() {
    let root = workspace();
    let first = counted(root.path());
    assert_eq!(first.count(Language::Java, "fixed-sleep"), (1, 2));
    assert_eq!(
        cached_files(root.path()),
        [
            "src/PureTest.java",
            "src/SleepTest.java",
            "tests/conftest.py",
            "tests/test_uses.py"
        ]
    );
    let cache = PrevalenceCache::read(root.path());
    let path = root.path().join("src/SleepTest.java");
    let key = cache.key(Language::Java, &path).unwrap();
    assert_eq!(
        cache.get("src/SleepTest.java", &key),
        Some(&first_file_counts(&path))
    );
    // Nothing in the working tree: the cache is in git's directory.
    assert!(!root.path().join(".flakesense").exists());
    assert_eq!(
        location(root.path()),
        Some(
            root.path()
                .canonicalize()
                .unwrap()
                .join(".git/flakesense/prevalence")
        )
    );
}

#[test]
fn a_cache_lives_in_the_git_directory_of_its_working_tree_or_the_users_cache() {
    let top = tempfile::tempdir().unwrap();
    let top = top.path().canonicalize().unwrap();
    fs::create_dir_all(top.join(".git")).unwrap();
    fs::create_dir_all(top.join("services/api")).unwrap();
    // A workspace below the top (its own flakesense.toml) has a cache of its own.
    let nested = location(&top.join("services/api")).unwrap();
    assert!(
        nested.starts_with(top.join(".git/flakesense")),
        "{nested:?}"
    );
    assert_ne!(nested, location(&top).unwrap());
    // A worktree's `.git` is a file naming its own git directory.
    let worktree = tempfile::tempdir().unwrap();
    let worktree = worktree.path().canonicalize().unwrap();
    fs::create_dir_all(top.join(".git/worktrees/feature")).unwrap();
    fs::write(
        top.join(".git/worktrees/feature/HEAD"),
        "ref: refs/heads/feature\n",
    )
    .unwrap();
    // A `.git` file naming a directory that is no git directory names no cache.
    fs::write(
        worktree.join(".git"),
        format!("gitdir: {}\n", top.join("services").display()),
    )
    .unwrap();
    assert!(
        location(&worktree).is_none_or(|path| !path.starts_with(top.join("services"))),
        "{:?}",
        location(&worktree)
    );
    fs::write(
        worktree.join(".git"),
        format!("gitdir: {}\n", top.join(".git/worktrees/feature").display()),
    )
    .unwrap();
    assert_eq!(
        location(&worktree),
        Some(top.join(".git/worktrees/feature/flakesense/prevalence"))
    );
    // Outside git: the user's cache directory, never the workspace.
    let plain = tempfile::tempdir().unwrap();
    if let Some(path) = location(plain.path()) {
        assert!(!path.starts_with(plain.path()), "{path:?}");
    }
}

#[test]
fn a_cache_of_another_workspace_is_not_used() {
    let root = workspace();
    counted(root.path());
    let other = workspace();
    fs::copy(location(root.path()).unwrap(), {
        let path = location(other.path()).unwrap();
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        path
    })
    .unwrap();
    assert!(PrevalenceCache::read(other.path()).is_empty());
}

fn first_file_counts(path: &Path) -> Prevalence {
    let text = fs::read_to_string(path).unwrap();
    let read = crate::analysis::read_tests(
        Language::Java,
        "src/SleepTest.java",
        &text,
        &Default::default(),
    );
    crate::workspace::tally(Language::Java, &read.signals)
}

#[test]
fn an_edit_a_rename_and_a_deletion_are_counted_again() {
    let root = workspace();
    counted(root.path());
    // An edit: the pure test sleeps too.
    write(
        root.path(),
        "src/PureTest.java",
        &PURE.replace("assertEquals(2, 1 + 1);", "Thread.sleep(5);"),
    );
    assert_eq!(
        counted(root.path()).count(Language::Java, "fixed-sleep"),
        (2, 2)
    );
    // A rename.
    fs::rename(
        root.path().join("src/PureTest.java"),
        root.path().join("src/RenamedTest.java"),
    )
    .unwrap();
    assert_eq!(
        counted(root.path()).count(Language::Java, "fixed-sleep"),
        (2, 2)
    );
    assert!(cached_files(root.path()).contains(&"src/RenamedTest.java".to_string()));
    assert!(!cached_files(root.path()).contains(&"src/PureTest.java".to_string()));
    // A deletion.
    fs::remove_file(root.path().join("src/SleepTest.java")).unwrap();
    assert_eq!(
        counted(root.path()).count(Language::Java, "fixed-sleep"),
        (1, 1)
    );
    assert!(!cached_files(root.path()).contains(&"src/SleepTest.java".to_string()));
}

#[test]
fn a_changed_conftest_counts_the_python_tests_again() {
    let root = workspace();
    let before = counted(root.path());
    let (sleeping, tests) = before.count(Language::Python, "fixed-sleep@context");
    assert_eq!((sleeping, tests), (1, 1), "{before:?}");
    // The fixture stops sleeping; the test file itself is unchanged.
    write(
        root.path(),
        "tests/conftest.py",
        "import pytest\n\n@pytest.fixture\ndef slow():\n    return None\n",
    );
    let after = counted(root.path());
    assert_eq!(after.count(Language::Python, "fixed-sleep@context"), (0, 1));
}

#[test]
fn every_pytest_configuration_file_counts_the_python_tests_again() {
    for name in crate::extract::PYTEST_CONFIG_FILES {
        let root = workspace();
        assert_eq!(counted(root.path()).tests(Language::Python), 1);
        // pytest now collects `check*` functions only: `test_uses` is no test.
        let settings = match name {
            "pyproject.toml" => "[tool.pytest.ini_options]\npython_functions = \"check\"\n",
            "pytest.toml" | ".pytest.toml" => "[pytest]\npython_functions = [\"check\"]\n",
            "setup.cfg" => "[tool:pytest]\npython_functions = check\n",
            _ => "[pytest]\npython_functions = check\n",
        };
        write(root.path(), name, settings);
        assert_eq!(counted(root.path()).tests(Language::Python), 0, "{name}");
    }
}

#[test]
fn a_damaged_cache_is_rebuilt_silently() {
    let root = workspace();
    let first = counted(root.path());
    let path = location(root.path()).unwrap();
    for damage in [&b"garbage"[..], &MAGIC[..], &[]] {
        fs::write(&path, damage).unwrap();
        assert_eq!(counted(root.path()), first);
        assert_eq!(cached_files(root.path()).len(), 4, "rebuilt");
    }
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes.truncate(last);
    fs::write(&path, &bytes).unwrap();
    assert_eq!(counted(root.path()), first);
    assert_eq!(cached_files(root.path()).len(), 4, "rebuilt");
}

#[test]
fn concurrent_runs_leave_a_valid_cache() {
    let root = workspace();
    let expected = shares(root.path(), false);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..5 {
                    assert_eq!(shares(root.path(), true), expected);
                }
            });
        }
    });
    assert_eq!(cached_files(root.path()).len(), 4);
    assert_eq!(counted(root.path()), expected);
}
