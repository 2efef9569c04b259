//! Tests of context across files: helpers of `mod name;` files, the code under test through
//! `crate::` and the package's name, and what [`super::wanted`] asks for.

use crate::context::{ContextUnit, Resolver, SourceFile, Wanted};
use crate::extract::{extract_tests_from_tree, parse};
use crate::language::Language;

/// Resolves the tests of the first of `files` (path, source), extracted as if at `tests_path`,
/// with the others as the files its tests reach, and lists the units of `test` as
/// `Kind name depth path:line`, where the unit starts.
fn units_seen_from(tests_path: &str, files: &[(&str, &str)], test: &str) -> Vec<String> {
    let trees: Vec<tree_sitter::Tree> = files
        .iter()
        .map(|(_, source)| parse(Language::Rust, source, None).expect("the grammar loads"))
        .collect();
    let (own_source, others) = (files[0].1, &files[1..]);
    let extraction = extract_tests_from_tree(Language::Rust, tests_path, own_source, &trees[0]);
    let own = SourceFile {
        source: own_source,
        tree: &trees[0],
    };
    let others: Vec<(&str, SourceFile)> = others
        .iter()
        .zip(&trees[1..])
        .map(|(&(path, source), tree)| (path, SourceFile { source, tree }))
        .collect();
    let resolver = Resolver::new(Language::Rust, own, &[], &others, &extraction.tests);
    let test = extraction.tests.iter().find(|found| found.name == test);
    let units: Vec<ContextUnit> = test.map(|test| resolver.context(test)).unwrap_or_default();
    units
        .iter()
        .map(|unit| {
            let (path, source) = unit.file.map_or(files[0], |file| files[file + 1]);
            let line = source[..unit.range.start].matches('\n').count() + 1;
            format!("{:?} {} {} {path}:{line}", unit.kind, unit.name, unit.depth)
        })
        .collect()
}

fn units_of(files: &[(&str, &str)], test: &str) -> Vec<String> {
    units_seen_from(files[0].0, files, test)
}

fn wanted_by(path: &str, source: &str) -> Vec<Wanted> {
    let tree = parse(Language::Rust, source, None).expect("the grammar loads");
    crate::context::wanted(
        Language::Rust,
        path,
        SourceFile {
            source,
            tree: &tree,
        },
    )
}

fn file(candidates: &[&str]) -> Wanted {
    Wanted::File(candidates.iter().map(|path| path.to_string()).collect())
}

const IT: &str = "mod common;\n\
                  #[test]\nfn serves() {\n    let port = common::start_server();\n    assert!(port > 0);\n}\n";
const COMMON: &str = "use std::thread;\n\
                      pub fn start_server() -> u16 {\n    thread::spawn(|| {});\n    8080\n}\n";

#[test]
fn a_helper_of_the_common_module_is_the_test_s_context() {
    let files = [("tests/it.rs", IT), ("tests/common/mod.rs", COMMON)];
    assert_eq!(
        units_of(&files, "serves"),
        ["Helper start_server 1 tests/common/mod.rs:2"]
    );
    // `tests/common.rs` is the other file rustc takes `mod common;` from.
    let files = [("tests/it.rs", IT), ("tests/common.rs", COMMON)];
    assert_eq!(
        units_of(&files, "serves"),
        ["Helper start_server 1 tests/common.rs:2"]
    );
    // Read alone, the test calls nothing it can see.
    assert!(units_of(&files[..1], "serves").is_empty());
}

#[test]
fn imports_and_nested_module_files_lead_to_helpers_and_what_they_call() {
    let it = "mod common;\nuse common::setup;\n\
              #[test]\nfn direct() {\n    common::server::start();\n}\n\
              #[test]\nfn imported() {\n    setup();\n}\n\
              #[test]\nfn in_a_macro() {\n    assert!(common::server::ready());\n}\n";
    let common = "pub mod server;\npub fn setup() {\n    server::start();\n}\n";
    let server =
        "pub fn start() {\n    bind();\n}\nfn bind() {}\npub fn ready() -> bool { true }\n";
    let files = [
        ("tests/it.rs", it),
        ("tests/common/mod.rs", common),
        ("tests/common/server.rs", server),
    ];
    assert_eq!(
        units_of(&files, "direct"),
        [
            "Helper start 1 tests/common/server.rs:1",
            "Helper bind 2 tests/common/server.rs:4"
        ]
    );
    assert_eq!(
        units_of(&files, "imported"),
        [
            "Helper setup 1 tests/common/mod.rs:2",
            "Helper start 2 tests/common/server.rs:1",
            "Helper bind 3 tests/common/server.rs:4"
        ]
    );
    assert_eq!(
        units_of(&files, "in_a_macro"),
        ["Helper ready 1 tests/common/server.rs:5"]
    );
}

