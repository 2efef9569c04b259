//! The symbol index: the definitions of a workspace's files, found by name, kept in the cache
//! and read again only for the files that changed.

use std::path::{Path, PathBuf};

use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A workspace in a git directory (where the cache lives) with a base class and a test.
fn workspace() -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let base = root.join("src/test/java/a/ClusterTestBase.java");
    write(
        &base,
        "package a;\npublic abstract class ClusterTestBase {\n  protected void startCluster() {}\n}\n",
    );
    let test = root.join("src/test/java/a/ClusterTest.java");
    write(
        &test,
        "package a;\nclass ClusterTest extends ClusterTestBase {\n  @Test void t() { startCluster(); }\n}\n",
    );
    (dir, vec![base, test])
}

fn classes<'a>(symbols: &'a Symbols, name: &str) -> Vec<(&'a str, u32)> {
    symbols
        .find(Language::Java, name, &[DefinitionKind::Class])
        .into_iter()
        .map(|found| (found.path, found.definition.line))
        .collect()
}

#[test]
fn a_class_is_found_in_the_file_that_defines_it() {
    let (dir, paths) = workspace();
    let symbols = Symbols::read(dir.path(), &paths, true);
    assert_eq!(
        classes(&symbols, "ClusterTestBase"),
        [("src/test/java/a/ClusterTestBase.java", 2)]
    );
    assert!(
        classes(&symbols, "startCluster").is_empty(),
        "a method is no class"
    );
    assert_eq!(
        symbols
            .find(Language::Java, "startCluster", &[DefinitionKind::Method])
            .len(),
        1
    );
    assert!(
        symbols
            .find(
                Language::Python,
                "ClusterTestBase",
                &[DefinitionKind::Class]
            )
            .is_empty()
    );
}

#[test]
fn a_second_read_takes_unchanged_files_from_the_cache_and_reads_a_changed_one() {
    let (dir, paths) = workspace();
    assert_eq!(Symbols::read(dir.path(), &paths, true).fresh(), 2);
    let again = Symbols::read(dir.path(), &paths, true);
    assert_eq!(again.fresh(), 0, "both files come from the cache");
    assert_eq!(classes(&again, "ClusterTestBase").len(), 1);

    // The base class is renamed: its length changes, so it is read again.
    write(
        &paths[0],
        "package a;\npublic abstract class RenamedClusterBase {\n  protected void startCluster() {}\n}\n",
    );
    let changed = Symbols::read(dir.path(), &paths, true);
    assert_eq!(changed.fresh(), 1);
    assert!(classes(&changed, "ClusterTestBase").is_empty());
    assert_eq!(classes(&changed, "RenamedClusterBase").len(), 1);
}

#[test]
fn a_damaged_cache_is_read_again_silently() {
    let (dir, paths) = workspace();
    Symbols::read(dir.path(), &paths, true);
    let (_, cache) = cache::place(dir.path(), "symbols").unwrap();
    let mut bytes = std::fs::read(&cache).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&cache, &bytes).unwrap();
    let symbols = Symbols::read(dir.path(), &paths, true);
    assert_eq!(symbols.fresh(), 2);
    assert_eq!(classes(&symbols, "ClusterTestBase").len(), 1);
}

#[test]
fn an_update_reads_one_file_and_forgets_a_deleted_one() {
    let (dir, paths) = workspace();
    let mut symbols = Symbols::read(dir.path(), &paths, true);
    write(
        &paths[1],
        "package a;\nclass ClusterTest extends ClusterTestBase {}\nclass Helper {}\n",
    );
    symbols.update(dir.path(), &paths[1]);
    assert_eq!(
        classes(&symbols, "Helper"),
        [("src/test/java/a/ClusterTest.java", 3)]
    );
    std::fs::remove_file(&paths[0]).unwrap();
    symbols.update(dir.path(), &paths[0]);
    assert!(classes(&symbols, "ClusterTestBase").is_empty());
    assert_eq!(symbols.len(), 1);
}

#[test]
fn without_the_cache_every_file_is_read_and_nothing_is_written() {
    let (dir, paths) = workspace();
    assert_eq!(Symbols::read(dir.path(), &paths, false).fresh(), 2);
    let (_, cache) = cache::place(dir.path(), "symbols").unwrap();
    assert!(!cache.exists());
    Symbols::read(dir.path(), &paths, true);
    assert!(cache.exists());
    assert_eq!(Symbols::read(dir.path(), &paths, false).fresh(), 2);
}
