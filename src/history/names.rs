//! Test names as people and tools spell them, matched to the canonical ids of a repository's tests.
//!
//! A spelling is cut into segments (packages, classes, modules, the function) at `::`, `#`, `$`,
//! `/` and `.`, after dropping a parameter suffix (`[param]`, `(String)[1]`) and a file extension
//! before `::`. So `pkg.Outer$Inner#method`, `pkg.Outer.Inner.method`, `pkg.Outer::Inner::method`,
//! pytest's `tests/test_x.py::TestA::test_b[1]` and the dotted `tests.test_x.TestA.test_b` of its
//! JUnit XML all become segment lists.
//!
//! Each test is known under one or more keys, segment lists derived from its id: Java
//! `pkg.Outer$Inner#method` gives `[pkg, Outer, Inner, method]`; Python `tests/test_x.py::A::t`
//! gives `[tests, test_x, A, t]`; Rust `src/a/b.rs::tests::t` gives its file path
//! `[src, a, b, tests, t]` and its module path `[a, b, tests, t]` (see [`rust_module_path`]).
//!
//! A spelling matches a key when one is a suffix of the other: a report may name less
//! (`OrderTest#creates`) or more (nextest's `my-crate::a::b::tests::t`, a pytest run from a parent
//! directory) than the key. The best match wins: an exact match over a suffix, a longer shared
//! suffix over a shorter one. Several tests tied for the best are ambiguous: the caller reports
//! them and labels none, because a wrong flaky label teaches the model as much as a right one.

use rustc_hash::FxHashMap as HashMap;

use crate::language::Language;

/// A test name cut into segments, with the language its spelling implies, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spelling {
    pub segments: Vec<String>,
    pub language: Option<Language>,
}

impl Spelling {
    /// Reads a name in any of the spellings of the module documentation; `None` when nothing
    /// of a name remains.
    pub fn parse(text: &str) -> Option<Spelling> {
        let text = strip_parameters(text.trim()).trim();
        let language = language_hint(text);
        let mut segments = split_segments(text);
        if segments.first().is_some_and(|first| first == "crate") {
            segments.remove(0);
        }
        (!segments.is_empty()).then_some(Spelling { segments, language })
    }

    /// The name of a JUnit XML `<testcase>`: its `classname` (or the suite's name) and `name`.
    /// cargo-nextest puts the binary in `classname` and the module path in `name`, both with `::`;
    /// no other dialect uses `::`, so it marks Rust.
    pub fn junit(classname: &str, name: &str) -> Option<Spelling> {
        let name = strip_parameters(name.trim()).trim();
        if name.is_empty() {
            return None;
        }
        let language = (classname.contains("::") || name.contains("::")).then_some(Language::Rust);
        let mut segments = split_segments(classname);
        segments.extend(split_segments(name));
        (!segments.is_empty()).then_some(Spelling { segments, language })
    }

    /// The segments joined with dots, for messages and edit distances.
    pub fn joined(&self) -> String {
        self.segments.join(".")
    }
}

/// Drops what parametrised tests add to a name: pytest's `[param]`, JUnit's `(String)` and
/// `[1]`. No package, class, module or function name contains `[` or `(`.
fn strip_parameters(text: &str) -> &str {
    match text.find(['[', '(']) {
        Some(at) => &text[..at],
        None => text,
    }
}

/// The language a spelling's form implies: a file extension, Rust's `crate::`, Java's `#` or `$`.
fn language_hint(text: &str) -> Option<Language> {
    let has_extension = |extension: &str| {
        text.ends_with(extension)
            || text.contains(&format!("{extension}::"))
            || text.contains(&format!("{extension}#"))
    };
    if has_extension(".py") {
        Some(Language::Python)
    } else if has_extension(".rs") || text.starts_with("crate::") {
        Some(Language::Rust)
    } else if has_extension(".java") || text.contains(['#', '$']) {
        Some(Language::Java)
    } else {
        None
    }
}

