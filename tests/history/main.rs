//! Learning from a repository's flaky history, on the fixture repository `tests/fixtures/history/shop`
//! (Java, Python and Rust tests, git-ignored generated tests) and the reports and flaky list beside it.
//! The fixtures are only read here; tests that write use temporary directories.
//!
//! The modules, one job each: `repository` finds and reads the tests; `flaky_list`,
//! `annotations` and `junit` label them from each source of history (a list of flaky tests and
//! the names it may spell, markers in the code, JUnit XML reports of several runs); `index`
//! combines the sources and builds, updates and rebuilds the index from them.

mod annotations;
mod flaky_list;
mod index;
mod junit;
mod repository;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use flakesense::category::Category;
use flakesense::history::{self, Repository, SourceReport};

fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/history")
        .join(relative)
}

fn shop() -> Repository {
    let root = fixture("shop");
    let (files, problems) = history::find_test_files(&root).expect("the fixture is readable");
    assert!(problems.is_empty(), "{problems:?}");
    history::read_repository(&root, &files, &|| {}).expect("the fixture is readable")
}

/// What a report labels flaky: id to categories.
fn flaky_ids(repository: &Repository, report: &SourceReport) -> BTreeMap<String, Vec<Category>> {
    report
        .flaky
        .iter()
        .map(|(&test, categories)| {
            (
                repository.tests[test].test.id.clone(),
                categories.iter().copied().collect(),
            )
        })
        .collect()
}

fn expected(pairs: &[(&str, &[Category])]) -> BTreeMap<String, Vec<Category>> {
    pairs
        .iter()
        .map(|(id, categories)| (id.to_string(), categories.to_vec()))
        .collect()
}

fn position(repository: &Repository, id: &str) -> usize {
    repository
        .tests
        .iter()
        .position(|test| test.test.id == id)
        .unwrap_or_else(|| panic!("no test {id}"))
}

fn runs(names: &[&str]) -> Vec<PathBuf> {
    names
        .iter()
        .map(|name| fixture(&format!("reports/{name}")))
        .collect()
}

const ORDER: &str = "com.example.shop.OrderServiceTest";
const INVENTORY: &str = "com.example.shop.InventoryTest";
const CART: &str = "python/tests/test_cart.py";
const CACHE: &str = "rust/src/cache.rs::tests";
const CLIENT: &str = "rust/src/net/client.rs::tests";
