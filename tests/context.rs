//! What each fixture test runs besides its own body (set-up, fields, fixtures, parameter sources,
//! helpers), checked with snapshots, and resolution on hostile input.

use std::fmt::Write as _;
use std::path::Path;

use flakesense::analysis::{ParsedFile, SourceTree, signals_of};
use flakesense::context::{
    ContextUnit, MAX_DEPTH, MAX_UNITS, Resolver, SourceFile, Wanted, conftest_candidates, resolve,
    wanted,
};
use flakesense::extract::{decode_source, extract_tests_from_tree, parse};
use flakesense::language::Language;

/// The test files, as paths under `tests/fixtures/context/`.
const FIXTURES: [&str; 7] = [
    "java/AccountServiceTest.java",
    "java/LegacyTests.java",
    "java/ShippingNgTest.java",
    "python/api/test_orders.py",
    "python/test_accounts.py",
    "python/test_mixins.py",
    "rust/server_tests.rs",
];

const FIXTURE_ROOT: &str = "tests/fixtures/context";

struct Parsed {
    path: String,
    source: String,
    tree: tree_sitter::Tree,
}

fn parse_text(language: Language, path: &str, source: String) -> Parsed {
    let tree = parse(language, &source, None).expect("the grammars load");
    Parsed {
        path: path.to_owned(),
        source,
        tree,
    }
}

fn read(relative: &str) -> Option<Parsed> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(FIXTURE_ROOT)
        .join(relative);
    let bytes = std::fs::read(&path).ok()?;
    let language = Language::from_path(&path).expect("fixtures have a known extension");
    let (source, replaced) = decode_source(&bytes);
    assert!(!replaced, "{relative} is valid UTF-8");
    Some(parse_text(language, relative, source))
}

/// The `conftest.py` files that apply to a Python fixture, nearest first, as a caller finds them.
fn conftests(relative: &str) -> Vec<Parsed> {
    if !relative.ends_with(".py") {
        return Vec::new();
    }
    let candidates = conftest_candidates(relative);
    // The fixture tree's root stands for the repository's, so `python/` is the deepest it goes.
    candidates
        .iter()
        .filter_map(|candidate| read(candidate))
        .collect()
}

fn line_of(source: &str, offset: usize) -> usize {
    source[..offset].matches('\n').count() + 1
}

/// Per test: its id, then each unit as `kind name (file:line, depth n)`.
fn describe(test_file: &Parsed, conftests: &[Parsed]) -> String {
    let language = Language::from_path(Path::new(&test_file.path)).expect("a known extension");
    let extraction = extract_tests_from_tree(
        language,
        &test_file.path,
        &test_file.source,
        &test_file.tree,
    );
    let file = SourceFile {
        source: &test_file.source,
        tree: &test_file.tree,
    };
    let extra: Vec<SourceFile> = conftests
        .iter()
        .map(|conftest| SourceFile {
            source: &conftest.source,
            tree: &conftest.tree,
        })
        .collect();
    let contexts = resolve(language, file, &extra, &extraction.tests);
    assert_eq!(contexts.len(), extraction.tests.len());
    let mut text = String::new();
    for (test, units) in extraction.tests.iter().zip(&contexts) {
        assert_consistent(test_file, conftests, &test.range, units);
        let _ = writeln!(text, "{}", test.id);
        if units.is_empty() {
            let _ = writeln!(text, "  (nothing else)");
        }
        for unit in units {
            let unit_file = unit.file.map_or(test_file, |index| &conftests[index]);
            let _ = writeln!(
                text,
                "  {kind:?} {name} ({path}:{line}, depth {depth})",
                kind = unit.kind,
                name = unit.name,
                path = unit_file.path,
                line = line_of(&unit_file.source, unit.range.start),
                depth = unit.depth,
            );
        }
    }
    text
}

