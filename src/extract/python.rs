//! Finds the tests of a Python file as pytest collects them, under the project's settings.
//!
//! pytest collects the module-level functions matching `python_functions`, and the classes
//! matching `python_classes` (without an `__init__`) with their methods matching
//! `python_functions` and their nested classes by the same rule. Classes deriving from
//! `unittest.TestCase` are collected whatever `python_classes` says, with the methods unittest's
//! loader finds (`test` prefix). A file cannot tell whether a project base class derives from
//! `TestCase`; one named `...TestCase` is taken to, and one named `...Test` or `...Tests` is taken
//! to as well unless the class is collected by pytest's own rules anyway.

use tree_sitter::Node;

use super::discovery::PytestSettings;
use super::markers;
use super::walk::{Candidate, Depth, Found, Stop, children, field_text};

/// The comment kinds, for ignore markers.
pub(super) const COMMENTS: [&str; 1] = ["comment"];

pub(super) fn walk(
    root: Node<'_>,
    source: &str,
    settings: &PytestSettings,
    max_nesting: usize,
) -> Result<Found, Stop> {
    let mut walk = Walk {
        source,
        settings,
        found: Found::default(),
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
            });
            self.found.markers.extend(
                children(node)
                    .filter(|child| child.kind() == "decorator")
                    .filter_map(markers::python)
                    .take(markers::MAX_PER_TEST),
            );
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
        self.body(body, collector, depth.inner()?)
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