#[test]
fn a_path_attribute_names_the_file_and_the_module_path_decides_between_namesakes() {
    let it = "#[path = \"support/helpers.rs\"]\nmod helpers;\nmod common;\n\
              #[test]\nfn t() {\n    helpers::start();\n    common::start();\n}\n";
    let start = "pub fn start() {}\n";
    let files = [
        ("tests/it.rs", it),
        ("tests/helpers.rs", start),
        ("tests/support/helpers.rs", start),
        ("tests/common/mod.rs", start),
    ];
    assert_eq!(
        units_of(&files, "t"),
        [
            "Helper start 1 tests/support/helpers.rs:1",
            "Helper start 1 tests/common/mod.rs:1"
        ]
    );
}

#[test]
fn a_library_test_reaches_the_module_crate_paths_name() {
    let net = "pub fn connect() {\n    handshake();\n}\nfn handshake() {}\n";
    let lib = "mod net;\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {\n        \
               crate::net::connect();\n    }\n}\n";
    let files = [("src/lib.rs", lib), ("src/net.rs", net)];
    assert_eq!(
        units_of(&files, "t"),
        [
            "Helper connect 1 src/net.rs:1",
            "Helper handshake 2 src/net.rs:4"
        ]
    );
    // From a module whose crate root is not read, `crate::` still leads to `src/net.rs`.
    let pool = "#[cfg(test)]\nmod tests {\n    use crate::net::connect;\n    #[test]\n    fn t() {\n        \
                crate::net::connect();\n        connect();\n    }\n}\n";
    let files = [("src/pool.rs", pool), ("src/net.rs", net)];
    assert_eq!(
        units_of(&files, "t"),
        [
            "Helper connect 1 src/net.rs:1",
            "Helper handshake 2 src/net.rs:4"
        ]
    );
}

#[test]
fn tests_in_a_module_file_see_their_parent_through_super() {
    let tests = "use super::*;\n#[test]\nfn t() {\n    connect();\n    super::close();\n}\n";
    let net = "#[cfg(test)]\nmod tests;\npub fn connect() {}\npub fn close() {}\n";
    let files = [("src/net/tests.rs", tests), ("src/net.rs", net)];
    assert_eq!(
        units_of(&files, "t"),
        [
            "Helper connect 1 src/net.rs:3",
            "Helper close 1 src/net.rs:4"
        ]
    );
}

#[test]
fn an_integration_test_reaches_the_library_by_the_package_s_name() {
    let it = "use shop::pool::Pool;\n\
              #[test]\nfn t() {\n    let pool = Pool::new();\n    shop::server::spawn();\n    \
              std::thread::spawn(|| {});\n}\n";
    let pool = "pub struct Pool;\nimpl Pool {\n    pub fn new() -> Pool {\n        Pool\n    }\n}\n\
                pub fn new() {}\n";
    let server = "pub fn spawn() {}\n";
    let files = [
        ("tests/it.rs", it),
        ("src/pool.rs", pool),
        ("src/server.rs", server),
    ];
    assert_eq!(
        units_of(&files, "t"),
        [
            "Helper new 1 src/pool.rs:3",
            "Helper spawn 1 src/server.rs:1"
        ]
    );
}

#[test]
fn a_method_on_a_local_of_a_plainly_known_type_is_that_type_s_method() {
    let it = "use shop::pool::Pool;\n\
              #[test]\nfn t() {\n    let pool = Pool::new(4);\n    pool.spawn_worker();\n    \
              assert!(pool.is_full());\n    let other = make();\n    other.stop();\n}\n";
    let pool = "pub struct Pool;\nimpl Pool {\n    pub fn new(size: usize) -> Pool { Pool }\n    \
                pub fn spawn_worker(&self) {}\n    pub fn is_full(&self) -> bool { true }\n}\n\
                pub struct Other;\nimpl Other {\n    pub fn spawn_worker(&self) {}\n    pub fn stop(&self) {}\n}\n";
    let files = [("tests/it.rs", it), ("src/pool.rs", pool)];
    assert_eq!(
        units_of(&files, "t"),
        [
            "Helper new 1 src/pool.rs:3",
            "Helper spawn_worker 1 src/pool.rs:4",
            "Helper is_full 1 src/pool.rs:5"
        ]
    );
}

