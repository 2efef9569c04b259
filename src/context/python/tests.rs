//! A test's context across files: helpers, classes and fixtures imported from other modules of
//! the workspace, and the fixtures of plugin modules, each unit placed in the file that defines it.

use crate::context::{ContextUnit, Resolver, SourceFile};
use crate::extract::{extract_tests_from_tree, parse};
use crate::language::Language;

/// Resolves the test file at `path` with `conftests` (nearest first) and `modules` (path and
/// text, in the order a caller gives them) and lists the units of `test` as
/// `Kind name depth place`: the place is `conftest i` or `module i path` (`i` the unit's file
/// index), nothing in the test's own file.
fn units_across(
    path: &str,
    source: &str,
    conftests: &[&str],
    modules: &[(&str, &str)],
    test: &str,
) -> Vec<String> {
    let parse = |source: &str| parse(Language::Python, source, None).expect("the grammar loads");
    let tree = parse(source);
    let conftest_trees: Vec<tree_sitter::Tree> = conftests.iter().map(|c| parse(c)).collect();
    let module_trees: Vec<tree_sitter::Tree> = modules.iter().map(|(_, m)| parse(m)).collect();
    let conftest_files: Vec<SourceFile> = conftests
        .iter()
        .zip(&conftest_trees)
        .map(|(source, tree)| SourceFile { source, tree })
        .collect();
    let module_files: Vec<(&str, SourceFile)> = modules
        .iter()
        .zip(&module_trees)
        .map(|((path, source), tree)| (*path, SourceFile { source, tree }))
        .collect();
    let tests = extract_tests_from_tree(Language::Python, path, source, &tree).tests;
    let file = SourceFile {
        source,
        tree: &tree,
    };
    let resolver = Resolver::new(
        Language::Python,
        file,
        &conftest_files,
        &module_files,
        &tests,
    );
    let Some(test) = tests.iter().find(|found| found.name == test) else {
        return Vec::new();
    };
    let describe = |unit: &ContextUnit| {
        let place = match unit.file {
            None => String::new(),
            Some(index) if index < conftests.len() => format!(" conftest {index}"),
            Some(index) => {
                let module = modules.get(index - conftests.len());
                let path = module.map_or("(none)", |(path, _)| path);
                format!(" module {index} {path}")
            }
        };
        format!("{:?} {} {}{place}", unit.kind, unit.name, unit.depth)
    };
    resolver.context(test).iter().map(describe).collect()
}

const HELPERS: &str = "\
import time

from tests.clock import advance


def wait_for_server(port):
    time.sleep(1)
    probe(port)
    advance(5)


def probe(port):
    pass


def _private():
    pass
";

const CLOCK: &str = "def advance(seconds):\n    pass\n";

#[test]
fn a_helper_imported_by_name_runs_in_its_module_and_so_do_its_own_calls() {
    let test = "from tests.helpers import wait_for_server\n\n\
                def test_up():\n    wait_for_server(8080)\n";
    let modules = [("tests/helpers.py", HELPERS), ("tests/clock.py", CLOCK)];
    assert_eq!(
        units_across("tests/test_up.py", test, &[""], &modules, "test_up"),
        [
            "Helper wait_for_server 1 module 1 tests/helpers.py",
            "Helper probe 2 module 1 tests/helpers.py",
            "Helper advance 2 module 2 tests/clock.py",
        ]
    );
}

#[test]
fn a_module_imported_under_another_name_or_from_its_package_brings_its_functions() {
    let modules = [("tests/helpers.py", HELPERS), ("tests/clock.py", CLOCK)];
    for test in [
        "import tests.helpers as h\n\ndef test_up():\n    h.wait_for_server(1)\n",
        "from tests import helpers\n\ndef test_up():\n    helpers.wait_for_server(1)\n",
        "import tests.helpers\n\ndef test_up():\n    tests.helpers.wait_for_server(1)\n",
        "from .helpers import wait_for_server\n\ndef test_up():\n    wait_for_server(1)\n",
        "from tests.helpers import *\n\ndef test_up():\n    wait_for_server(1)\n",
    ] {
        let units = units_across("tests/test_up.py", test, &[], &modules, "test_up");
        assert_eq!(
            units.first().map(String::as_str),
            Some("Helper wait_for_server 1 module 0 tests/helpers.py"),
            "{test}"
        );
    }
}