/// Cuts a spelling into segments at `::`, `#`, `$`, `/`, `\` and `.`, dropping file extensions.
fn split_segments(text: &str) -> Vec<String> {
    let mut text = text.replace('\\', "/");
    for extension in [".py", ".rs", ".java"] {
        for separator in ["::", "#"] {
            text = text.replace(&format!("{extension}{separator}"), separator);
        }
        if let Some(stripped) = text.strip_suffix(extension) {
            text = stripped.to_string();
        }
    }
    text.replace("::", "/")
        .split(['/', '#', '$', '.'])
        .map(str::trim)
        .filter(|segment| !segment.is_empty())
        .map(str::to_string)
        .collect()
}

/// The module path of a Rust file as test names show it, with the binary's name first for
/// integration tests, examples, benches and `src/bin` targets:
///
/// - `src/lib.rs`, `src/main.rs` → `[]`; `src/a/mod.rs` → `[a]`; `src/a/b.rs` → `[a, b]`
/// - `tests/api.rs` → `[api]`; `tests/it/main.rs` → `[it]`; `tests/it/db.rs` → `[it, db]`
/// - `src/bin/tool.rs` → `[tool]`; `src/bin/tool/cli.rs` → `[tool, cli]`
///
/// The crate root is the last `src` directory of the path (workspace members nest), else the
/// last `tests`, `benches` or `examples` directory. `#[path]` attributes are not followed.
pub fn rust_module_path(path: &str) -> Vec<String> {
    let parts: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
    let stem = |part: &str| part.strip_suffix(".rs").unwrap_or(part).to_string();
    let (binary, modules): (Option<String>, &[&str]) =
        if let Some(src) = parts.iter().rposition(|part| *part == "src") {
            match &parts[src + 1..] {
                ["bin", binary, modules @ ..] => (Some(stem(binary)), modules),
                modules => (None, modules),
            }
        } else if let Some(root) = parts
            .iter()
            .rposition(|part| matches!(*part, "tests" | "benches" | "examples"))
        {
            match &parts[root + 1..] {
                [binary, modules @ ..] => (Some(stem(binary)), modules),
                [] => (None, &[]),
            }
        } else {
            (None, &parts[parts.len().saturating_sub(1)..])
        };
    let mut path: Vec<String> = binary.into_iter().collect();
    let last = modules.len().saturating_sub(1);
    for (position, module) in modules.iter().enumerate() {
        let module = stem(module);
        let crate_root = position == 0 && (module == "lib" || module == "main");
        if position == last && (module == "mod" || crate_root) {
            continue;
        }
        path.push(module);
    }
    path
}

/// The keys a test is known under (see the module documentation).
pub fn keys_of(language: Language, id: &str) -> Vec<Vec<String>> {
    match language {
        Language::Java => vec![split_segments(id)],
        Language::Python => vec![split_segments(id)],
        Language::Rust => {
            let (path, rest) = id.split_once("::").unwrap_or(("", id));
            let rest: Vec<String> = rest.split("::").map(str::to_string).collect();
            let by_file: Vec<String> = split_segments(path)
                .into_iter()
                .chain(rest.clone())
                .collect();
            let by_module: Vec<String> = rust_module_path(path).into_iter().chain(rest).collect();
            if by_file == by_module {
                vec![by_file]
            } else {
                vec![by_module, by_file]
            }
        }
    }
}

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

/// How many names, those sharing most trigrams with a spelling, are measured by edit distance.
const CANDIDATE_NAMES: usize = 64;