/// What must hold for every unit of every test, whatever the input.
fn assert_consistent(
    test_file: &Parsed,
    conftests: &[Parsed],
    test: &std::ops::Range<usize>,
    units: &[ContextUnit],
) {
    assert!(units.len() <= MAX_UNITS);
    for (index, unit) in units.iter().enumerate() {
        let unit_file = match unit.file {
            None => test_file,
            Some(index) => conftests.get(index).expect("the file index is one given"),
        };
        let source = &unit_file.source;
        assert!(unit.range.start <= unit.range.end && unit.range.end <= source.len());
        assert!(
            source.is_char_boundary(unit.range.start) && source.is_char_boundary(unit.range.end)
        );
        assert!((1..=MAX_DEPTH).contains(&unit.depth), "{unit:?}");
        assert!(
            unit.file.is_some() || unit.range != *test,
            "a test is not its own context"
        );
        let same = |other: &ContextUnit| other.file == unit.file && other.range == unit.range;
        assert!(!units[..index].iter().any(same), "{unit:?} is listed twice");
    }
    let order: Vec<_> = units
        .iter()
        .map(|unit| (unit.depth, unit.file, unit.range.start))
        .collect();
    assert!(order.is_sorted(), "nearest units first");
}

fn snapshot(relative: &str) -> String {
    let test_file = read(relative).expect("the fixture exists");
    describe(&test_file, &conftests(relative))
}

#[test]
fn java_junit5_set_up_fields_sources_and_helpers() {
    insta::assert_snapshot!(snapshot("java/AccountServiceTest.java"));
}

#[test]
fn java_junit4_rules_and_junit3_overridden_set_up() {
    insta::assert_snapshot!(snapshot("java/LegacyTests.java"));
}

#[test]
fn java_testng_life_cycle_and_data_providers() {
    insta::assert_snapshot!(snapshot("java/ShippingNgTest.java"));
}

#[test]
fn python_pytest_fixtures_through_two_conftest_files() {
    insta::assert_snapshot!(snapshot("python/api/test_orders.py"));
}

#[test]
fn python_unittest_set_up_in_a_base_class() {
    insta::assert_snapshot!(snapshot("python/test_accounts.py"));
}

#[test]
fn python_a_mixins_test_runs_in_each_class_that_collects_it() {
    insta::assert_snapshot!(snapshot("python/test_mixins.py"));
}

#[test]
fn rust_helpers_and_rstest_fixtures() {
    insta::assert_snapshot!(snapshot("rust/server_tests.rs"));
}

/// The unit lines of one test in a description.
fn units_of<'a>(described: &'a str, test_id_suffix: &str) -> Vec<&'a str> {
    let mut lines = described.lines();
    let _ = lines.by_ref().find(|line| line.ends_with(test_id_suffix));
    lines.take_while(|line| line.starts_with("  ")).collect()
}

#[test]
fn the_nearer_conftest_overrides_the_farther_one() {
    let described = snapshot("python/api/test_orders.py");
    let units = units_of(&described, "::test_creates_an_order");
    let servers: Vec<&&str> = units
        .iter()
        .filter(|line| line.contains("Fixture server "))
        .collect();
    assert_eq!(servers.len(), 1, "{units:#?}");
    assert!(
        servers[0].contains("(python/api/conftest.py:"),
        "{units:#?}"
    );
}

#[test]
fn one_test_resolved_alone_gets_what_resolving_the_whole_file_gives_it() {
    for relative in FIXTURES {
        let test_file = read(relative).expect("the fixture exists");
        let conftests = conftests(relative);
        let language = Language::from_path(Path::new(relative)).expect("a known extension");
        let tests =
            extract_tests_from_tree(language, relative, &test_file.source, &test_file.tree).tests;
        let file = SourceFile {
            source: &test_file.source,
            tree: &test_file.tree,
        };
        let extra: Vec<SourceFile> = conftests
            .iter()
            .map(|conftest| SourceFile {
                source: &conftest.source,
                tree: &conftest.tree,
            })
            .collect();
        let all = resolve(language, file, &extra, &tests);
        let resolver = Resolver::new(language, file, &extra, &[], &tests);
        for (test, units) in tests.iter().zip(&all).rev() {
            assert_eq!(&resolver.context(test), units, "{}", test.id);
        }
    }
}