#[test]
fn an_re_export_in_the_library_s_root_is_followed() {
    let it = "use shop::Pool;\n#[test]\nfn t() {\n    Pool::new();\n}\n";
    let lib = "mod pool;\npub use pool::Pool;\n";
    let pool = "pub struct Pool;\nimpl Pool {\n    pub fn new() -> Pool { Pool }\n}\n";
    let files = [
        ("tests/it.rs", it),
        ("src/lib.rs", lib),
        ("src/pool.rs", pool),
    ];
    assert_eq!(units_of(&files, "t"), ["Helper new 1 src/pool.rs:3"]);
}

#[test]
fn fixtures_come_from_the_modules_a_test_imports() {
    let it = "mod common;\nuse common::*;\nuse rstest::rstest;\n\
              #[rstest]\nfn t(server: u16) {}\n";
    let common = "use rstest::fixture;\n#[fixture]\npub fn server() -> u16 { port() }\nfn port() -> u16 { 1 }\n";
    let files = [("tests/it.rs", it), ("tests/common/mod.rs", common)];
    assert_eq!(
        units_of(&files, "t"),
        [
            "Fixture server 1 tests/common/mod.rs:2",
            "Helper port 2 tests/common/mod.rs:4"
        ]
    );
}

#[test]
fn a_function_of_another_package_is_found_by_its_module_s_file() {
    let it = "use other::net::connect;\n#[test]\nfn t() {\n    connect();\n}\n";
    let files = [
        ("tests/it.rs", it),
        ("crates/other/src/db.rs", "pub fn connect() {}\n"),
        ("crates/other/src/net.rs", "pub fn connect() {}\n"),
    ];
    assert_eq!(
        units_of(&files, "t"),
        ["Helper connect 1 crates/other/src/net.rs:1"]
    );
}

#[test]
fn module_loops_end() {
    // A file that declares itself, two that declare each other, globs that import each other.
    let it = "mod a;\nuse a::*;\n#[test]\nfn t() {\n    a::again::again::f();\n    b::g();\n    missing();\n}\n";
    let a = "#[path = \"a.rs\"]\npub mod again;\n#[path = \"b.rs\"]\npub mod b;\npub use b::*;\n\
             pub fn f() {\n    again::f();\n}\n";
    let b = "#[path = \"a.rs\"]\npub mod a;\npub use a::*;\npub use super::*;\npub fn g() {\n    a::b::a::f();\n}\n";
    let files = [("tests/it.rs", it), ("tests/a.rs", a), ("tests/b.rs", b)];
    assert_eq!(
        units_of(&files, "t"),
        ["Helper f 1 tests/a.rs:6", "Helper g 1 tests/b.rs:5"]
    );
}

#[test]
fn a_tests_file_at_an_unknown_path_finds_its_modules_by_the_end_of_their_paths() {
    let files = [("it.rs", IT), ("tests/common/mod.rs", COMMON)];
    assert_eq!(
        units_seen_from("T", &files, "serves"),
        ["Helper start_server 1 tests/common/mod.rs:2"]
    );
    assert_eq!(
        units_seen_from("/home/me/repo/tests/it.rs", &files, "serves"),
        ["Helper start_server 1 tests/common/mod.rs:2"]
    );
}

#[test]
fn broken_code_in_any_file_resolves_what_is_intact() {
    let it = "mod common;\n#[test]\nfn t() {\n    common::start_server(;\n    common::ok();\n}\n";
    let common = "pub fn start_server( -> u16 {\npub fn ok() {}\n";
    let files = [("tests/it.rs", it), ("tests/common/mod.rs", common)];
    let units = units_of(&files, "t");
    assert!(
        units.contains(&"Helper ok 1 tests/common/mod.rs:2".to_owned()),
        "{units:?}"
    );
}

