//! Test names as people and tools spell them, matched to the canonical ids of a repository's tests.
//!
//! [`spelling`] reads a name into segments and gives the keys each test is known under;
//! [`closest_names`] suggests the tests closest to a name that matched none.
//!
//! A spelling matches a key when one is a suffix of the other: a report may name less
//! (`OrderTest#creates`) or more (nextest's `my-crate::a::b::tests::t`, a pytest run from a parent
//! directory) than the key. The best match wins: an exact match over a suffix, a longer shared
//! suffix over a shorter one. Several tests tied for the best are ambiguous: the caller reports
//! them and labels none, because a wrong flaky label teaches the model as much as a right one.

pub mod closest_names;
pub mod spelling;

use rustc_hash::FxHashMap as HashMap;

use crate::language::Language;

use closest_names::trigrams;
use spelling::{Spelling, keys_of};

/// The answer to a lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Exactly one test is the best match (its position in the catalogue).
    Found(usize),
    /// Several tests match equally well, sorted by position.
    Ambiguous(Vec<usize>),
    Missing,
}

#[derive(Debug)]
struct Named {
    id: String,
    language: Language,
    keys: Vec<Vec<String>>,
}

/// The tests of a repository by every name they can be called.
#[derive(Debug, Default)]
pub struct Catalogue {
    tests: Vec<Named>,
    /// The last segment (the function's name) of each key, to the `(test, key)` pairs ending in it.
    by_name: HashMap<String, Vec<(usize, usize)>>,
    /// The distinct last segments, and for each trigram of them (padded at both ends), the
    /// names holding it: suggestions look at the names sharing most trigrams with a spelling
    /// instead of measuring the distance to every test.
    names: Vec<String>,
    trigrams: HashMap<[char; 3], Vec<u32>>,
}