#[test]
fn truncated_fixtures_never_yield_units_outside_their_files() {
    for relative in FIXTURES {
        let whole = read(relative).expect("the fixture exists");
        let conftests = conftests(relative);
        let language = Language::from_path(Path::new(relative)).expect("a known extension");
        let bytes = whole.source.as_bytes();
        // A prime step cuts through every kind of token; decoding repairs a cut character.
        for end in (0..=bytes.len()).step_by(37) {
            let (prefix, _) = decode_source(&bytes[..end]);
            let prefix = parse_text(language, relative, prefix);
            describe(&prefix, &conftests);
        }
    }
}

#[test]
fn a_file_parsed_as_another_language_has_no_context() {
    let python = read("python/test_accounts.py").expect("the fixture exists");
    let java_tests = read("java/ShippingNgTest.java").expect("the fixture exists");
    let extraction = extract_tests_from_tree(
        Language::Java,
        "ShippingNgTest.java",
        &java_tests.source,
        &java_tests.tree,
    );
    let file = SourceFile {
        source: &python.source,
        tree: &python.tree,
    };
    let contexts = resolve(Language::Java, file, &[], &extraction.tests);
    assert_eq!(contexts.len(), extraction.tests.len());
    assert!(contexts.iter().all(Vec::is_empty));
}

#[test]
fn deeply_nested_code_does_not_break_resolution() {
    let depth = 20_000;
    let nested = |open: &str, inner: &str, close: &str| {
        format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
    };
    let cases = [
        (
            Language::Java,
            format!(
                "class A {{ @Test void t() {{ int x = {}; helper(); }} void helper() {{}} }}",
                nested("(", "1", ")")
            ),
        ),
        (
            Language::Python,
            format!(
                "def helper():\n    pass\n\ndef test_a():\n    x = {}\n    helper()\n",
                nested("[", "", "]")
            ),
        ),
        (
            Language::Rust,
            format!(
                "fn helper() {{}}\n#[test]\nfn a() {{ {} helper(); }}\n",
                nested("{", "", "}")
            ),
        ),
    ];
    for (language, source) in cases {
        let path = format!(
            "deep.{}",
            ["java", "py", "rs"][Language::ALL
                .iter()
                .position(|l| *l == language)
                .unwrap_or(0)]
        );
        let parsed = parse_text(language, &path, source);
        let described = describe(&parsed, &[]);
        assert!(
            described.contains("Helper helper"),
            "{language}: {described}"
        );
    }
}

#[test]
fn what_runs_once_for_the_class_is_no_test_s_risk() {
    // A sleep in `@BeforeAll`, a static field's server: shared by every test of the class, they
    // would warn each alike. The same sleep before each test is the test's own wait.
    let source = "class ClockTest {\n\
                  \x20 static final Server SERVER = Server.start(8080);\n\
                  \x20 @BeforeAll static void warmUp() throws Exception { Thread.sleep(500); }\n\
                  \x20 @BeforeEach void settle() throws Exception { Thread.sleep(200); }\n\
                  \x20 @Test void ticks() { assertTrue(clock.ticks()); }\n\
                  }\n";
    let tree = parse(Language::Java, source, None).expect("the Java grammar loads");
    let tests = extract_tests_from_tree(Language::Java, "ClockTest.java", source, &tree).tests;
    let file = SourceTree::new(Language::Java, "ClockTest.java", source, &tree);
    let signals = signals_of(&file, &[], &[], &tests);
    let evidence: Vec<String> = signals[0]
        .risks
        .iter()
        .map(|hit| format!("{} {}", hit.text, hit.whereabouts()))
        .collect();
    assert_eq!(
        evidence,
        ["Thread.sleep(200) in set-up `settle` (line 4)"],
        "{evidence:#?}"
    );
}

