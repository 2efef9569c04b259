//! What a test runs besides its own body: set-up and tear-down, field initialisers, fixtures,
//! parameter sources and the helpers it calls, in its file and in the other files of the
//! workspace it reaches ([`wanted`]), so that a risk found there counts for the test and the
//! evidence can say where.
//!
//! The module is pure: callers parse the files (the test's own and, for Python, the `conftest.py`
//! files that [`conftest_candidates`] names) and get back, per test, the [`ContextUnit`]s it runs.
//! Nothing here fails or panics on broken code; the intact parts of a file still resolve.
//!
//! A [`Resolver`] reads the file once (definitions by name, call sites by offset) and then
//! follows each test's references breadth first, so a unit keeps the smallest depth at which
//! it is reached, and the bounds ([`MAX_HELPER_DEPTH`], [`MAX_DEPTH`], [`MAX_UNITS`]) drop the
//! farthest units first.

mod graph;
mod java;
mod python;
mod rust;
mod syntax;

use std::ops::Range;

use crate::extract::TestMethod;
use crate::language::Language;

/// Helpers are followed through at most this many calls: a helper the test calls directly is at
/// depth 1, a helper that one calls at depth 2, and so on.
pub const MAX_HELPER_DEPTH: u8 = 3;

/// Any other unit (a fixture requested by a fixture, a parameter source of a fixture) is followed
/// down to this depth.
pub const MAX_DEPTH: u8 = 4;

/// At most this many units per test, the nearest kept: a test whose helpers reach half the file
/// would otherwise be judged as the whole file.
pub const MAX_UNITS: usize = 32;

/// Why a test runs a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContextKind {
    /// Runs before the test: JUnit's `@Before` and `@BeforeEach`, TestNG's `@BeforeMethod`,
    /// JUnit 3 and unittest `setUp`, pytest's `setup_method` and its kin, a Java test class's
    /// constructor. What runs once for many tests is left out (Java's `@BeforeAll`, unittest's
    /// `setUpClass`): see `java::annotations` and `python`.
    SetUp,
    /// Runs after the test: the `@After*` and `tearDown` twins of [`ContextKind::SetUp`].
    TearDown,
    /// A Java instance field's initialiser or an instance initializer block of the test's class
    /// (static ones run once for the class and are left out, like `@BeforeAll`).
    Field,
    /// A pytest or rstest fixture the test requests, directly or through other fixtures; not a
    /// pytest fixture whose scope is wider than a function, set up once for many tests.
    Fixture,
    /// Where the test's parameters come from: a `@MethodSource` factory, a TestNG
    /// `@DataProvider`, the value a `@pytest.mark.parametrize` names.
    ParameterSource,
    /// A function or method that the test, or another unit, calls: of its file, or of another
    /// file of the workspace (a base class, a helper module, the code under test).
    Helper,
}

impl ContextKind {
    /// How evidence names the kind: "set-up", "fixture", "helper".
    pub fn describe(self) -> &'static str {
        match self {
            ContextKind::SetUp => "set-up",
            ContextKind::TearDown => "tear-down",
            ContextKind::Field => "field",
            ContextKind::Fixture => "fixture",
            ContextKind::ParameterSource => "parameter source",
            ContextKind::Helper => "helper",
        }
    }
}

/// One piece of code a test runs besides its own body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextUnit {
    pub kind: ContextKind,
    /// What the evidence calls it: `setUp`, `server` (a fixture, by the name tests request),
    /// `startServer` (a helper), `client` (a field), `static initializer`.
    pub name: String,
    /// `None`: the test's own file; `Some(i)`: the i-th extra file given to [`resolve`].
    pub file: Option<usize>,
    /// Byte range of the unit's whole code in that file, annotations and decorators included.
    pub range: Range<usize>,
    /// 1 for what the test uses directly, 2 for what that uses, and so on.
    pub depth: u8,
    /// For a helper, and what a helper runs: the call in the test that runs it.
    pub anchor: Option<Anchor>,
    /// The kind of the unit the test uses directly that this one runs within: its own kind for
    /// such a unit, `SetUp` for a helper a set-up method calls (`super.setup()`), `Helper` for
    /// one the test's own code calls.
    pub runs_in: ContextKind,
}

/// Where in a test's own code a helper runs: the call that runs it (the first, when there are
/// several), so that what the helper does can be put in the order the test does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    /// The call's byte offset in the test's file.
    pub at: usize,
    /// The call is clean-up code: in a `finally` block.
    pub cleanup: bool,
}