#[test]
fn a_star_import_brings_no_private_names_and_a_missing_module_brings_nothing() {
    let test = "from tests.helpers import *\nfrom tests.missing import gone\n\n\
                def test_up():\n    _private()\n    gone()\n";
    let modules = [("tests/helpers.py", HELPERS)];
    assert!(units_across("tests/test_up.py", test, &[], &modules, "test_up").is_empty());
}

const SERVER: &str = "\
import socket


class Server:
    def __init__(self, port):
        self.bind(port)

    def bind(self, port):
        socket.socket().bind((\"\", port))

    def start(self):
        pass

    def stop(self):
        pass
";

#[test]
fn an_imported_class_runs_its_init_and_the_methods_called_on_its_instance() {
    let test = "from app.server import Server\n\n\
                def test_serves():\n    server = Server(port=0)\n    try:\n        server.start()\n\
                \x20   finally:\n        server.stop()\n";
    let modules = [("src/app/server.py", SERVER)];
    assert_eq!(
        units_across("tests/test_server.py", test, &[], &modules, "test_serves"),
        [
            "Helper Server 1 module 0 src/app/server.py",
            "Helper start 1 module 0 src/app/server.py",
            "Helper stop 1 module 0 src/app/server.py",
            "Helper bind 2 module 0 src/app/server.py",
        ]
    );
}

#[test]
fn an_instance_made_in_set_up_is_the_one_the_test_calls() {
    let test = "import unittest\nimport app.server as s\n\n\
                class TestServer(unittest.TestCase):\n\
                \x20   def setUp(self):\n        self.server = s.Server(0)\n\n\
                \x20   def test_starts(self):\n        self.server.start()\n";
    let modules = [("app/server.py", SERVER)];
    assert_eq!(
        units_across("tests/test_server.py", test, &[], &modules, "test_starts"),
        [
            "SetUp setUp 1",
            "Helper start 1 module 0 app/server.py",
            "Helper Server 2 module 0 app/server.py",
            "Helper bind 3 module 0 app/server.py",
        ]
    );
}

#[test]
fn a_class_of_the_test_s_own_file_runs_its_init_and_methods_without_any_module() {
    let test = "class FakeClock:\n    def __init__(self):\n        self.started = now()\n\n\
                \x20   def tick(self):\n        pass\n\n\
                def now():\n    pass\n\n\
                def test_ticks():\n    clock = FakeClock()\n    clock.tick()\n    unknown.tick()\n";
    assert_eq!(
        units_across("tests/test_clock.py", test, &[], &[], "test_ticks"),
        ["Helper FakeClock 1", "Helper tick 1", "Helper now 2"]
    );
}

const PLUGIN: &str = "\
import time

import pytest


@pytest.fixture
def db(db_url):
    time.sleep(1)


@pytest.fixture
def db_url():
    return \"sqlite://\"


@pytest.fixture(autouse=True)
def isolation():
    pass
";

#[test]
fn a_plugin_named_by_a_conftest_two_directories_up_brings_its_fixtures() {
    let test = "def test_query(db):\n    assert db\n";
    let near = "import pytest\n\n@pytest.fixture\ndef other():\n    pass\n";
    let root = "pytest_plugins = [\"tests.plugins.db\"]\n";
    let modules = [("tests/plugins/db.py", PLUGIN)];
    assert_eq!(
        units_across(
            "tests/api/test_query.py",
            test,
            &[near, root],
            &modules,
            "test_query"
        ),
        [
            "Fixture db 1 module 2 tests/plugins/db.py",
            "Fixture isolation 1 module 2 tests/plugins/db.py",
            "Fixture db_url 2 module 2 tests/plugins/db.py",
        ]
    );
}

#[test]
fn a_conftest_fixture_shadows_a_plugin_s_and_the_test_module_s_shadows_both() {
    let conftest = "import pytest\n\npytest_plugins = \"tests.plugins.db\"\n\n\
                    @pytest.fixture\ndef db():\n    pass\n";
    let modules = [("tests/plugins/db.py", PLUGIN)];
    let test = "def test_query(db):\n    assert db\n";
    assert_eq!(
        units_across(
            "tests/test_query.py",
            test,
            &[conftest],
            &modules,
            "test_query"
        ),
        [
            "Fixture db 1 conftest 0",
            "Fixture isolation 1 module 1 tests/plugins/db.py"
        ]
    );
    let own = "import pytest\n\n@pytest.fixture\ndef db():\n    pass\n\n\
               def test_query(db):\n    assert db\n";
    let units = units_across(
        "tests/test_query.py",
        own,
        &[conftest],
        &modules,
        "test_query",
    );
    assert_eq!(units[0], "Fixture db 1", "{units:#?}");
}

const FIXTURES: &str = "\
import pytest


@pytest.fixture
def port():
    return 0


@pytest.fixture
def db_server(port):
    return start(port)


@pytest.fixture(autouse=True)
def clean():
    pass


def start(port):
    return port
";

#[test]
fn a_fixture_imported_by_name_into_conftest_is_found_where_it_is_defined() {
    let conftest = "from tests.fixtures import db_server\n";
    let modules = [("tests/fixtures.py", FIXTURES)];
    let test = "def test_query(db_server):\n    assert db_server\n";
    // `port` is in the fixtures' module only: pytest does not see it from the test, and
    // `clean` is set up for the tests of modules that import or star-import it.
    assert_eq!(
        units_across(
            "tests/test_query.py",
            test,
            &[conftest],
            &modules,
            "test_query"
        ),
        [
            "Fixture db_server 1 module 1 tests/fixtures.py",
            "Helper start 2 module 1 tests/fixtures.py",
        ]
    );
    let star = "from tests.fixtures import *\n";
    assert_eq!(
        units_across("tests/test_query.py", test, &[star], &modules, "test_query"),
        [
            "Fixture db_server 1 module 1 tests/fixtures.py",
            "Fixture clean 1 module 1 tests/fixtures.py",
            "Fixture port 2 module 1 tests/fixtures.py",
            "Helper start 2 module 1 tests/fixtures.py",
        ]
    );
}

#[test]
fn an_import_cycle_ends() {
    let ping = "from tests.pong import pong\nfrom tests.pong import *\n\n\
                def ping():\n    pong()\n";
    let pong = "from tests.ping import ping\nfrom tests.ping import *\n\n\
                def pong():\n    ping()\n";
    let modules = [("tests/ping.py", ping), ("tests/pong.py", pong)];
    let test = "from tests.ping import ping\nfrom tests.ping import *\n\n\
                def test_cycle(undefined_anywhere):\n    ping()\n    nowhere()\n";
    assert_eq!(
        units_across("tests/test_cycle.py", test, &[], &modules, "test_cycle"),
        [
            "Helper ping 1 module 0 tests/ping.py",
            "Helper pong 2 module 1 tests/pong.py"
        ]
    );
}

#[test]
fn broken_modules_still_give_their_intact_functions() {
    let broken = "def wait_for_server(port):\n    sleep(1)\n\nclass Broken(:\n    pass\n";
    let test = "from tests.helpers import wait_for_server\n\n\
                def test_up():\n    wait_for_server(1)\n";
    let modules = [("tests/helpers.py", broken), ("tests/empty.py", "")];
    assert_eq!(
        units_across("tests/test_up.py", test, &[], &modules, "test_up"),
        ["Helper wait_for_server 1 module 0 tests/helpers.py"]
    );
}
