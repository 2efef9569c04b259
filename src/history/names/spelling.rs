//! The spellings of a test name, each cut into the same segments, and the keys a test is known
//! under.
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
}
