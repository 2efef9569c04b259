//! A file's tests in their context: the file parsed and scanned once, the files its tests read
//! besides it (the `conftest.py` files that apply to it, the modules its classes derive from),
//! and the signals of each test in its own code and in what it runs ([`context`]).

use std::sync::Arc;

use crate::context;
use crate::extract::{self, TestMethod};
use crate::language::Language;
use crate::signals::{self, FileScan, Place, Region, Signals};

/// A parsed source file and what the catalogue of signals finds in it: what judging its tests
/// in their context needs. Built once per version of a file.
pub struct SourceTree<'a> {
    pub language: Language,
    /// The path as ids and evidence show it (repository-relative, `/`-separated).
    pub path: &'a str,
    pub text: &'a str,
    pub tree: &'a tree_sitter::Tree,
    pub scan: FileScan,
}

impl<'a> SourceTree<'a> {
    pub fn new(
        language: Language,
        path: &'a str,
        text: &'a str,
        tree: &'a tree_sitter::Tree,
    ) -> SourceTree<'a> {
        SourceTree {
            language,
            path,
            text,
            tree,
            scan: signals::scan(language, text, tree),
        }
    }
}

/// A file read, parsed and scanned once and shared: a `conftest.py` many test files take their
/// fixtures from.
#[derive(Debug)]
pub struct ParsedFile {
    pub language: Language,
    /// Repository-relative, `/`-separated.
    pub path: String,
    pub text: String,
    pub tree: tree_sitter::Tree,
    pub scan: FileScan,
}

impl ParsedFile {
    pub fn new(language: Language, path: String, text: String) -> Option<ParsedFile> {
        let tree = extract::parse(language, &text, None)?;
        let scan = signals::scan(language, &text, &tree);
        Some(ParsedFile {
            language,
            path,
            text,
            tree,
            scan,
        })
    }

    /// A module of the project read for the test methods classes inherit from it, scanned.
    pub fn of_module(module: &extract::PythonModule) -> ParsedFile {
        ParsedFile {
            language: Language::Python,
            path: module.path.clone(),
            text: module.text.clone(),
            tree: module.tree.clone(),
            scan: signals::scan(Language::Python, &module.text, &module.tree),
        }
    }
}

/// The modules of the project that define methods `tests` inherit, each read and scanned once
/// ([`context::base_modules`]), those of `known` kept when their text is the same: the language
/// server keeps its last read's.
pub fn base_files(tests: &[TestMethod], known: &[Arc<ParsedFile>]) -> Vec<Arc<ParsedFile>> {
    context::base_modules(tests)
        .iter()
        .map(|module| {
            known
                .iter()
                .find(|file| file.path == module.path && file.text == module.text)
                .cloned()
                .unwrap_or_else(|| Arc::new(ParsedFile::of_module(module)))
        })
        .collect()
}

/// The signals of each test of a file (in the order given): in the test's own code and in what
/// it runs ([`context`]): set-up, fields, fixtures (found in its file and in `conftests`, the
/// `conftest.py` files that apply to a Python file, nearest first), parameter sources, helpers,
/// and, for a test a class inherits from another module, that module's method and helpers.
/// `elsewhere` are the other files of the workspace its code reaches
/// ([`crate::workspace::OtherFiles`]): base classes, helper modules, the code under test.
/// `tests` must be all the tests of the file: none is ever another's context.
pub fn signals_of(
    file: &SourceTree<'_>,
    conftests: &[Arc<ParsedFile>],
    elsewhere: &[Arc<ParsedFile>],
    tests: &[TestMethod],
) -> Vec<Signals> {
    let modules = other_files(tests, &[], elsewhere);
    let resolver = resolver(file, conftests, &modules, tests);
    tests
        .iter()
        .map(|test| signals_in_context(file, conftests, &modules, test, &resolver.context(test)))
        .collect()
}

/// The other files a file's tests reach, each once: the modules they inherit methods from
/// ([`base_files`], those of `known` kept when unchanged), then the files of `elsewhere` that
/// are not among them.
pub fn other_files(
    tests: &[TestMethod],
    known: &[Arc<ParsedFile>],
    elsewhere: &[Arc<ParsedFile>],
) -> Vec<Arc<ParsedFile>> {
    let mut files = base_files(tests, known);
    for file in elsewhere {
        if !files.iter().any(|known| known.path == file.path) {
            files.push(file.clone());
        }
    }
    files
}

/// What resolves the context of the tests of `file` (all of them, see [`signals_of`]), with
/// the `conftest.py` files that apply to it and the other files its tests reach
/// ([`other_files`]).
pub fn resolver<'a>(
    file: &SourceTree<'a>,
    conftests: &'a [Arc<ParsedFile>],
    modules: &'a [Arc<ParsedFile>],
    tests: &[TestMethod],
) -> context::Resolver<'a> {
    let source_file = |parsed: &'a Arc<ParsedFile>| context::SourceFile {
        source: &parsed.text,
        tree: &parsed.tree,
    };
    let conftest_sources: Vec<context::SourceFile<'a>> =
        conftests.iter().map(source_file).collect();
    let module_sources: Vec<(&'a str, context::SourceFile<'a>)> = modules
        .iter()
        .map(|module| (module.path.as_str(), source_file(module)))
        .collect();
    context::Resolver::new(
        file.language,
        context::SourceFile {
            source: file.text,
            tree: file.tree,
        },
        &conftest_sources,
        &module_sources,
        tests,
    )
}