/// The trigrams of a name padded with a space at both ends, each once.
fn trigrams(name: &str) -> Vec<[char; 3]> {
    let padded: Vec<char> = std::iter::once(' ')
        .chain(name.chars())
        .chain(std::iter::once(' '))
        .collect();
    let mut grams: Vec<[char; 3]> = padded
        .windows(3)
        .map(|window| [window[0], window[1], window[2]])
        .collect();
    if padded.len() < 3 {
        grams.push([padded[0], padded[padded.len() - 1], ' ']);
    }
    grams.sort_unstable();
    grams.dedup();
    grams
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

    /// The tests whose function names share most trigrams with the spelling's: those worth
    /// measuring by edit distance.
    fn candidates(&self, spelling: &Spelling) -> Vec<usize> {
        let Some(last) = spelling.segments.last() else {
            return Vec::new();
        };
        let mut shared = vec![0u32; self.names.len()];
        for gram in trigrams(last) {
            for &name in self.trigrams.get(&gram).map_or(&[][..], Vec::as_slice) {
                shared[name as usize] += 1;
            }
        }
        let mut ranked: Vec<(u32, usize)> = shared
            .into_iter()
            .enumerate()
            .filter(|&(_, count)| count > 0)
            .map(|(name, count)| (count, name))
            .collect();
        ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut tests: Vec<usize> = ranked
            .into_iter()
            .take(CANDIDATE_NAMES)
            .flat_map(|(_, name)| &self.by_name[&self.names[name]])
            .map(|&(test, _)| test)
            .collect();
        tests.sort_unstable();
        tests.dedup();
        tests
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

    /// Up to `limit` tests whose names are closest to a spelling that matched none, by edit
    /// distance between the spelling and as many trailing segments of each key; only those within
    /// a third of the spelling's length (at least 2 edits), and within one edit of the closest,
    /// count, the closest first. Only the tests whose function names share most trigrams with the
    /// spelling's are measured (see [`Catalogue::candidates`]), so that a thousand names against
    /// ten thousand tests take a moment, not minutes.
    pub fn closest(&self, spelling: &Spelling, limit: usize) -> Vec<usize> {
        let wanted_len = spelling.joined().chars().count();
        let bound = (wanted_len / 3).max(2);
        let mut scored: Vec<(usize, usize)> = Vec::new();
        for test in self.candidates(spelling) {
            let named = &self.tests[test];
            if spelling
                .language
                .is_some_and(|language| language != named.language)
            {
                continue;
            }
            let distance = named
                .keys
                .iter()
                .filter_map(|key| {
                    let shared = key.len().min(spelling.segments.len());
                    let key_tail = key[key.len() - shared..].join(".");
                    let spelling_tail =
                        spelling.segments[spelling.segments.len() - shared..].join(".");
                    // A key shorter than the spelling is compared with the spelling's tail, but
                    // the dropped segments still count against it.
                    let dropped = wanted_len - spelling_tail.chars().count();
                    bounded_edit_distance(&spelling_tail, &key_tail, bound)
                        .map(|distance| distance + dropped.min(1))
                })
                .min();
            if let Some(distance) = distance.filter(|&distance| distance <= bound) {
                scored.push((distance, test));
            }
        }
        scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| self.id(a.1).cmp(self.id(b.1))));
        // Only the nearest few: a name one edit from the spelling makes those four edits away noise.
        let nearest = scored.first().map_or(0, |&(distance, _)| distance);
        scored
            .into_iter()
            .take_while(|&(distance, _)| distance <= nearest + 1)
            .take(limit)
            .map(|(_, test)| test)
            .collect()
    }
}

