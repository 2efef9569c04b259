//! Reads a Rust file's items: its modules (inline and declared with `mod name;`), functions and
//! `impl` blocks. The walk over every node for calls waits until a test reaches the file
//! ([`super::body`]), so another file that only declares modules costs a pass over its items.

use std::ops::Range;
use std::sync::OnceLock;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::Node;

use super::body::{self, Body};
use crate::context::SourceFile;
use crate::context::syntax::{last_segment, named_children, text, unquote};
use crate::extract::TestMethod;

/// At most this many `mod name;` declarations of a file are linked to files: each one costs a
/// look through the other files.
const MAX_DECLARED: usize = 512;

/// Inline modules deeper than this declare no `mod name;` file that is looked for: no real file
/// nests so deep, and a hostile one would make each path as long as its nesting.
const MAX_INLINE_DEPTH: usize = 16;

/// Parameter attributes of an rstest test that fill the parameter without a fixture.
const NOT_FIXTURE_ATTRIBUTES: [&str; 3] = ["case", "values", "files"];

/// The file (index 0) or an inline module of it.
pub(super) struct Module<'s> {
    pub(super) name: &'s str,
    pub(super) range: Range<usize>,
    pub(super) parent: Option<usize>,
}

/// A `mod name;` declaration: a module whose code is in another file.
pub(super) struct Declared<'s> {
    pub(super) name: &'s str,
    /// The module it is declared in.
    pub(super) module: usize,
    /// Its `#[path = "..."]`, unquoted.
    pub(super) path: Option<&'s str>,
    pub(super) at: usize,
}

pub(super) struct Function<'s> {
    pub(super) name: &'s str,
    pub(super) name_start: usize,
    /// Attributes directly before it included.
    pub(super) range: Range<usize>,
    pub(super) module: usize,
    /// The type of the `impl` block it is declared in.
    pub(super) owner: Option<&'s str>,
    /// A `#[fixture]` set up for each test that requests it. Not one marked `#[once]`: every
    /// test shares what it starts, and a risk there would warn them all alike.
    pub(super) fixture: bool,
    /// The fixtures it requests: for `#[rstest]` tests and fixtures, the parameters not filled
    /// by `#[case]`, `#[values]` or `#[files]`.
    pub(super) requests: Vec<&'s str>,
}

/// The modules, functions and call sites of one Rust file.
pub(super) struct RustFile<'s> {
    pub(super) file: SourceFile<'s>,
    pub(super) modules: Vec<Module<'s>>,
    pub(super) declared: Vec<Declared<'s>>,
    pub(super) functions: Vec<Function<'s>>,
    pub(super) functions_by_name: HashMap<&'s str, Vec<usize>>,
    pub(super) function_by_name_start: HashMap<usize, usize>,
    pub(super) test_name_starts: HashSet<usize>,
    pub(super) module_starts: HashMap<usize, usize>,
    pub(super) impl_owners: HashMap<usize, (Range<usize>, &'s str)>,
    body: OnceLock<Body<'s>>,
}

impl<'s> RustFile<'s> {
    /// Reads the items of `file`; `tests` are the tests extracted from it, if it is the tests'
    /// file.
    pub(super) fn new(file: SourceFile<'s>, tests: &[TestMethod]) -> RustFile<'s> {
        let root = file.tree.root_node();
        let mut rust = RustFile {
            file,
            modules: vec![Module {
                name: "",
                range: root.byte_range(),
                parent: None,
            }],
            declared: Vec::new(),
            functions: Vec::new(),
            functions_by_name: HashMap::default(),
            function_by_name_start: HashMap::default(),
            test_name_starts: tests.iter().map(|test| test.name_range.start).collect(),
            module_starts: HashMap::default(),
            impl_owners: HashMap::default(),
            body: OnceLock::new(),
        };
        rust.read_items(root);
        rust
    }

    fn read_items(&mut self, root: Node<'s>) {
        let source = self.file.source;
        let file = self;
        // Item lists still to read, with their module and the type of their `impl` block.
        let mut lists: Vec<(Node, usize, Option<&'s str>)> = vec![(root, 0, None)];
        while let Some((list, module, owner)) = lists.pop() {
            let mut attributes: Vec<Node> = Vec::new();
            for item in named_children(list) {
                match item.kind() {
                    "attribute_item" => attributes.push(item),
                    "line_comment" | "block_comment" => {}
                    "function_item" => {
                        file.add_function(source, item, &attributes, module, owner);
                        attributes.clear();
                    }
                    "mod_item" => {
                        let path = attributes
                            .iter()
                            .find(|&&attribute| attribute_name(source, attribute) == "path")
                            .and_then(|attribute| attribute.named_child(0))
                            .and_then(|attribute| attribute.child_by_field_name("value"))
                            .map(|value| unquote(text(source, value)));
                        attributes.clear();
                        let Some(name) = item.child_by_field_name("name") else {
                            continue;
                        };
                        let Some(body) = item.child_by_field_name("body") else {
                            if file.declared.len() < MAX_DECLARED {
                                file.declared.push(Declared {
                                    name: text(source, name),
                                    module,
                                    path,
                                    at: item.start_byte(),
                                });
                            }
                            continue;
                        };
                        file.module_starts
                            .insert(item.start_byte(), file.modules.len());
                        lists.push((body, file.modules.len(), None));
                        file.modules.push(Module {
                            name: text(source, name),
                            range: item.byte_range(),
                            parent: Some(module),
                        });
                    }
                    "impl_item" => {
                        attributes.clear();
                        let (Some(type_node), Some(body)) = (
                            item.child_by_field_name("type"),
                            item.child_by_field_name("body"),
                        ) else {
                            continue;
                        };
                        let type_name = type_name(text(source, type_node));
                        file.impl_owners
                            .insert(item.start_byte(), (item.byte_range(), type_name));
                        lists.push((body, module, Some(type_name)));
                    }
                    // Items tree-sitter could not fit stay inside the error node.
                    "ERROR" => {
                        attributes.clear();
                        lists.push((item, module, owner));
                    }
                    _ => attributes.clear(),
                }
            }
        }
        for (index, function) in file.functions.iter().enumerate() {
            file.functions_by_name
                .entry(function.name)
                .or_default()
                .push(index);
            file.function_by_name_start
                .insert(function.name_start, index);
        }
    }

    /// The calls and imports of the file, read on first use.
    pub(super) fn body(&self) -> &Body<'s> {
        self.body.get_or_init(|| body::read(self))
    }

    /// The names of the inline modules from the file's root down to `module`, outermost first;
    /// `None` deeper than [`MAX_INLINE_DEPTH`].
    pub(super) fn inline_path(&self, module: usize) -> Option<Vec<&'s str>> {
        let mut path = Vec::new();
        let mut current = Some(module);
        // Parents always come before their children, so this ends.
        while let Some(module) = current.filter(|&module| module > 0) {
            if path.len() == MAX_INLINE_DEPTH {
                return None;
            }
            path.push(self.modules[module].name);
            current = self.modules[module]
                .parent
                .filter(|&parent| parent < module);
        }
        path.reverse();
        Some(path)
    }