#[test]
fn what_pytest_sets_up_once_for_many_tests_is_no_test_s_risk() {
    // A module-scoped fixture that waits for a server, a `setUpClass` that sleeps: shared by every
    // test, they would warn each alike. A fixture set up for each test is the test's own wait.
    let source = "import time\nimport pytest\n\n\
                  @pytest.fixture(scope=\"module\", autouse=True)\n\
                  def server():\n    time.sleep(2)\n\n\
                  @pytest.fixture\n\
                  def settled():\n    time.sleep(0.5)\n\n\
                  def test_ticks(settled):\n    assert clock.ticks()\n\n\
                  class TestClock(unittest.TestCase):\n\
                  \x20   @classmethod\n\
                  \x20   def setUpClass(cls):\n        time.sleep(3)\n\n\
                  \x20   def test_tocks(self):\n        assert clock.tocks()\n";
    let tree = parse(Language::Python, source, None).expect("the Python grammar loads");
    let tests = extract_tests_from_tree(Language::Python, "test_clock.py", source, &tree).tests;
    let file = SourceTree::new(Language::Python, "test_clock.py", source, &tree);
    let signals = signals_of(&file, &[], &[], &tests);
    let evidence = |at: usize| -> Vec<String> {
        signals[at]
            .risks
            .iter()
            .map(|hit| format!("{} {}", hit.text, hit.whereabouts()))
            .collect()
    };
    assert_eq!(tests.len(), 2, "{tests:#?}");
    assert_eq!(
        evidence(0),
        ["time.sleep(0.5) in fixture `settled` (line 10)"]
    );
    assert!(evidence(1).is_empty(), "{:#?}", evidence(1));
}

#[test]
fn a_tolerance_is_a_risk_where_what_the_test_runs_draws_at_random() {
    // The fixture draws the samples, seeded, and the test compares their mean with a tolerance:
    // the comparison is the evidence, in the test; the draw only makes it one and is never
    // shown (a seed repeats a run on one machine, not across devices and versions). The same
    // tolerance on computed values is no risk.
    let source = "import numpy as np\nimport pytest\n\n\
                  @pytest.fixture\n\
                  def samples():\n    rng = np.random.default_rng(7)\n    return rng.normal(loc=1.0, size=1000)\n\n\
                  def test_mean(samples):\n    assert samples.mean() == pytest.approx(1.0, abs=0.05)\n\n\
                  def test_area():\n    assert area(1.0) == pytest.approx(3.14159)\n";
    let tree = parse(Language::Python, source, None).expect("the Python grammar loads");
    let tests = extract_tests_from_tree(Language::Python, "test_stats.py", source, &tree).tests;
    let file = SourceTree::new(Language::Python, "test_stats.py", source, &tree);
    let signals = signals_of(&file, &[], &[], &tests);
    let evidence =
        |at: usize| -> Vec<String> { signals[at].risks.iter().map(|hit| hit.evidence()).collect() };
    assert_eq!(tests.len(), 2, "{tests:#?}");
    assert_eq!(
        evidence(0),
        ["tolerance on sampled values `pytest.approx(1.0, abs=0.05)` (line 10)"]
    );
    assert!(evidence(1).is_empty(), "{:#?}", evidence(1));
}

/// At most this many other files are read for one test file, as a workspace bounds it.
const MAX_REACHED: usize = 16;

/// The other files a test file reaches, found as a workspace finds them: for what the test file,
/// its `conftest.py` files and each file found in turn want ([`wanted`]), the first candidate
/// that exists, each once, breadth first.
fn reached(test_file: &Parsed, conftests: &[Parsed]) -> Vec<Parsed> {
    let language = Language::from_path(Path::new(&test_file.path)).expect("a known extension");
    let wanted_by = |parsed: &Parsed| {
        let file = SourceFile {
            source: &parsed.source,
            tree: &parsed.tree,
        };
        wanted(language, &parsed.path, file)
    };
    let mut pending: Vec<Wanted> = std::iter::once(test_file)
        .chain(conftests)
        .flat_map(wanted_by)
        .collect();
    let mut found: Vec<Parsed> = Vec::new();
    let mut next = 0;
    while next < pending.len() && found.len() < MAX_REACHED {
        let Wanted::File(candidates) = &pending[next] else {
            next += 1;
            continue;
        };
        next += 1;
        let first = candidates.iter().find_map(|candidate| read(candidate));
        let Some(file) = first else {
            continue;
        };
        let known = std::iter::once(test_file).chain(conftests).chain(&found);
        if known.clone().any(|known| known.path == file.path) {
            continue;
        }
        pending.extend(wanted_by(&file));
        found.push(file);
    }
    found
}