/// The object a call at `at` in `text` is made on: `indexer` for `indexer.start()`, whether `at`
/// is where the call or its method's name begins; none for `start()`, `this.start()` or
/// `Indexer.start()` (a class, by its capital).
fn receiver_at(text: &str, at: usize) -> Option<String> {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    let forward: String = text
        .get(at..)?
        .chars()
        .take_while(|&c| is_name(c))
        .collect();
    let after = text.get(at + forward.len()..)?.trim_start();
    let name = if !forward.is_empty() && after.starts_with('.') {
        forward
    } else {
        let before = text.get(..at)?.trim_end().strip_suffix('.')?.trim_end();
        let start = before
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_name(c))
            .last()?
            .0;
        before[start..].to_string()
    };
    let first = name.chars().next()?;
    let object = (first.is_lowercase() || first == '_')
        && !matches!(name.as_str(), "this" | "self" | "super");
    object.then_some(name)
}

/// The signals of one test of `file` that runs `units` (see [`context::Resolver::context`]);
/// `conftests` and `modules` are the extra files the units name, in that order.
pub fn signals_in_context(
    file: &SourceTree<'_>,
    conftests: &[Arc<ParsedFile>],
    modules: &[Arc<ParsedFile>],
    test: &TestMethod,
    units: &[context::ContextUnit],
) -> Signals {
    // A test inherited from another module is that module's method.
    let elsewhere = test
        .inherited
        .as_ref()
        .and_then(|inherited| inherited.elsewhere.as_ref())
        .and_then(|elsewhere| {
            let module = modules
                .iter()
                .find(|module| module.path == elsewhere.module.path)?;
            Some((&module.scan, elsewhere.range.clone(), module.path.clone()))
        });
    let (scan, range, inherited_from) = match elsewhere {
        Some((scan, range, path)) => (scan, range, Some(path)),
        None => (&file.scan, test.range.clone(), None),
    };
    let mut regions = vec![Region {
        scan,
        range,
        place: Place::Test,
        called_at: None,
        cleanup: false,
        under_test: false,
        receiver: None,
        runs_in: None,
    }];
    let extras = conftests.iter().chain(modules);
    for unit in units {
        let (scan, path) = match unit.file.and_then(|index| extras.clone().nth(index)) {
            Some(extra) => (&extra.scan, Some(extra.path.clone())),
            None => (&file.scan, None),
        };
        let under_test = path
            .as_deref()
            .is_some_and(|path| !context::is_test_code(path));
        regions.push(Region {
            scan,
            range: unit.range.clone(),
            place: Place::Context {
                kind: unit.kind.describe(),
                name: unit.name.clone(),
                path,
            },
            runs_in: Some(unit.runs_in.describe()),
            called_at: unit.anchor.map(|anchor| anchor.at),
            cleanup: unit.anchor.is_some_and(|anchor| anchor.cleanup),
            under_test,
            receiver: unit
                .anchor
                .and_then(|anchor| receiver_at(file.text, anchor.at)),
        });
    }
    let mut signals = signals::detect_regions(file.language, &regions);
    signals.size = signals::size_features(&test.code);
    // A test switched off (`#[ignore]`, `@Disabled`) runs in no run: no mechanism can fail one.
    if inherited_from.is_none() && test.switched_off(file.text) {
        signals.mechanisms.clear();
    }
    // Evidence in an inherited method names its module: the lines are that file's. The features
    // stay the test's own, as the method is the test.
    if let Some(path) = inherited_from {
        let inherited = Place::Context {
            kind: "inherited test",
            name: test.name.clone(),
            path: Some(path),
        };
        let parts = signals
            .mechanisms
            .iter_mut()
            .flat_map(|mechanism| &mut mechanism.parts)
            .map(|part| &mut part.place);
        for place in signals
            .risks
            .iter_mut()
            .map(|hit| &mut hit.place)
            .chain(parts)
        {
            if matches!(place, Place::Test) {
                *place = inherited.clone();
            }
        }
    }
    signals
}

#[cfg(test)]
mod tests {
    use super::receiver_at;

    #[test]
    fn the_receiver_of_a_call_is_read_from_its_start_or_its_method_name() {
        let text = "indexer.start(); this.run(); Indexer.run(); go(); self.server.start()";
        assert_eq!(receiver_at(text, 0).as_deref(), Some("indexer"));
        assert_eq!(receiver_at(text, 8).as_deref(), Some("indexer"));
        assert_eq!(receiver_at(text, 22), None, "this");
        assert_eq!(receiver_at(text, 37), None, "a class");
        assert_eq!(receiver_at(text, 44), None, "no receiver");
        assert_eq!(receiver_at(text, 62).as_deref(), Some("server"));
    }
}
