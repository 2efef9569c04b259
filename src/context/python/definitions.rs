//! Reads a Python file's functions, classes and module-level assignments; its call sites are
//! read by [`super::call_sites`].

use std::ops::Range;

use rustc_hash::FxHashMap as HashMap;
use tree_sitter::Node;

use super::call_sites::{Call, Instantiation};
use super::pytest::{self, Fixture, Marks};
use crate::context::syntax::{last_segment, named_children, text};

/// A function or method defined at module or class level.
pub(super) struct Function<'s> {
    pub(super) name: &'s str,
    pub(super) name_start: usize,
    /// Decorators included.
    pub(super) range: Range<usize>,
    pub(super) class: Option<usize>,
    /// The parameters that may request fixtures: plain ones, not `self`, `cls`, defaults or `*args`.
    pub(super) parameters: Vec<&'s str>,
    pub(super) fixture: Option<Fixture<'s>>,
    pub(super) marks: Marks<'s>,
}

pub(super) struct Class<'s> {
    pub(super) name: &'s str,
    /// Decorators included.
    pub(super) range: Range<usize>,
    pub(super) bases: Vec<&'s str>,
    pub(super) outer: Option<usize>,
    /// Its decorators' marks and its `pytestmark`.
    pub(super) marks: Marks<'s>,
}

/// A module-level assignment, which `parametrize` may name.
pub(super) struct Assignment<'s> {
    pub(super) name: &'s str,
    pub(super) range: Range<usize>,
}

/// The definitions and call sites of one Python file.
pub(super) struct PythonFile<'s> {
    pub(super) functions: Vec<Function<'s>>,
    pub(super) classes: Vec<Class<'s>>,
    pub(super) assignments: Vec<Assignment<'s>>,
    pub(super) calls: Vec<Call<'s>>,
    /// Sorted by offset.
    pub(super) instantiations: Vec<Instantiation<'s>>,
    /// Module-level functions by name, the last definition winning as in Python.
    pub(super) module_functions: HashMap<&'s str, usize>,
    pub(super) methods: HashMap<(usize, &'s str), usize>,
    pub(super) module_fixtures: HashMap<&'s str, usize>,
    pub(super) class_fixtures: HashMap<(usize, &'s str), usize>,
    pub(super) module_assignments: HashMap<&'s str, usize>,
    pub(super) classes_by_name: HashMap<&'s str, usize>,
    /// Per class: the class and its bases defined in the file, in method resolution order.
    pub(super) mros: Vec<Vec<usize>>,
    pub(super) module_marks: Marks<'s>,
    pub(super) function_by_name_start: HashMap<usize, usize>,
    /// The `autouse` fixtures, wherever they are defined.
    pub(super) autouse: Vec<usize>,
}

/// A unit of Python code: a function or a module-level assignment of one of the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Item {
    Function(usize),
    Assignment(usize),
}