/// A parsed file: its text and the tree-sitter tree of that text.
#[derive(Debug, Clone, Copy)]
pub struct SourceFile<'a> {
    pub source: &'a str,
    pub tree: &'a tree_sitter::Tree,
}

/// For each test (same order as `tests`), the units it runs besides its own body, nearest first
/// (by depth, then file, then position), each unit once and never the test itself.
///
/// `tests` are the tests extracted from `file`. `conftests` are the `conftest.py` files that
/// apply to a Python file, nearest directory first (see [`conftest_candidates`]); other
/// languages ignore them. A file whose tree is not of `language` gives no units.
pub fn resolve(
    language: Language,
    file: SourceFile,
    conftests: &[SourceFile],
    tests: &[TestMethod],
) -> Vec<Vec<ContextUnit>> {
    let resolver = Resolver::new(language, file, conftests, &[], tests);
    tests.iter().map(|test| resolver.context(test)).collect()
}

/// A file read for resolving its tests' context: its definitions by name and its call sites.
/// Reading walks the file once; resolving a test then touches only what the test reaches, so a
/// caller that needs one test (the edited one) pays for one.
pub struct Resolver<'a> {
    definitions: Definitions<'a>,
}

enum Definitions<'a> {
    Java(java::JavaContext<'a>),
    Python(python::PythonContext<'a>),
    Rust(rust::RustContext<'a>),
    /// A tree of another language than the one asked for.
    Foreign,
}

/// A name a file's code uses that another file of the workspace may define: what the workspace
/// looks up ([`crate::workspace::OtherFiles`]) to give a [`Resolver`] the other files its tests
/// reach.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Wanted {
    /// A class, interface or struct by its simple name: a Java superclass the file does not
    /// declare, a class whose static methods or constructor the file calls.
    Type(String),
    /// A free function or fixture by name, defined in a file the workspace's symbols name.
    Function(String),
    /// A file by its path relative to the workspace root (`/`-separated): the first of the
    /// candidates that exists. A Python module an import or `pytest_plugins` names, a Rust module
    /// a `mod name;` declares.
    File(Vec<String>),
}

/// What the code of `file` (at `path`, relative to the workspace root) uses that other files of
/// the workspace may define, each once, in the order the file names them.
pub fn wanted(language: Language, path: &str, file: SourceFile) -> Vec<Wanted> {
    if *file.tree.language() != language.grammar() {
        return Vec::new();
    }
    let mut wanted = match language {
        Language::Java => java::wanted(file),
        Language::Python => python::wanted(path, file),
        Language::Rust => rust::wanted(path, file),
    };
    let mut seen = std::collections::HashSet::new();
    wanted.retain(|one| seen.insert(one.clone()));
    wanted
}

/// The modules of the project that define test methods `tests` inherit ([`TestMethod::inherited`]),
/// each once, in the order of the tests: a unit of the `i`-th is `conftests.len() + i` among a
/// [`Resolver`]'s extra files.
pub fn base_modules(tests: &[TestMethod]) -> Vec<std::sync::Arc<crate::extract::PythonModule>> {
    let mut modules: Vec<std::sync::Arc<crate::extract::PythonModule>> = Vec::new();
    let elsewhere = tests
        .iter()
        .filter_map(|test| test.inherited.as_ref()?.elsewhere.as_ref());
    for elsewhere in elsewhere {
        if !modules
            .iter()
            .any(|known| known.path == elsewhere.module.path)
        {
            modules.push(elsewhere.module.clone());
        }
    }
    modules
}

impl<'a> Resolver<'a> {
    /// Reads `file` and, for Python, the `conftest.py` files that apply to it, nearest directory
    /// first (see [`conftest_candidates`]), and the other files of the workspace its tests reach
    /// (path and file): the modules that define methods its tests inherit ([`base_modules`]),
    /// and the files that define what it uses ([`wanted`]): base classes, helpers, fixtures'
    /// plugin modules, the code under test. `tests` are all the tests extracted from `file`: none
    /// of them is ever a unit of another. A unit's `file` counts the conftest files, then the
    /// modules.
    pub fn new(
        language: Language,
        file: SourceFile<'a>,
        conftests: &[SourceFile<'a>],
        modules: &[(&'a str, SourceFile<'a>)],
        tests: &[TestMethod],
    ) -> Resolver<'a> {
        let grammar = language.grammar();
        let definitions = match language {
            _ if *file.tree.language() != grammar => Definitions::Foreign,
            Language::Java => {
                let modules = of_language(modules, &grammar);
                Definitions::Java(java::JavaContext::new(file, &modules, tests))
            }
            Language::Python => {
                let conftests: Vec<SourceFile> = conftests
                    .iter()
                    .copied()
                    .filter(|conftest| *conftest.tree.language() == grammar)
                    .collect();
                let modules = of_language(modules, &grammar);
                Definitions::Python(python::PythonContext::new(
                    file, &conftests, &modules, tests,
                ))
            }
            Language::Rust => {
                let modules = of_language(modules, &grammar);
                Definitions::Rust(rust::RustContext::new(file, &modules, tests))
            }
        };
        Resolver { definitions }
    }

    /// The units `test` (one of the file's tests) runs besides its own body, nearest first (by
    /// depth, then file, then position), each unit once and never the test itself.
    pub fn context(&self, test: &TestMethod) -> Vec<ContextUnit> {
        match &self.definitions {
            Definitions::Java(java) => java.units(test),
            Definitions::Python(python) => python.units(test),
            Definitions::Rust(rust) => rust.units(test),
            Definitions::Foreign => Vec::new(),
        }
    }
}

/// The files of `files` whose tree is of `grammar`. Callers give only files of the test's
/// language ([`crate::workspace::OtherFiles`] reads no other), so the places of units hold.
fn of_language<'a>(
    files: &[(&'a str, SourceFile<'a>)],
    grammar: &tree_sitter::Language,
) -> Vec<(&'a str, SourceFile<'a>)> {
    files
        .iter()
        .copied()
        .filter(|(_, file)| *file.tree.language() == *grammar)
        .collect()
}

