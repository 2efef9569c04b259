//! Finding the other files a test file reaches: by path and by the symbols, nearest first,
//! bounded, and never outside the workspace.

use super::*;

#[test]
fn candidates_are_resolved_within_the_workspace() {
    assert_eq!(
        normalized("tests/./common/../common/mod.rs").as_deref(),
        Some("tests/common/mod.rs")
    );
    assert_eq!(normalized("a/b.py").as_deref(), Some("a/b.py"));
    assert_eq!(normalized("../outside.py"), None);
    assert_eq!(normalized("a/../../outside.py"), None);
    assert_eq!(normalized("/etc/passwd"), None);
    assert_eq!(normalized("."), None);
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The paths of the files the Python test file at `relative` reaches, as it is on disk.
fn reached(others: &OtherFiles, relative: &str) -> Vec<String> {
    let text = std::fs::read_to_string(others.root().join(relative)).unwrap();
    let tree = crate::extract::parse(Language::Python, &text, None).unwrap();
    others
        .reached(Language::Python, relative, &text, &tree, &[])
        .iter()
        .map(|file| file.path.clone())
        .collect()
}

#[test]
fn a_test_file_reaches_the_modules_it_uses_and_what_they_use_nearest_first() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "tests/__init__.py", "");
    write(
        root,
        "tests/helpers.py",
        "from tests.network import fetch\n\ndef fetch_index():\n    return fetch('https://pypi.org')\n",
    );
    write(
        root,
        "tests/network.py",
        "import requests\n\ndef fetch(url):\n    return requests.get(url)\n",
    );
    write(
        root,
        "tests/test_a.py",
        "import os\nfrom tests.helpers import fetch_index\nfrom tests.missing import nothing\n\n\
         def test_a():\n    fetch_index()\n    nothing()\n",
    );
    let others = OtherFiles::pending(root);
    assert_eq!(
        reached(&others, "tests/test_a.py"),
        ["tests/helpers.py", "tests/network.py"],
        "`os` and the missing module are no files of the workspace"
    );
}

#[test]
fn a_changed_file_is_read_again_and_a_deleted_one_is_no_longer_reached() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "helpers.py", "def wait():\n    pass\n");
    write(
        root,
        "test_a.py",
        "from helpers import wait\n\ndef test_a():\n    wait()\n",
    );
    let others = OtherFiles::pending(root);
    let first = |others: &OtherFiles| {
        let text = std::fs::read_to_string(root.join("test_a.py")).unwrap();
        let tree = crate::extract::parse(Language::Python, &text, None).unwrap();
        let found = others.reached(Language::Python, "test_a.py", &text, &tree, &[]);
        found.first().map(|file| file.text.clone())
    };
    assert_eq!(first(&others).as_deref(), Some("def wait():\n    pass\n"));
    write(
        root,
        "helpers.py",
        "import time\n\ndef wait():\n    time.sleep(5)\n",
    );
    others.forget(&root.join("helpers.py"));
    assert_eq!(
        first(&others).as_deref(),
        Some("import time\n\ndef wait():\n    time.sleep(5)\n")
    );
    std::fs::remove_file(root.join("helpers.py")).unwrap();
    assert_eq!(first(&others), None);
}

#[test]
fn at_most_a_bounded_number_of_files_is_reached() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut test = String::new();
    for n in 0..40 {
        write(root, &format!("helper_{n}.py"), "def run():\n    pass\n");
        test.push_str(&format!("import helper_{n}\n"));
    }
    test.push_str("\ndef test_a():\n");
    for n in 0..40 {
        test.push_str(&format!("    helper_{n}.run()\n"));
    }
    write(root, "test_a.py", &test);
    let others = OtherFiles::pending(root);
    let found = reached(&others, "test_a.py");
    assert_eq!(found.len(), MAX_OTHER_FILES);
    assert_eq!(found[0], "helper_0.py", "the first named first");
}

#[test]
fn a_name_looked_up_before_the_symbols_are_known_is_reported_once_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let others = OtherFiles::pending(root);
    assert_eq!(
        others.find(Language::Java, &Wanted::Type("Base".into()), "T.java"),
        None
    );
    assert!(
        others.set_symbols(Arc::new(Symbols::default())),
        "the lookup missed them"
    );
    assert!(
        !others.set_symbols(Arc::new(Symbols::default())),
        "said once"
    );
}

#[test]
fn a_type_is_found_in_the_nearest_file_that_defines_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let base = "package x;\npublic abstract class Base {}\n";
    write(root, "a/src/test/java/x/Base.java", base);
    write(root, "b/src/test/java/x/Base.java", base);
    write(
        root,
        "b/src/test/java/x/Util.java",
        "package x;\nclass Util {}\nclass Base {}\n",
    );
    let sources = WorkspaceSources::new(root, globset::GlobSet::empty());
    let others = OtherFiles::on_demand(Arc::new(sources), false);
    let wanted = Wanted::Type("Base".into());
    assert_eq!(
        others
            .find(Language::Java, &wanted, "b/src/test/java/x/BTest.java")
            .as_deref(),
        Some("b/src/test/java/x/Base.java"),
        "the same directory, and the file named after the class"
    );
    assert_eq!(
        others
            .find(Language::Java, &wanted, "a/src/test/java/x/ATest.java")
            .as_deref(),
        Some("a/src/test/java/x/Base.java")
    );
    assert_eq!(others.find(Language::Python, &wanted, "a/t.py"), None);
}