/// Per test: its id, then each unit as `kind name (file:line, depth n)`, resolved with the
/// other files the test file reaches ([`reached`]).
fn describe_across(relative: &str) -> String {
    let test_file = read(relative).expect("the fixture exists");
    let conftests = conftests(relative);
    let modules = reached(&test_file, &conftests);
    describe_with_modules(&test_file, &conftests, &modules)
}

/// [`describe`] with `modules`, the other files the test file reaches, after its conftest files.
fn describe_with_modules(test_file: &Parsed, conftests: &[Parsed], modules: &[Parsed]) -> String {
    describe_units(test_file, conftests, modules, false)
}

/// Per test of `test_file`: its id, then each unit as `kind name (file:line, depth n)`, resolved
/// with `conftests` and the other files `modules`; with `say_none`, "(nothing else)" for a test
/// that runs no unit.
fn describe_units(
    test_file: &Parsed,
    conftests: &[Parsed],
    modules: &[Parsed],
    say_none: bool,
) -> String {
    let relative = test_file.path.as_str();
    let language = Language::from_path(Path::new(relative)).expect("a known extension");
    let tests =
        extract_tests_from_tree(language, relative, &test_file.source, &test_file.tree).tests;
    let conftest_files: Vec<SourceFile> = conftests.iter().map(source_file).collect();
    let module_files: Vec<(&str, SourceFile)> = modules
        .iter()
        .map(|module| (module.path.as_str(), source_file(module)))
        .collect();
    let resolver = Resolver::new(
        language,
        source_file(test_file),
        &conftest_files,
        &module_files,
        &tests,
    );
    let extras: Vec<Parsed> = conftests
        .iter()
        .chain(modules)
        .map(|parsed| parse_text(language, &parsed.path, parsed.source.clone()))
        .collect();
    let mut text = String::new();
    for test in &tests {
        let units = resolver.context(test);
        assert_consistent(test_file, &extras, &test.range, &units);
        let _ = writeln!(text, "{}", test.id);
        if say_none && units.is_empty() {
            let _ = writeln!(text, "  (nothing else)");
        }
        for unit in &units {
            let unit_file = unit.file.map_or(test_file, |index| &extras[index]);
            let _ = writeln!(
                text,
                "  {kind:?} {name} ({path}:{line}, depth {depth})",
                kind = unit.kind,
                name = unit.name,
                path = unit_file.path,
                line = line_of(&unit_file.source, unit.range.start),
                depth = unit.depth,
            );
        }
    }
    text
}

#[test]
fn python_helpers_the_code_under_test_and_fixtures_from_other_modules() {
    insta::assert_snapshot!(describe_across("python/shop/test_checkout.py"));
}

#[test]
fn python_a_fixture_imported_into_conftest_and_a_plugin_s_fixture_are_found_where_defined() {
    let described = describe_across("python/shop/test_checkout.py");
    let units = units_of(&described, "::test_checkout_waits_for_the_gateway");
    for expected in [
        "Fixture payment_gateway (python/support/fixtures.py:",
        "Fixture frozen_time (python/support/plugin.py:",
        "Helper connect (python/support/gateway.py:",
        "Helper now (python/support/clock.py:",
        "Helper open_cart (python/shop/pages.py:",
    ] {
        assert!(
            units.iter().any(|unit| unit.contains(expected)),
            "{expected}: {units:#?}"
        );
    }
    assert!(
        !units.iter().any(|unit| unit.contains("unused_here")),
        "{units:#?}"
    );
}