/// What resolving reads of the code under `node`: the nodes of the kinds its walk of the file
/// visits (calls, classes, macro bodies), each as the text before its arguments, all of it when
/// it has none. Two versions of a function with the same list run the same code, so an edit
/// inside it that leaves the list alone leaves what every test runs as it was.
pub fn calls_of<'s>(
    language: Language,
    node: tree_sitter::Node<'_>,
    source: &'s str,
) -> Vec<(u16, &'s str)> {
    let kinds = match language {
        Language::Java => java::walked_kinds(node),
        Language::Python => python::walked_kinds(node),
        Language::Rust => rust::walked_kinds(node),
    };
    let mut found = Vec::new();
    syntax::preorder(node, kinds, |call, _| {
        let end = call
            .child_by_field_name("arguments")
            .map_or(call.end_byte(), |arguments| arguments.start_byte());
        found.push((
            call.kind_id(),
            source.get(call.start_byte()..end).unwrap_or(""),
        ));
    });
    found
}

/// Whether the file at `path` (workspace-relative, `/`-separated) is test code: in a test
/// directory (`test`, `tests`, `testing`, `src/test`, `src/it`, `testFixtures`, `benches`), or
/// named as a test module or support file is (`test_*.py`, `*_test.py`, `conftest.py`,
/// `*Test.java`, `*Tests.java`, `*TestBase.java`, `*TestCase.java`, `*_test.rs`, `tests.rs`).
/// Anything else a test reaches is the code under test.
pub fn is_test_code(path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').collect();
    let (name, directories) = segments.split_last().unwrap_or((&"", &[]));
    let test_directory = directories.iter().any(|directory| {
        matches!(
            *directory,
            "test" | "tests" | "testing" | "it" | "testFixtures" | "benches" | "test-utils"
        ) || directory.ends_with("-test")
            || directory.ends_with("-tests")
            || directory.ends_with("_test")
            || directory.ends_with("_tests")
    });
    let stem = name.rsplit_once('.').map_or(*name, |(stem, _)| stem);
    let test_name = name.starts_with("test_")
        || *name == CONFTEST
        || stem.ends_with("_test")
        || stem == "tests"
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
        || stem.ends_with("TestBase")
        || stem.ends_with("TestCase")
        || stem
            .strip_prefix("Test")
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()));
    test_directory || test_name
}

/// The file pytest takes a directory's fixtures and hooks from.
pub const CONFTEST: &str = "conftest.py";