#[test]
fn hostile_files_stay_bounded_and_what_is_plain_still_resolves() {
    // Modules nested thousands deep with a declaration at the bottom (in another file: the
    // tests' own file is not read that deep), thousands of declarations and glob imports of
    // each other, a use list thousands of names long, files that import themselves.
    let nested = |depth: usize| {
        format!(
            "{}mod x;\npub fn f() {{ f(); }}{}",
            "pub mod m { ".repeat(depth),
            " }".repeat(depth)
        )
    };
    let globs: String = (0..2_000)
        .map(|index| format!("mod g{index};\npub use g{index}::*;\n"))
        .collect();
    let names: Vec<String> = (0..5_000).map(|index| format!("f{index}")).collect();
    // At most 512 declarations of a file are linked: `common` comes first.
    let it = format!(
        "mod common;\nmod deep;\nuse common::{{{}}};\n\
         #[test]\nfn t() {{\n    common::start_server();\n    missing();\n    f4999();\n    \
         deep::m::m::m::f();\n}}\n{globs}\n{}\n",
        names.join(", "),
        nested(20)
    );
    let deep = nested(3_000);
    let loop_file = "pub use super::*;\npub use crate::*;\n#[path = \"mod.rs\"]\nmod again;\npub use again::*;\n";
    let files = [
        ("tests/it.rs", it.as_str()),
        ("tests/common/mod.rs", COMMON),
        ("tests/deep.rs", deep.as_str()),
        ("tests/g0.rs", loop_file),
        ("tests/g1/mod.rs", loop_file),
    ];
    assert_eq!(
        units_of(&files, "t"),
        ["Helper start_server 1 tests/common/mod.rs:2"]
    );
    assert_eq!(wanted_by("tests/it.rs", &it).len(), 64);
    assert!(wanted_by("tests/deep.rs", &deep).is_empty());
}

#[test]
fn wanted_names_the_files_of_declared_modules_as_rustc_looks_for_them() {
    let source = "mod common;\n#[path = \"support/x.rs\"]\nmod x;\nmod inline { mod deep; }\n";
    assert_eq!(
        wanted_by("tests/it.rs", source),
        [
            file(&["tests/common.rs", "tests/common/mod.rs"]),
            file(&["tests/support/x.rs"]),
            file(&["tests/inline/deep.rs", "tests/inline/deep/mod.rs"]),
        ]
    );
    assert_eq!(
        wanted_by("src/net.rs", "mod tls;\n"),
        [file(&["src/net/tls.rs", "src/net/tls/mod.rs"])]
    );
    assert_eq!(
        wanted_by("src/net/mod.rs", "mod tls;\n"),
        [file(&["src/net/tls.rs", "src/net/tls/mod.rs"])]
    );
}

#[test]
fn wanted_follows_crate_and_super_paths_to_module_files() {
    assert_eq!(
        wanted_by("src/lib.rs", "use crate::net::connect;\n"),
        [file(&[
            "src/net/connect.rs",
            "src/net/connect/mod.rs",
            "src/net.rs",
            "src/net/mod.rs"
        ])]
    );
    assert_eq!(
        wanted_by("src/pool.rs", "fn f() { crate::net::Tcp::connect(); }\n"),
        [file(&[
            "src/net.rs",
            "src/net/mod.rs",
            "src/lib.rs",
            "src/main.rs"
        ])]
    );
    assert_eq!(
        wanted_by(
            "src/net/tests.rs",
            "use super::*;\nmod inner { use super::*; }\n"
        ),
        [file(&[
            "src/net.rs",
            "src/net/mod.rs",
            "src/lib.rs",
            "src/main.rs"
        ])]
    );
}

#[test]
fn wanted_guesses_the_library_only_for_names_nothing_else_explains() {
    let source = "mod common;\nuse common::setup;\nuse std::thread;\nuse tokio::time;\n\
                  use shop::pool::Pool;\nuse shop::server::spawn;\n\
                  #[test]\nfn t() {\n    spawn();\n    setup();\n    thread::sleep(1);\n}\n";
    assert_eq!(
        wanted_by("tests/it.rs", source),
        [
            file(&["tests/common.rs", "tests/common/mod.rs"]),
            file(&["src/pool.rs", "src/pool/mod.rs", "src/lib.rs"]),
            file(&[
                "src/server/spawn.rs",
                "src/server/spawn/mod.rs",
                "src/server.rs",
                "src/server/mod.rs",
                "src/lib.rs"
            ]),
            Wanted::Function("spawn".into()),
        ]
    );
    // A library cannot name itself: there, `shop::` is another crate.
    assert!(wanted_by("src/lib.rs", "use shop::pool::Pool;\n").is_empty());
}

#[test]
fn wanted_is_bounded_for_a_file_of_many_declarations() {
    let source: String = (0..5_000).map(|index| format!("mod m{index};\n")).collect();
    assert_eq!(wanted_by("src/lib.rs", &source).len(), 64);
}
