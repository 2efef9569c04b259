//! What a Python file uses that other files of the workspace may define: the module of each
//! imported name its code runs or requests, and the plugin modules `pytest_plugins` names.
//!
//! An imported name counts when the file calls it or something under it (`wait()`,
//! `helpers.wait()`), decorates with it, derives a class from it, or requests it as a fixture
//! (a parameter, `usefixtures`). A name only read (a constant, a type in an annotation, an
//! argument of `isinstance`) runs no code of its module, which is then not worth reading, nor
//! are the modules that one imports in turn. A star import, and every import of a `conftest.py`
//! (fixtures and hooks for the tests below it) or of a package's `__init__.py` (names re-exported
//! for others), counts whatever the file does with it.

use rustc_hash::FxHashSet as HashSet;
use tree_sitter::Node;

use super::imports::{Imports, Taken, candidates};
use crate::context::syntax::{Kinds, last_segment, named_children, preorder, text, unquote};
use crate::context::{CONFTEST, SourceFile, Wanted};

/// What the Python `file` at `path` uses that other files may define ([`Wanted`]), in the order
/// the file names it: for each import or plugin, the paths its module may have, most likely
/// first ([`candidates`]).
pub(in crate::context) fn wanted(path: &str, file: SourceFile) -> Vec<Wanted> {
    let root = file.tree.root_node();
    let imports = Imports::read(file.source, root);
    let file_name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let takes_all = matches!(file_name, CONFTEST | "__init__.py");
    let used = match takes_all || imports.imports.is_empty() {
        true => HashSet::default(),
        false => used_names(file.source, root),
    };
    let mut found: Vec<(usize, Vec<String>)> = Vec::new();
    for import in &imports.imports {
        let root_name = import.local.split('.').next().unwrap_or_default();
        let name = match import.taken {
            Taken::All => None,
            _ if !takes_all && !used.contains(root_name) => continue,
            Taken::Name(name) => Some(name),
            Taken::Module => None,
        };
        found.push((import.at, paths(path, import.module, name)));
    }
    for &(at, module) in &imports.plugins {
        found.push((at, paths(path, module, None)));
    }
    // Imports and plugins were read apart: put them back in the file's order.
    found.sort_by_key(|(at, _)| *at);
    found
        .into_iter()
        .filter(|(_, paths)| !paths.is_empty())
        .map(|(_, paths)| Wanted::File(paths))
        .collect()
}

fn paths(path: &str, module: super::imports::ModuleName, name: Option<&str>) -> Vec<String> {
    let found = candidates(path, module, name);
    found.into_iter().map(|candidate| candidate.path).collect()
}

/// The names whose code the file runs or requests: the first segment of what it calls, of its
/// decorators and of its classes' bases, its functions' parameters (fixture requests) and the
/// fixtures `usefixtures` names.
fn used_names<'s>(source: &'s str, root: Node) -> HashSet<&'s str> {
    let mut used = HashSet::default();
    preorder(root, used_kinds(root), |node, _| match node.kind() {
        "call" => {
            let Some(function) = node.child_by_field_name("function") else {
                return;
            };
            used.extend(first_name(source, function));
            if last_segment(text(source, function)) == "usefixtures" {
                let arguments = node.child_by_field_name("arguments");
                let arguments = arguments.map(named_children).unwrap_or_default();
                let strings = arguments.iter().filter(|node| node.kind() == "string");
                used.extend(strings.map(|&string| unquote(text(source, string))));
            }
        }
        "decorator" => used.extend(node.named_child(0).and_then(|e| first_name(source, e))),
        "class_definition" => {
            let bases = node.child_by_field_name("superclasses");
            let bases = bases.map(named_children).unwrap_or_default();
            used.extend(
                bases
                    .into_iter()
                    .filter_map(|base| first_name(source, base)),
            );
        }
        "parameters" => {
            let names =
                named_children(node)
                    .into_iter()
                    .filter_map(|parameter| match parameter.kind() {
                        "identifier" => Some(parameter),
                        "typed_parameter" => parameter.named_child(0),
                        _ => None,
                    });
            used.extend(names.map(|name| text(source, name)));
        }
        _ => {}
    });
    used
}

/// `a` in `a`, `a.b` and `a.b.c`; nothing for anything else (`f().g`, `x[0].y`).
fn first_name<'s>(source: &'s str, expression: Node) -> Option<&'s str> {
    let mut node = expression;
    loop {
        match node.kind() {
            "identifier" => return Some(text(source, node)),
            "attribute" => node = node.child_by_field_name("object")?,
            _ => return None,
        }
    }
}

fn used_kinds(root: Node) -> &'static Kinds {
    static KINDS: std::sync::OnceLock<Kinds> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        let names = ["call", "decorator", "class_definition", "parameters"];
        Kinds::new(&root.language(), &names)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::parse;
    use crate::language::Language;

    fn wanted_of(path: &str, source: &str) -> Vec<Vec<String>> {
        let tree = parse(Language::Python, source, None).expect("the Python grammar loads");
        let file = SourceFile {
            source,
            tree: &tree,
        };
        let found = crate::context::wanted(Language::Python, path, file);
        found
            .into_iter()
            .map(|wanted| match wanted {
                Wanted::File(paths) => paths,
                other => panic!("only files are wanted, not {other:?}"),
            })
            .collect()
    }

    /// A realistic test module: absolute and relative imports, some of them used, and
    /// `pytest_plugins` as a list.
    const TEST_MODULE: &str = "\
import os
import time
from typing import TYPE_CHECKING