/// The repository-relative paths where pytest looks for `conftest.py` files that apply to the test
/// file at `relative_path`, nearest directory first: `a/b/test_x.py` gives `a/b/conftest.py`,
/// `a/conftest.py` and `conftest.py`. Callers read the ones that exist and pass them, in this
/// order, to [`resolve`].
pub fn conftest_candidates(relative_path: &str) -> Vec<String> {
    let segments: Vec<&str> = relative_path
        .split(['/', '\\'])
        .filter(|segment| !segment.is_empty() && *segment != ".")
        .collect();
    let directories = segments.len().saturating_sub(1);
    (0..=directories)
        .rev()
        .map(|depth| {
            let mut path = segments[..depth].join("/");
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(CONFTEST);
            path
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{extract_tests_from_tree, parse};

    /// Resolves `source` with `conftests` (nearest first) and lists, per test by name, its units
    /// as `Kind name depth`, with `conftest i` after the units of the i-th conftest.
    pub(super) fn units_by_test(
        language: Language,
        source: &str,
        conftests: &[&str],
    ) -> Vec<(String, Vec<String>)> {
        let parse = |source: &str| parse(language, source, None).expect("the grammars load");
        let tree = parse(source);
        let conftest_trees: Vec<tree_sitter::Tree> = conftests.iter().map(|c| parse(c)).collect();
        let conftest_files: Vec<SourceFile> = conftests
            .iter()
            .zip(&conftest_trees)
            .map(|(source, tree)| SourceFile { source, tree })
            .collect();
        let tests = extract_tests_from_tree(language, "t", source, &tree).tests;
        let file = SourceFile {
            source,
            tree: &tree,
        };
        let contexts = resolve(language, file, &conftest_files, &tests);
        let describe = |unit: &ContextUnit| {
            let place = unit.file.map(|file| format!(" conftest {file}"));
            let place = place.unwrap_or_default();
            format!("{:?} {} {}{place}", unit.kind, unit.name, unit.depth)
        };
        let units = contexts
            .iter()
            .map(|units| units.iter().map(describe).collect());
        tests
            .iter()
            .map(|test| test.name.clone())
            .zip(units)
            .collect()
    }

    #[test]
    fn empty_files_have_no_context() {
        for language in Language::ALL {
            assert!(units_by_test(language, "", &[""]).is_empty());
            let file = "";
            let tree = parse(language, file, None).expect("the grammars load");
            let source = SourceFile {
                source: file,
                tree: &tree,
            };
            assert!(resolve(language, source, &[], &[]).is_empty());
        }
    }

    #[test]
    fn broken_code_still_resolves_its_intact_parts() {
        let cases = [
            (
                Language::Java,
                "class T {\n  @Before void setUp() { connect(); }\n  void connect() {}\n  \
                 void helper() {}\n  @Test void a() { helper(); }\n  void broken( { \n}\n",
                "a",
                &["SetUp setUp 1", "Helper helper 1", "Helper connect 2"][..],
            ),
            (
                Language::Python,
                "def helper():\n    pass\n\nclass Broken(:\n    pass\n\ndef test_a():\n    helper()\n",
                "test_a",
                &["Helper helper 1"][..],
            ),
            (
                Language::Rust,
                "fn helper() {}\n#[test]\nfn a() { helper(); }\nfn broken( {\n",
                "a",
                &["Helper helper 1"][..],
            ),
        ];
        for (language, source, test, expected) in cases {
            let found = units_by_test(language, source, &[]);
            let units = found.iter().find(|(name, _)| name == test);
            let units = units.map(|(_, units)| units.as_slice()).unwrap_or_default();
            assert_eq!(units, expected, "{language}");
        }
    }

    #[test]
    fn test_code_is_told_from_the_code_under_test_by_its_place_and_name() {
        for path in [
            "src/test/java/a/ClusterTestBase.java",
            "tests/helpers.py",
            "pkg/test_x.py",
            "pkg/conftest.py",
            "tests/common/mod.rs",
            "paimon-core/src/test/java/a/Util.java",
            "src/a/b_test.rs",
            "module/AbstractTestCase.java",
            "legacy/TestOrders.java",
        ] {
            assert!(is_test_code(path), "{path}");
        }
        for path in [
            "src/main/java/a/Indexer.java",
            "src/anyio/_core/_eventloop.py",
            "src/net.rs",
            "latest/Contest.java",
            "attestation.py",
            "src/main/java/a/Testimony.java",
        ] {
            assert!(!is_test_code(path), "{path}");
        }
    }

    #[test]
    fn conftest_candidates_go_from_the_nearest_directory_to_the_root() {
        assert_eq!(
            conftest_candidates("a/b/test_x.py"),
            ["a/b/conftest.py", "a/conftest.py", "conftest.py"]
        );
        assert_eq!(conftest_candidates("test_x.py"), ["conftest.py"]);
        assert_eq!(
            conftest_candidates("./tests//test_x.py"),
            ["tests/conftest.py", "conftest.py"]
        );
    }
}