#[test]
fn truncated_modules_never_yield_units_outside_their_files() {
    let relative = "python/shop/test_checkout.py";
    let test_file = read(relative).expect("the fixture exists");
    let conftests = conftests(relative);
    let modules = reached(&test_file, &conftests);
    let paths: Vec<&str> = modules.iter().map(|module| module.path.as_str()).collect();
    // The test file's imports in order, then the conftest files' (fixtures, the plugin).
    assert_eq!(
        paths,
        [
            "python/support/clock.py",
            "python/support/waiting.py",
            "python/support/gateway.py",
            "python/shop/pages.py",
            "python/support/fixtures.py",
            "python/support/plugin.py",
        ]
    );
    // Each module cut short in turn; `describe_with_modules` checks every unit's place.
    for cut in 0..modules.len() {
        let bytes = modules[cut].source.as_bytes();
        for end in (0..=bytes.len()).step_by(37) {
            let (prefix, _) = decode_source(&bytes[..end]);
            let mut truncated: Vec<Parsed> = modules
                .iter()
                .map(|module| parse_text(Language::Python, &module.path, module.source.clone()))
                .collect();
            truncated[cut] = parse_text(Language::Python, paths[cut], prefix);
            describe_with_modules(&test_file, &conftests, &truncated);
        }
    }
}

#[test]
fn a_connection_the_imported_code_under_test_opens_is_evidence_against_the_test() {
    let relative = "python/shop/test_checkout.py";
    let test_file = read(relative).expect("the fixture exists");
    let conftests = conftests(relative);
    let modules = reached(&test_file, &conftests);
    let shared = |parsed: &Parsed| {
        let (path, text) = (parsed.path.clone(), parsed.source.clone());
        std::sync::Arc::new(ParsedFile::new(Language::Python, path, text).expect("parses"))
    };
    let conftests: Vec<_> = conftests.iter().map(shared).collect();
    let modules: Vec<_> = modules.iter().map(shared).collect();
    let tests = extract_tests_from_tree(
        Language::Python,
        relative,
        &test_file.source,
        &test_file.tree,
    )
    .tests;
    let file = SourceTree::new(
        Language::Python,
        relative,
        &test_file.source,
        &test_file.tree,
    );
    let evidence = |modules: &[std::sync::Arc<ParsedFile>]| -> Vec<String> {
        let signals = signals_of(&file, &conftests, modules, &tests);
        let at = tests
            .iter()
            .position(|test| test.name == "test_checkout_waits_for_the_gateway");
        let risks = &signals[at.expect("the test is found")].risks;
        risks
            .iter()
            .map(|hit| format!("{} {}", hit.text, hit.whereabouts()))
            .collect()
    };
    let connection = "socket.create_connection((\"pay.example.com\", 443)) \
                      in helper `connect` (python/support/gateway.py:12)";
    let across = evidence(&modules);
    assert!(across.contains(&connection.to_owned()), "{across:#?}");
    // Read alone, the file shows only what its conftest files run.
    let alone = evidence(&[]);
    assert_eq!(
        alone,
        ["time.sleep(0.5) in fixture `reset_environment` (python/conftest.py:28)"]
    );
}

/// A Rust workspace under `tests/fixtures/context/`: an integration test, its `tests/common`
/// helpers and the library it tests.
const RUST_WORKSPACE: &str = "rust/workspace";

/// Reads the workspace file at `path` (relative to the workspace's root), under that path.
fn read_in_workspace(root: &str, path: &str) -> Option<Parsed> {
    let mut parsed = read(&format!("{root}/{path}"))?;
    parsed.path = path.to_owned();
    Some(parsed)
}

/// The other files of the workspace at `root` that the file reaches, as a caller finds them:
/// the first candidate of each file it wants that exists, then what those want, breadth first.
fn reached_in_workspace(root: &str, file: &Parsed) -> Vec<Parsed> {
    let mut found: Vec<Parsed> = Vec::new();
    let mut next = 0;
    let mut wants = wanted(Language::Rust, &file.path, source_file(file));
    loop {
        for want in wants {
            let Wanted::File(candidates) = want else {
                continue;
            };
            let known = |path: &String| *path == file.path || found.iter().any(|f| f.path == *path);
            if candidates.iter().any(known) {
                continue;
            }
            if let Some(parsed) = candidates
                .iter()
                .find_map(|path| read_in_workspace(root, path))
            {
                found.push(parsed);
            }
        }
        let Some(other) = found.get(next).filter(|_| found.len() < 16) else {
            return found;
        };
        wants = wanted(Language::Rust, &other.path, source_file(other));
        next += 1;
    }
}