import pytest
import app.client as client_module
from app.server import Server, DEFAULT_PORT
from . import helpers
from .helpers import wait_for
from ..shared.factories import make_order

pytest_plugins = [\"tests.plugins.db\", \"tests.plugins.clock\"]

if TYPE_CHECKING:
    from app.models import Order


def test_order(db, make_order_fixture):
    server = Server(DEFAULT_PORT)
    client_module.connect(server)
    helpers.settle()
    wait_for(server.ready, timeout=os.environ.get(\"T\"))
    time.sleep(1)
    order: Order = make_order()
";

    #[test]
    fn a_test_module_wants_the_modules_of_what_it_runs_and_its_plugins() {
        let found = wanted_of("tests/api/test_orders.py", TEST_MODULE);
        let firsts: Vec<&str> = found.iter().map(|paths| paths[0].as_str()).collect();
        // `os` and `time` are called too: they are listed and not found in the workspace.
        assert_eq!(
            firsts,
            [
                "tests/api/os.py",
                "tests/api/time.py",
                "tests/api/app/client.py",
                "tests/api/app/server/Server.py",
                "tests/api/helpers.py",
                "tests/api/helpers/wait_for.py",
                "tests/shared/factories/make_order.py",
                "tests/api/tests/plugins/db.py",
                "tests/api/tests/plugins/clock.py",
            ],
            "{found:#?}"
        );
        // `DEFAULT_PORT` is only read and `Order` only annotates: neither names a module.
        assert!(
            !found.iter().flatten().any(|path| path.contains("models")),
            "{found:#?}"
        );
        assert_eq!(
            found[3],
            [
                "tests/api/app/server/Server.py",
                "tests/api/app/server/Server/__init__.py",
                "tests/api/app/server.py",
                "tests/api/app/server/__init__.py",
                "tests/app/server/Server.py",
                "tests/app/server/Server/__init__.py",
                "tests/app/server.py",
                "tests/app/server/__init__.py",
                "app/server/Server.py",
                "app/server/Server/__init__.py",
                "app/server.py",
                "app/server/__init__.py",
                "src/app/server/Server.py",
                "src/app/server/Server/__init__.py",
                "src/app/server.py",
                "src/app/server/__init__.py",
            ]
        );
        assert_eq!(
            found[6],
            [
                "tests/shared/factories/make_order.py",
                "tests/shared/factories/make_order/__init__.py",
                "tests/shared/factories.py",
                "tests/shared/factories/__init__.py",
            ]
        );
        assert!(found[7].contains(&"tests/plugins/db.py".to_owned()));
    }

    #[test]
    fn a_conftest_wants_all_it_imports_and_a_plugin_given_as_a_string() {
        let conftest = "from tests.fixtures import db_server\n\
                        from .factories import *\n\
                        pytest_plugins = \"tests.plugins.db\"\n";
        let found = wanted_of("tests/conftest.py", conftest);
        let firsts: Vec<&str> = found.iter().map(|paths| paths[0].as_str()).collect();
        assert_eq!(
            firsts,
            [
                "tests/tests/fixtures/db_server.py",
                "tests/factories.py",
                "tests/tests/plugins/db.py"
            ]
        );
        assert!(found[0].contains(&"tests/fixtures.py".to_owned()));
        assert!(found[2].contains(&"tests/plugins/db.py".to_owned()));
    }

    #[test]
    fn fixture_requests_decorators_and_bases_use_a_name() {
        let source = "from fixtures import db, unused\nfrom deco import retry\n\
                      from bases import Base\nimport pytest\n\n\
                      @retry\nclass TestX(Base):\n    def test_a(self, db):\n        pass\n\n\
                      @pytest.mark.usefixtures(\"server\")\ndef test_b():\n    pass\n\n\
                      from servers import server\n";
        let found = wanted_of("test_x.py", source);
        let firsts: Vec<&str> = found.iter().map(|paths| paths[0].as_str()).collect();
        assert_eq!(
            firsts,
            [
                "fixtures/db.py",
                "deco/retry.py",
                "bases/Base.py",
                "pytest.py",
                "servers/server.py"
            ]
        );
    }

    #[test]
    fn broken_imports_want_nothing_and_never_fail() {
        for source in [
            "from . import\n",
            "from .. import (\n",
            "import a..b\n",
            "from x import *, y\n",
            "pytest_plugins = [1, f(x), \"bad name\"]\n",
            "from ...... import x\n",
        ] {
            let found = wanted_of("a/test_x.py", source);
            assert!(
                found.iter().flatten().all(|path| path.ends_with(".py")),
                "{source}: {found:?}"
            );
            assert!(
                found.iter().flatten().all(|path| !path.contains("..")),
                "{source}: {found:?}"
            );
        }
    }
}
