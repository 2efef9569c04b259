//! Finds the tests of a Python file as pytest collects them, under the project's settings.
//!
//! pytest collects the module-level functions matching `python_functions`, and the classes
//! matching `python_classes` (without an `__init__`) with their methods matching
//! `python_functions` and their nested classes by the same rule. Classes deriving from
//! `unittest.TestCase` are collected whatever `python_classes` says, with the methods unittest's
//! loader finds (`test` prefix). A file cannot tell whether a project base class derives from
//! `TestCase`; one named `...TestCase` is taken to, and one named `...Test` or `...Tests` is taken
//! to as well unless the class is collected by pytest's own rules anyway.
//!
//! A collected class also collects the test methods it inherits from base classes and mixins, of
//! its file or of other modules of the project ([`super::python_inherit`]), under its own name:
//! `tests/test_timed.py::TestTimestampSigner::test_no_separator`.

use tree_sitter::Node;

use super::discovery::PytestSettings;
use super::markers;
use super::python_classes::{ClassTable, ModuleSource};
use super::python_inherit::Hierarchy;
use super::walk::{Candidate, Depth, Found, Stop, children, field_text};
use super::{Elsewhere, Inherited};

/// The comment kinds, for ignore markers.
pub(super) const COMMENTS: [&str; 1] = ["comment"];

/// The tests of the file at `path` (as ids show it), its bases in other modules read through
/// `modules`.
pub(super) fn walk(
    root: Node<'_>,
    source: &str,
    path: &str,
    settings: &PytestSettings,
    modules: Option<&dyn ModuleSource>,
    max_nesting: usize,
) -> Result<Found, Stop> {
    let table = ClassTable::read(root, source);
    let mut walk = Walk {
        source,
        settings,
        found: Found::default(),
        hierarchy: Hierarchy {
            own: &table,
            path,
            modules,
        },
    };
    walk.body(root, Collector::Module, Depth::new(max_nesting))?;
    Ok(walk.found)
}

/// What collects the definitions of a body, and by which rules.
#[derive(Debug, Clone, Copy)]
enum Collector {
    Module,
    /// A class collected by pytest's own rules.
    Class {
        scope: usize,
        unittest: bool,
    },
    /// A class collected only because it derives from `unittest.TestCase`: its methods are found
    /// by unittest's prefix, and pytest does not look into its nested classes.
    TestCase {
        scope: usize,
    },
}

struct Walk<'a> {
    source: &'a str,
    settings: &'a PytestSettings,
    found: Found,
    hierarchy: Hierarchy<'a>,
}