fn source_file(parsed: &Parsed) -> SourceFile<'_> {
    SourceFile {
        source: &parsed.source,
        tree: &parsed.tree,
    }
}

/// Per test of `test_file`: its id, then each unit, with the other files it reaches
/// ([`describe_units`], saying when a test runs nothing else).
fn describe_with_others(test_file: &Parsed, others: &[Parsed]) -> String {
    describe_units(test_file, &[], others, true)
}

#[test]
fn rust_an_integration_test_reaches_its_common_helpers_and_the_library() {
    let it = read_in_workspace(RUST_WORKSPACE, "tests/it.rs").expect("the fixture exists");
    let others = reached_in_workspace(RUST_WORKSPACE, &it);
    let paths: Vec<&str> = others.iter().map(|other| other.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "tests/common/mod.rs",
            "src/pool.rs",
            "tests/common/server.rs"
        ]
    );
    insta::assert_snapshot!(describe_with_others(&it, &others));
}

#[test]
fn truncated_workspace_files_never_yield_units_outside_their_files() {
    let it = read_in_workspace(RUST_WORKSPACE, "tests/it.rs").expect("the fixture exists");
    let others = reached_in_workspace(RUST_WORKSPACE, &it);
    for cut in 0..others.len() {
        let bytes = others[cut].source.as_bytes();
        for end in (0..=bytes.len()).step_by(37) {
            let (prefix, _) = decode_source(&bytes[..end]);
            let mut cut_others: Vec<Parsed> = others
                .iter()
                .map(|other| parse_text(Language::Rust, &other.path, other.source.clone()))
                .collect();
            cut_others[cut] = parse_text(Language::Rust, &others[cut].path, prefix);
            describe_with_others(&it, &cut_others);
        }
    }
}

/// The test file of the cluster fixture, and the other files it reaches, nearest first, as the
/// workspace would give them.
const CLUSTER: &str = "java/cluster/ClusterTest.java";
const CLUSTER_OTHERS: [&str; 4] = [
    "java/cluster/ClusterTestBase.java",
    "java/cluster/Cluster.java",
    "java/cluster/Worker.java",
    "java/cluster/Ports.java",
];

fn cluster_others() -> Vec<Parsed> {
    CLUSTER_OTHERS
        .iter()
        .map(|relative| read(relative).expect("the fixture exists"))
        .collect()
}

#[test]
fn java_context_reaches_base_classes_helpers_and_code_under_test_in_other_files() {
    let test_file = read(CLUSTER).expect("the fixture exists");
    let described = describe_with_modules(&test_file, &[], &cluster_others());
    let leader = units_of(&described, "#electsALeader");
    assert_eq!(
        leader,
        [
            "  Field cluster (java/cluster/ClusterTestBase.java:9, depth 1)",
            "  SetUp waitForLeader (java/cluster/ClusterTestBase.java:16, depth 1)",
            "  TearDown stopCluster (java/cluster/ClusterTestBase.java:21, depth 1)",
            "  Helper startCluster (java/cluster/ClusterTestBase.java:26, depth 1)",
            "  Helper Cluster.hasLeader (java/cluster/Cluster.java:18, depth 1)",
            "  Helper new Cluster (java/cluster/Cluster.java:7, depth 2)",
            "  Helper Cluster.start (java/cluster/Cluster.java:11, depth 2)",
            "  Helper Cluster.stop (java/cluster/Cluster.java:15, depth 2)",
            "  Helper Cluster.elect (java/cluster/Cluster.java:22, depth 3)",
        ],
        "{described}"
    );
    let clients = units_of(&described, "#acceptsClients");
    for expected in [
        "  Helper new Worker (java/cluster/Worker.java:6, depth 1)",
        "  Helper Worker.start (java/cluster/Worker.java:10, depth 1)",
        "  Helper Ports.awaitOpen (java/cluster/Ports.java:4, depth 1)",
        "  Helper Cluster.start (java/cluster/Cluster.java:11, depth 2)",
        "  Helper Ports.isOpen (java/cluster/Ports.java:10, depth 2)",
    ] {
        assert!(clients.contains(&expected), "{expected}: {described}");
    }
    // `@BeforeAll` runs once for the class, in the base class as in the test's.
    assert!(!described.contains("downloadImages"), "{described}");
}