    fn add_function(
        &mut self,
        source: &'s str,
        function: Node,
        attributes: &[Node],
        module: usize,
        owner: Option<&'s str>,
    ) {
        let Some(name) = function.child_by_field_name("name") else {
            return;
        };
        let attribute_names: Vec<&str> = attributes
            .iter()
            .map(|&attribute| attribute_name(source, attribute))
            .collect();
        let fixture = attribute_names.contains(&"fixture") && !attribute_names.contains(&"once");
        let requests = if fixture || attribute_names.contains(&"rstest") {
            function
                .child_by_field_name("parameters")
                .map(|parameters| fixture_requests(source, parameters))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let start = attributes
            .first()
            .map_or(function.start_byte(), Node::start_byte);
        self.functions.push(Function {
            name: text(source, name),
            name_start: name.start_byte(),
            range: start..function.end_byte(),
            module,
            owner,
            fixture,
            requests,
        });
    }
}

/// The last segment of an attribute's path: `fixture` for `#[rstest::fixture]`.
fn attribute_name<'s>(source: &'s str, attribute_item: Node) -> &'s str {
    let path = attribute_item
        .named_child(0)
        .and_then(|attribute| attribute.named_child(0));
    path.map_or("", |path| last_segment(text(source, path)))
}

/// `Server` from `Server`, `Server<T>`, `crate::Server` or `&mut Server`.
fn type_name(type_text: &str) -> &str {
    let base = type_text.split('<').next().unwrap_or(type_text);
    last_segment(
        base.trim_start_matches(['&', ' '])
            .trim_start_matches("mut "),
    )
}

/// The fixtures an rstest test or fixture requests through its parameters: a parameter named
/// `x` requests `x`, `#[from(y)] x` requests `y`, and `#[case]`, `#[values]`, `#[files]` fill a
/// parameter without a fixture.
fn fixture_requests<'s>(source: &'s str, parameters: Node) -> Vec<&'s str> {
    let mut requests = Vec::new();
    let mut attributes: Vec<Node> = Vec::new();
    for child in named_children(parameters) {
        match child.kind() {
            "attribute_item" => attributes.push(child),
            "parameter" => {
                let names: Vec<&str> = attributes
                    .iter()
                    .map(|&attribute| attribute_name(source, attribute))
                    .collect();
                let renamed = attributes
                    .iter()
                    .zip(&names)
                    .find(|(_, name)| **name == "from")
                    .and_then(|(attribute, _)| {
                        let arguments =
                            attribute.named_child(0)?.child_by_field_name("arguments")?;
                        let first = named_children(arguments)
                            .into_iter()
                            .find(|token| token.kind() == "identifier")?;
                        Some(text(source, first))
                    });
                let pattern = child
                    .child_by_field_name("pattern")
                    .filter(|pattern| pattern.kind() == "identifier");
                if !names
                    .iter()
                    .any(|name| NOT_FIXTURE_ATTRIBUTES.contains(name))
                {
                    requests.extend(renamed.or(pattern.map(|pattern| text(source, pattern))));
                }
                attributes.clear();
            }
            _ => attributes.clear(),
        }
    }
    requests
}