impl Walk<'_> {
    /// The definitions of a module or class body. Syntax errors are looked through, so the
    /// tests of a file's intact parts are still found.
    fn body(&mut self, body: Node<'_>, collector: Collector, depth: Depth) -> Result<(), Stop> {
        for node in children(body) {
            // The decorators belong to the test: its range starts at the first one.
            let definition = if node.kind() == "decorated_definition" {
                node.child_by_field_name("definition")
            } else {
                Some(node)
            };
            let Some(definition) = definition else {
                continue;
            };
            match definition.kind() {
                "function_definition" => self.function(node, definition, collector),
                "class_definition" => self.class(definition, collector, depth)?,
                "ERROR" => self.body(node, collector, depth.inner()?)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn function(&mut self, node: Node<'_>, definition: Node<'_>, collector: Collector) {
        let Some(name) = definition.child_by_field_name("name") else {
            return;
        };
        let text = self.source.get(name.byte_range()).unwrap_or_default();
        let (collected, scope) = match collector {
            Collector::Module => (self.settings.collects_function(text), None),
            Collector::Class { scope, unittest } => (
                self.settings.collects_function(text) || (unittest && text.starts_with("test")),
                Some(scope),
            ),
            Collector::TestCase { scope } => (text.starts_with("test"), Some(scope)),
        };
        if collected {
            self.found.candidates.push(Candidate {
                range: node.byte_range(),
                name: name.byte_range(),
                scope,
                inherited: None,
            });
            self.markers_of(node);
        }
    }

    /// The markers of a test: its decorators'.
    fn markers_of(&mut self, node: Node<'_>) {
        self.found.markers.extend(
            children(node)
                .filter(|child| child.kind() == "decorator")
                .filter_map(markers::python)
                .take(markers::MAX_PER_TEST),
        );
    }

    /// The test methods the class whose name is `name` inherits, collected under its `scope` by
    /// the rules of `collector`. Only module-level classes are looked up as bases.
    fn inherit(&mut self, class_node: Node<'_>, name: Node<'_>, collector: Collector) {
        let Some(class) = self.source.get(name.byte_range()).and_then(|text| {
            let table = self.hierarchy.own;
            table.classes.iter().rfind(|class| class.name == text)
        }) else {
            return;
        };
        let (scope, unittest, only_unittest) = match collector {
            Collector::Module => return,
            Collector::Class { scope, unittest } => (scope, unittest, false),
            Collector::TestCase { scope } => (scope, true, true),
        };
        let settings = self.settings;
        let collects = |name: &str| {
            (!only_unittest && settings.collects_function(name))
                || (unittest && name.starts_with("test"))
        };
        // Methods of this file lie in other classes: their markers are found from the root.
        let mut root = class_node;
        while let Some(parent) = root.parent() {
            root = parent;
        }
        for method in self.hierarchy.inherited(class, &collects) {
            let elsewhere = method.module.map(|module| Elsewhere {
                module,
                range: method.range.clone(),
                name_range: method.name.clone(),
            });
            let (range, test_name) = match &elsewhere {
                // The test is where its class is named; its code is the other module's.
                Some(_) => (name.byte_range(), name.byte_range()),
                None => (method.range.clone(), method.name.clone()),
            };
            if elsewhere.is_none()
                && let Some(node) = root.descendant_for_byte_range(range.start, range.end)
            {
                self.markers_of(node);
            }
            self.found.candidates.push(Candidate {
                range,
                name: test_name,
                scope: Some(scope),
                inherited: Some(Inherited {
                    class_name: name.byte_range(),
                    elsewhere,
                }),
            });
        }
    }

    fn class(&mut self, class: Node<'_>, outer: Collector, depth: Depth) -> Result<(), Stop> {
        let parent = match outer {
            Collector::Module => None,
            Collector::Class { scope, .. } => Some(scope),
            // unittest's loader collects methods only.
            Collector::TestCase { .. } => return Ok(()),
        };
        let (Some(name), Some(body)) = (
            class.child_by_field_name("name"),
            class.child_by_field_name("body"),
        ) else {
            return Ok(());
        };
        let text = self.source.get(name.byte_range()).unwrap_or_default();
        let base = Base::of(class, self.source);
        // pytest refuses a class with a constructor, with a warning.
        let by_name = self.settings.collects_class(text) && !has_constructor(body, self.source);
        let collector = match (base, by_name) {
            (Base::TestCase, _) | (Base::LikelyTestCase, false) => Collector::TestCase {
                scope: self.found.add_scope(name.byte_range(), parent),
            },
            (Base::LikelyTestCase, true) => Collector::Class {
                scope: self.found.add_scope(name.byte_range(), parent),
                unittest: true,
            },
            (Base::Other, true) => Collector::Class {
                scope: self.found.add_scope(name.byte_range(), parent),
                unittest: false,
            },
            (Base::Other, false) => return Ok(()),
        };
        self.body(body, collector, depth.inner()?)?;
        self.inherit(class, name, collector);
        Ok(())
    }
}

/// What a class's bases say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    /// `unittest.TestCase`, `IsolatedAsyncioTestCase`, or a base named `...TestCase`.
    TestCase,
    /// A project base class named `...Test` or `...Tests`.
    LikelyTestCase,
    Other,
}

impl Base {
    fn of(class: Node<'_>, source: &str) -> Base {
        let Some(bases) = class.child_by_field_name("superclasses") else {
            return Base::Other;
        };
        let names = children(bases).filter_map(|base| match base.kind() {
            "identifier" => source.get(base.byte_range()),
            "attribute" => field_text(base, "attribute", source),
            _ => None,
        });
        let mut likely = false;
        for name in names {
            if name.ends_with("TestCase") {
                return Base::TestCase;
            }
            likely |= name.ends_with("Test") || name.ends_with("Tests");
        }
        if likely {
            Base::LikelyTestCase
        } else {
            Base::Other
        }
    }
}

fn has_constructor(body: Node<'_>, source: &str) -> bool {
    children(body).any(|node| {
        let definition = if node.kind() == "decorated_definition" {
            node.child_by_field_name("definition")
        } else {
            Some(node)
        };
        definition.is_some_and(|definition| {
            definition.kind() == "function_definition"
                && field_text(definition, "name", source) == Some("__init__")
        })
    })
}