/// Levenshtein distance between `a` and `b` in characters, or `None` when it exceeds `bound`.
/// Gives up as soon as a whole row of the table exceeds the bound, so that comparing one name with
/// every test of a large repository stays cheap.
pub fn bounded_edit_distance(a: &str, b: &str, bound: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > bound {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, &from) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, &to) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(from != to);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        if current.iter().all(|&distance| distance > bound) {
            return None;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    Some(previous[b.len()]).filter(|&distance| distance <= bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments(text: &str) -> Vec<String> {
        Spelling::parse(text)
            .map(|spelling| spelling.segments)
            .unwrap_or_default()
    }

    #[test]
    fn every_java_spelling_gives_the_same_segments() {
        let expected = ["org", "ex", "Outer", "Inner", "works"];
        for spelling in [
            "org.ex.Outer$Inner#works",
            "org.ex.Outer.Inner.works",
            "org.ex.Outer.Inner#works",
            "org.ex.Outer$Inner::works",
            "org.ex.Outer.Inner#works(String, int)",
            "  org.ex.Outer$Inner.works[1]  ",
        ] {
            assert_eq!(segments(spelling), expected, "{spelling}");
        }
        assert_eq!(
            Spelling::parse("org.ex.A#b").and_then(|s| s.language),
            Some(Language::Java)
        );
    }

    #[test]
    fn pytest_node_ids_and_dotted_names_agree() {
        let expected = ["tests", "test_x", "TestA", "test_b"];
        assert_eq!(segments("tests/test_x.py::TestA::test_b[1-2]"), expected);
        assert_eq!(segments("tests.test_x.TestA.test_b"), expected);
        assert_eq!(
            Spelling::parse("tests/test_x.py::test_b").and_then(|s| s.language),
            Some(Language::Python)
        );
        let junit = Spelling::junit("tests.test_x.TestA", "test_b[a::b]");
        assert_eq!(
            junit.map(|s| s.segments),
            Some(segments("tests.test_x.TestA.test_b"))
        );
    }

    #[test]
    fn rust_paths_lose_crate_and_extensions() {
        assert_eq!(
            segments("crate::cache::tests::evicts"),
            ["cache", "tests", "evicts"]
        );
        assert_eq!(
            segments("src/cache.rs::tests::evicts"),
            ["src", "cache", "tests", "evicts"]
        );
        let nextest = Spelling::junit("shop::bin/tool", "tests::runs");
        assert_eq!(
            nextest.clone().map(|s| s.segments),
            Some(
                vec!["shop", "bin", "tool", "tests", "runs"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            )
        );
        assert_eq!(nextest.and_then(|s| s.language), Some(Language::Rust));
    }

    #[test]
    fn rust_module_paths_follow_cargo_layout() {
        let cases: [(&str, &[&str]); 11] = [
            ("src/lib.rs", &[]),
            ("src/main.rs", &[]),
            ("src/a/mod.rs", &["a"]),
            ("src/a/b.rs", &["a", "b"]),
            ("crates/core/src/net/client.rs", &["net", "client"]),
            ("tests/api.rs", &["api"]),
            ("tests/it/main.rs", &["it"]),
            ("tests/it/db.rs", &["it", "db"]),
            ("src/bin/tool.rs", &["tool"]),
            ("src/bin/tool/cli.rs", &["tool", "cli"]),
            ("build.rs", &["build"]),
        ];
        for (path, expected) in cases {
            assert_eq!(rust_module_path(path), expected, "{path}");
        }
    }

    fn catalogue() -> Catalogue {
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

    #[test]
    fn the_closest_names_are_suggested_for_a_renamed_test() {
        let catalogue = catalogue();
        let renamed = Spelling::parse("py/tests/test_cart.py::TestCart::test_add").expect("a name");
        assert_eq!(catalogue.lookup(&renamed), Lookup::Missing);
        assert_eq!(catalogue.closest(&renamed, 3), [3]);
        let unknown = Spelling::parse("com.shop.PaymentTest#charges").expect("a name");
        assert!(catalogue.closest(&unknown, 3).is_empty());
    }

    #[test]
    fn edit_distance_is_bounded() {
        assert_eq!(bounded_edit_distance("kitten", "sitting", 5), Some(3));
        assert_eq!(bounded_edit_distance("kitten", "sitting", 2), None);
        assert_eq!(bounded_edit_distance("", "abc", 3), Some(3));
        assert_eq!(bounded_edit_distance("größe", "grösse", 2), Some(2));
    }
}
