//! The label store: what a label makes of a test, and writers that lose nothing.

use super::*;
use crate::extract::extract_tests;
use crate::language::Language;

const SOURCE: &str = r#"
import org.junit.Test;

class OrderTest {
    @Flaky
    @Test
    public void waits() throws Exception {
        Thread.sleep(100);
    }

    @Test
    public void adds() {
        assertEquals(2, 1 + 1);
    }
}
"#;

fn tests_of(source: &str) -> Vec<TestMethod> {
    extract_tests(Language::Java, "src/OrderTest.java", source).tests
}

fn label(test: &TestMethod, label: Label) -> TestLabel {
    TestLabel {
        test: test.clone(),
        path: "src/OrderTest.java".to_string(),
        label,
        categories: vec![Category::AsyncWait],
        origin: Origin::Manual,
        source: "editor".to_string(),
    }
}

#[test]
fn a_label_is_tokenised_without_its_flakiness_markers_as_history_does() {
    let root = tempfile::tempdir().unwrap();
    let tests = tests_of(SOURCE);
    let waits = &tests[0];
    assert!(waits.code.contains("@Flaky"), "{}", waits.code);
    let recorded = record(root.path(), &[label(waits, Label::Flaky)]).unwrap();
    let index = &recorded.index;
    let position = index.position(&waits.id).expect("recorded");
    let bag = index.entry_bag(position).unwrap();
    let stripped = TokenBag::from_code(
        index.params().tokenizer,
        Language::Java,
        &crate::history::tokenised_code(waits),
    );
    assert_eq!(bag, stripped);
    assert!(
        !bag.tokens.iter().any(|(token, _)| token.contains("flaky")),
        "{bag:?}"
    );
    let entry = index.entry(position);
    assert_eq!(entry.label(), Label::Flaky);
    assert_eq!(entry.origin(), Origin::Manual);
    assert_eq!(entry.categories(), [Category::AsyncWait]);
    assert_eq!(entry.path(), Some("src/OrderTest.java"));
    assert_eq!(recorded.stamp, FileStamp::of(&recorded.path));
}

#[test]
fn a_stable_mark_keeps_no_category_and_replaces_the_flaky_one() {
    let root = tempfile::tempdir().unwrap();
    let tests = tests_of(SOURCE);
    record(root.path(), &[label(&tests[1], Label::Flaky)]).unwrap();
    let recorded = record(root.path(), &[label(&tests[1], Label::Stable)]).unwrap();
    assert_eq!(recorded.index.len(), 1);
    let entry = recorded.index.entry(0);
    assert_eq!(entry.label(), Label::Stable);
    assert!(entry.categories().is_empty());
    assert!(entry.code().is_none());
}

#[test]
fn writers_in_parallel_lose_no_label() {
    let root = tempfile::tempdir().unwrap();
    let source: String = (0..40)
        .map(|n| format!("class T{n} {{ @Test public void test{n}() {{ call{n}(); }} }}\n"))
        .collect();
    let tests = tests_of(&source);
    assert_eq!(tests.len(), 40);
    std::thread::scope(|scope| {
        for half in tests.chunks(20) {
            let root = root.path();
            scope.spawn(move || {
                for test in half {
                    record(root, &[label(test, Label::Flaky)]).unwrap();
                }
            });
        }
    });
    let index = Index::load(&workspace::index_path(root.path())).unwrap();
    assert_eq!(index.len(), 40);
    for test in &tests {
        assert!(index.position(&test.id).is_some(), "{} was lost", test.id);
    }
}

#[test]
fn a_file_that_is_no_index_is_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let path = workspace::index_path(root.path());
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, "not an index").unwrap();
    let tests = tests_of(SOURCE);
    assert!(record(root.path(), &[label(&tests[0], Label::Flaky)]).is_err());
    assert_eq!(fs::read_to_string(&path).unwrap(), "not an index");
}

#[test]
fn the_lock_file_lies_beside_the_index_and_is_ignored_by_git() {
    let root = tempfile::tempdir().unwrap();
    let tests = tests_of(SOURCE);
    record(root.path(), &[label(&tests[0], Label::Flaky)]).unwrap();
    let directory = root.path().join(".flakesense");
    assert!(directory.join("index.lock").exists());
    assert_eq!(
        fs::read_to_string(directory.join(".gitignore")).unwrap(),
        "/index.lock\n"
    );
}