#[test]
fn evidence_names_the_other_file_where_a_test_s_context_waits_and_starts_threads() {
    let test_file = read(CLUSTER).expect("the fixture exists");
    let others: Vec<std::sync::Arc<ParsedFile>> = CLUSTER_OTHERS
        .iter()
        .map(|relative| {
            let parsed = read(relative).expect("the fixture exists");
            let file = ParsedFile::new(Language::Java, parsed.path, parsed.source);
            std::sync::Arc::new(file.expect("the Java grammar loads"))
        })
        .collect();
    let tests =
        extract_tests_from_tree(Language::Java, CLUSTER, &test_file.source, &test_file.tree).tests;
    let file = SourceTree::new(Language::Java, CLUSTER, &test_file.source, &test_file.tree);
    let signals = signals_of(&file, &[], &others, &tests);
    let evidence: Vec<String> = signals[0]
        .risks
        .iter()
        .map(|hit| format!("{} {}", hit.text, hit.whereabouts()))
        .collect();
    assert_eq!(
        evidence,
        [
            "Thread.sleep(500) in set-up `waitForLeader` (java/cluster/ClusterTestBase.java:18)",
            "new Thread(this::elect) in helper `Cluster.start` (java/cluster/Cluster.java:12)",
        ]
    );
}

#[test]
fn a_java_file_wants_the_classes_its_code_uses_from_other_files() {
    let types = |relative: &str| -> Vec<String> {
        let parsed = read(relative).expect("the fixture exists");
        let file = SourceFile {
            source: &parsed.source,
            tree: &parsed.tree,
        };
        let found = wanted(Language::Java, relative, file);
        found
            .into_iter()
            .map(|one| match one {
                Wanted::Type(name) => name,
                other => panic!("a Java file wants classes, not {other:?}"),
            })
            .collect()
    };
    assert_eq!(types(CLUSTER), ["ClusterTestBase", "Worker", "Ports"]);
    // A method's calls count whether a test runs it or not (`@BeforeAll` runs once for all).
    assert_eq!(types(CLUSTER_OTHERS[0]), ["Cluster", "Images"]);
    assert_eq!(types(CLUSTER_OTHERS[2]), ["Cluster"]);
    assert!(types(CLUSTER_OTHERS[3]).is_empty());
}

#[test]
fn truncated_other_files_never_yield_units_outside_their_files() {
    let test_file = read(CLUSTER).expect("the fixture exists");
    let whole = cluster_others();
    for (at, other) in whole.iter().enumerate() {
        let bytes = other.source.as_bytes();
        for end in (0..=bytes.len()).step_by(23) {
            let (prefix, _) = decode_source(&bytes[..end]);
            let mut others = cluster_others();
            others[at] = parse_text(Language::Java, &other.path, prefix);
            describe_with_modules(&test_file, &[], &others);
        }
    }
}

#[test]
fn base_classes_that_extend_each_other_across_files_end() {
    let parsed = |path: &str, source: &str| parse_text(Language::Java, path, source.to_owned());
    let test_file = parsed(
        "ATest.java",
        "class ATest extends B {\n  @BeforeEach void a() {}\n  @Test void t() { b(); }\n}\n",
    );
    let others = [
        parsed(
            "B.java",
            "class B extends ATest {\n  void b() { a(); b(); }\n}\n",
        ),
        parsed(
            "C.java",
            "class ATest extends B {\n  @BeforeEach void c() {}\n}\n",
        ),
    ];
    let described = describe_with_modules(&test_file, &[], &others);
    assert_eq!(
        units_of(&described, "#t"),
        [
            "  SetUp a (ATest.java:2, depth 1)",
            "  Helper b (B.java:2, depth 1)",
            "  SetUp c (C.java:2, depth 1)",
        ],
        "{described}"
    );
}