impl<'s> PythonFile<'s> {
    /// Reads the file. `with_modules`: the resolver has other modules, so a call on a dotted
    /// name (`a.b.f()`) may run an imported module's function and is worth keeping.
    pub(super) fn new(source: &'s str, root: Node, with_modules: bool) -> PythonFile<'s> {
        let mut file = PythonFile {
            functions: Vec::new(),
            classes: Vec::new(),
            assignments: Vec::new(),
            calls: Vec::new(),
            instantiations: Vec::new(),
            module_functions: HashMap::default(),
            methods: HashMap::default(),
            module_fixtures: HashMap::default(),
            class_fixtures: HashMap::default(),
            module_assignments: HashMap::default(),
            classes_by_name: HashMap::default(),
            mros: Vec::new(),
            module_marks: Marks::default(),
            function_by_name_start: HashMap::default(),
            autouse: Vec::new(),
        };
        let mut class_starts: HashMap<usize, usize> = HashMap::default();
        // Blocks still to read, with the class they are the body of.
        let mut blocks: Vec<(Node, Option<usize>)> = vec![(root, None)];
        while let Some((block, class)) = blocks.pop() {
            for statement in named_children(block) {
                let (definition, decorated) = match statement.kind() {
                    "decorated_definition" => match statement.child_by_field_name("definition") {
                        Some(definition) => (definition, Some(statement)),
                        None => continue,
                    },
                    // Definitions tree-sitter could not fit stay inside the error node.
                    "ERROR" => {
                        blocks.push((statement, class));
                        continue;
                    }
                    _ => (statement, None),
                };
                let statement_range = statement.byte_range();
                match definition.kind() {
                    "function_definition" => {
                        file.add_function(source, definition, decorated, class)
                    }
                    "class_definition" => {
                        let Some(name) = definition.child_by_field_name("name") else {
                            continue;
                        };
                        let marks = decorated.map_or_else(Marks::default, |decorated| {
                            pytest::read_decorators(source, decorated, "").1
                        });
                        let bases = definition.child_by_field_name("superclasses");
                        let bases = bases.map(named_children).unwrap_or_default();
                        let index = file.classes.len();
                        file.classes.push(Class {
                            name: text(source, name),
                            range: statement_range,
                            bases: bases
                                .into_iter()
                                .map(|base| last_segment(text(source, base)))
                                .collect(),
                            outer: class,
                            marks,
                        });
                        if class.is_none() {
                            file.classes_by_name.insert(text(source, name), index);
                        }
                        class_starts.insert(statement.start_byte(), index);
                        blocks.extend(
                            definition
                                .child_by_field_name("body")
                                .map(|body| (body, Some(index))),
                        );
                    }
                    "expression_statement" => file.add_assignment(source, definition, class),
                    _ => {}
                }
            }
        }
        for (index, class) in file.classes.iter().enumerate() {
            file.classes_by_name.entry(class.name).or_insert(index);
        }
        file.mros = (0..file.classes.len())
            .map(|class| file.method_resolution_order(class))
            .collect();
        file.read_calls(source, root, &class_starts, with_modules);
        file
    }

    fn add_function(
        &mut self,
        source: &'s str,
        definition: Node,
        decorated: Option<Node>,
        class: Option<usize>,
    ) {
        let Some(name_node) = definition.child_by_field_name("name") else {
            return;
        };
        let name = text(source, name_node);
        let (fixture, marks) = decorated.map_or_else(
            || (None, Marks::default()),
            |decorated| pytest::read_decorators(source, decorated, name),
        );
        let parameters = definition
            .child_by_field_name("parameters")
            .map(named_children)
            .unwrap_or_default();
        let parameters = parameters
            .into_iter()
            .filter_map(|parameter| match parameter.kind() {
                "identifier" => Some(parameter),
                "typed_parameter" => parameter
                    .named_child(0)
                    .filter(|name| name.kind() == "identifier"),
                _ => None,
            })
            .map(|parameter| text(source, parameter))
            .filter(|&parameter| !matches!(parameter, "self" | "cls"))
            .collect();
        let index = self.functions.len();
        match (&fixture, class) {
            (Some(fixture), None) => _ = self.module_fixtures.insert(fixture.name, index),
            (Some(fixture), Some(class)) => {
                _ = self.class_fixtures.insert((class, fixture.name), index)
            }
            (None, None) => _ = self.module_functions.insert(name, index),
            (None, Some(_)) => {}
        }
        if let Some(class) = class {
            self.methods.insert((class, name), index);
        }
        if fixture.as_ref().is_some_and(|fixture| fixture.autouse) {
            self.autouse.push(index);
        }
        self.function_by_name_start
            .insert(name_node.start_byte(), index);
        self.functions.push(Function {
            name,
            name_start: name_node.start_byte(),
            range: decorated.unwrap_or(definition).byte_range(),
            class,
            parameters,
            fixture,
            marks,
        });
    }

    /// `NAME = ...` at module level is a possible parameter source; `pytestmark = ...` marks the
    /// module or the class.
    fn add_assignment(&mut self, source: &'s str, statement: Node, class: Option<usize>) {
        let Some(assignment) = statement
            .named_child(0)
            .filter(|node| node.kind() == "assignment")
        else {
            return;
        };
        let (Some(left), right) = (
            assignment.child_by_field_name("left"),
            assignment.child_by_field_name("right"),
        ) else {
            return;
        };
        let names: Vec<&str> = match left.kind() {
            "identifier" => vec![text(source, left)],
            "pattern_list" | "tuple_pattern" => named_children(left)
                .into_iter()
                .filter(|name| name.kind() == "identifier")
                .map(|name| text(source, name))
                .collect(),
            _ => return,
        };
        if names == ["pytestmark"] {
            let marks = match class {
                Some(class) => &mut self.classes[class].marks,
                None => &mut self.module_marks,
            };
            if let Some(right) = right {
                pytest::read_mark(source, right, marks);
            }
        } else if class.is_none() {
            for name in names {
                self.module_assignments.insert(name, self.assignments.len());
                self.assignments.push(Assignment {
                    name,
                    range: statement.byte_range(),
                });
            }
        }
    }

    /// The class, then its bases defined in the file, depth first from the left (a simplified
    /// C3 linearisation that agrees with it on the hierarchies tests use), each once.
    fn method_resolution_order(&self, class: usize) -> Vec<usize> {
        let mut order = Vec::new();
        let mut pending = vec![class];
        while let Some(class) = pending.pop() {
            if order.contains(&class) {
                continue;
            }
            order.push(class);
            let bases = self.classes[class].bases.iter().rev();
            pending.extend(bases.filter_map(|base| self.classes_by_name.get(base).copied()));
        }
        order
    }

    pub(super) fn mro(&self, class: usize) -> &[usize] {
        self.mros.get(class).map(Vec::as_slice).unwrap_or_default()
    }

    pub(super) fn outer(&self, class: usize) -> Option<usize> {
        self.classes.get(class)?.outer
    }

    /// The fixture called `name` defined in `class` (its own methods, not its bases': the bases
    /// are levels of their own), or at module level.
    pub(super) fn fixture(&self, class: Option<usize>, name: &str) -> Option<usize> {
        match class {
            Some(class) => self.class_fixtures.get(&(class, name)).copied(),
            None => self.module_fixtures.get(name).copied(),
        }
    }

    /// The method `name` as seen from `classes`, the first class defining it winning.
    pub(super) fn method(&self, classes: &[usize], name: &str) -> Option<usize> {
        classes
            .iter()
            .find_map(|&class| self.methods.get(&(class, name)).copied())
    }

    /// A module-level value or function that `parametrize` or `params=` names.
    pub(super) fn parameter_source(&self, name: &str) -> Option<Item> {
        let assignment = self
            .module_assignments
            .get(name)
            .copied()
            .map(Item::Assignment);
        assignment.or_else(|| self.module_functions.get(name).copied().map(Item::Function))
    }
}