impl Catalogue {
    /// A catalogue of tests given as `(language, canonical id)`, in the caller's order; lookups
    /// answer with positions in that order.
    pub fn new<'a>(tests: impl IntoIterator<Item = (Language, &'a str)>) -> Catalogue {
        let mut catalogue = Catalogue::default();
        for (position, (language, id)) in tests.into_iter().enumerate() {
            let keys = keys_of(language, id);
            for (key_index, key) in keys.iter().enumerate() {
                if let Some(last) = key.last() {
                    catalogue
                        .by_name
                        .entry(last.clone())
                        .or_default()
                        .push((position, key_index));
                }
            }
            catalogue.tests.push(Named {
                id: id.to_string(),
                language,
                keys,
            });
        }
        let mut names: Vec<String> = catalogue.by_name.keys().cloned().collect();
        names.sort_unstable();
        for (position, name) in names.iter().enumerate() {
            for gram in trigrams(name) {
                catalogue
                    .trigrams
                    .entry(gram)
                    .or_default()
                    .push(position as u32);
            }
        }
        catalogue.names = names;
        catalogue
    }

    pub fn len(&self) -> usize {
        self.tests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tests.is_empty()
    }

    /// The canonical id of the test at `position`.
    pub fn id(&self, position: usize) -> &str {
        &self.tests[position].id
    }

    /// The test a spelling names. A Rust name one segment longer than any test is tried without
    /// its last segment too: `rstest` and `test_case` turn a test into a module of cases
    /// (`tests::parses::case_1`), and the case's test is the function.
    pub fn lookup(&self, spelling: &Spelling) -> Lookup {
        let found = self.lookup_segments(&spelling.segments, spelling.language);
        if found != Lookup::Missing || spelling.segments.len() < 2 {
            return found;
        }
        if matches!(spelling.language, None | Some(Language::Rust)) {
            let parent = &spelling.segments[..spelling.segments.len() - 1];
            return self.lookup_segments(parent, Some(Language::Rust));
        }
        Lookup::Missing
    }

    fn lookup_segments(&self, segments: &[String], language: Option<Language>) -> Lookup {
        let Some(candidates) = segments.last().and_then(|last| self.by_name.get(last)) else {
            return Lookup::Missing;
        };
        // Per test its best score: (exact match, length of the shared suffix).
        let mut best: Vec<(usize, (bool, usize))> = Vec::new();
        for &(test, key_index) in candidates {
            let named = &self.tests[test];
            if language.is_some_and(|language| language != named.language) {
                continue;
            }
            let key = &named.keys[key_index];
            let score = if key.as_slice() == segments {
                (true, key.len())
            } else if key.ends_with(segments) {
                (false, segments.len())
            } else if segments.ends_with(key) {
                (false, key.len())
            } else {
                continue;
            };
            match best.iter_mut().find(|(seen, _)| *seen == test) {
                Some((_, seen_score)) => *seen_score = (*seen_score).max(score),
                None => best.push((test, score)),
            }
        }
        let Some(top) = best.iter().map(|&(_, score)| score).max() else {
            return Lookup::Missing;
        };
        let mut winners: Vec<usize> = best
            .into_iter()
            .filter(|&(_, score)| score == top)
            .map(|(test, _)| test)
            .collect();
        winners.sort_unstable();
        match winners.as_slice() {
            [one] => Lookup::Found(*one),
            _ => Lookup::Ambiguous(winners),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn catalogue() -> Catalogue {
        Catalogue::new([
            (Language::Java, "com.shop.OrderTest#creates"),
            (Language::Java, "com.shop.legacy.OrderTest#creates"),
            (Language::Java, "com.shop.OrderTest$Refunds#refunds"),
            (
                Language::Python,
                "py/tests/test_cart.py::TestCart::test_adds",
            ),
            (Language::Python, "py/tests/test_cart.py::test_total"),
            (Language::Rust, "rust/src/cache.rs::tests::evicts"),
            (Language::Rust, "rust/src/lib.rs::tests::evicts"),
            (Language::Rust, "rust/tests/api.rs::serves"),
            (Language::Rust, "rust/src/cases.rs::tests::parses"),
        ])
    }

    fn find(catalogue: &Catalogue, text: &str) -> Lookup {
        catalogue.lookup(&Spelling::parse(text).expect("a name"))
    }

    #[test]
    fn suffixes_match_and_ties_are_ambiguous() {
        let catalogue = catalogue();
        assert_eq!(
            find(&catalogue, "com.shop.OrderTest#creates"),
            Lookup::Found(0)
        );
        assert_eq!(
            find(&catalogue, "legacy.OrderTest.creates"),
            Lookup::Found(1)
        );
        assert_eq!(
            find(&catalogue, "OrderTest#creates"),
            Lookup::Ambiguous(vec![0, 1])
        );
        assert_eq!(
            find(&catalogue, "com.shop.OrderTest.Refunds.refunds"),
            Lookup::Found(2)
        );
        assert_eq!(
            find(&catalogue, "OrderTest$Refunds#refunds"),
            Lookup::Found(2)
        );
        assert_eq!(
            find(&catalogue, "com.shop.PaymentTest#charges"),
            Lookup::Missing
        );
    }

    #[test]
    fn python_names_match_with_and_without_the_root_directory() {
        let catalogue = catalogue();
        assert_eq!(
            find(&catalogue, "py/tests/test_cart.py::TestCart::test_adds[2]"),
            Lookup::Found(3)
        );
        assert_eq!(
            find(&catalogue, "tests/test_cart.py::test_total"),
            Lookup::Found(4)
        );
        let junit = Spelling::junit("tests.test_cart.TestCart", "test_adds[big]");
        assert_eq!(catalogue.lookup(&junit.expect("a name")), Lookup::Found(3));
    }

    #[test]
    fn rust_names_match_by_module_path_and_an_exact_match_wins() {
        let catalogue = catalogue();
        assert_eq!(
            find(&catalogue, "crate::cache::tests::evicts"),
            Lookup::Found(5)
        );
        assert_eq!(find(&catalogue, "cache::tests::evicts"), Lookup::Found(5));
        // `tests::evicts` is the whole module path of the one in lib.rs.
        assert_eq!(find(&catalogue, "crate::tests::evicts"), Lookup::Found(6));
        assert_eq!(
            find(&catalogue, "rust/src/cache.rs::tests::evicts"),
            Lookup::Found(5)
        );
        let nextest = Spelling::junit("shop", "cache::tests::evicts").expect("a name");
        assert_eq!(catalogue.lookup(&nextest), Lookup::Found(5));
        let integration = Spelling::junit("shop::api", "serves").expect("a name");
        assert_eq!(catalogue.lookup(&integration), Lookup::Found(7));
        // An rstest case names its function's module.
        let case = Spelling::junit("shop", "cases::tests::parses::case_2").expect("a name");
        assert_eq!(catalogue.lookup(&case), Lookup::Found(8));
    }
}
