//! Reads a Rust file's modules (inline and declared with `mod name;`), functions, `use`
//! declarations and call sites.
//!
//! Calls are read from the syntax tree and from the token trees of macro invocations, since most
//! of a test's calls sit inside `assert!`-like macros: `name(` or `path::name(` in a token tree
//! counts as a call. The items are read when the file is; the walk over every node for calls and
//! `use` declarations waits until a test reaches the file, so another file that only declares
//! modules costs a pass over its items.

use std::ops::Range;
use std::sync::OnceLock;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::Node;

use super::uses::{Import, imports};
use super::values::{Binding, binding};
use crate::context::SourceFile;
use crate::context::syntax::{
    Kinds, children, contains, last_segment, named_children, preorder, text, unquote,
};
use crate::extract::TestMethod;

/// At most this many `mod name;` declarations of a file are linked to files: each one costs a
/// look through the other files.
const MAX_DECLARED: usize = 512;

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

pub(super) struct Call<'s> {
    pub(super) at: usize,
    /// `["foo"]`, `["super", "foo"]`, `["Self", "foo"]`, `["support", "free_port"]`; for a
    /// method call, its name alone.
    pub(super) path: Vec<&'s str>,
    pub(super) on: On<'s>,
    pub(super) module: usize,
    pub(super) owner: Option<&'s str>,
}

/// What a call is made on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum On<'s> {
    /// `name(...)`, `path::name(...)`: a function by its path.
    Path,
    /// `self.name(...)`: a method of the `impl` block around the call.
    SelfValue,
    /// `local.name(...)`: a method of the local variable's type, when a `let` tells it.
    Local(&'s str),
}

/// What the walk over every node of a file finds: its call sites, the names its `use`
/// declarations bind and the local variables whose type a `let` tells.
pub(super) struct Body<'s> {
    pub(super) calls: Vec<Call<'s>>,
    /// In source order.
    pub(super) bindings: Vec<Binding<'s>>,
    /// Per module, the imports declared in it (in its functions too), in source order.
    pub(super) imports: Vec<Vec<Import<'s>>>,
}

/// The modules, functions and call sites of one Rust file.
pub(super) struct RustFile<'s> {
    file: SourceFile<'s>,
    pub(super) modules: Vec<Module<'s>>,
    pub(super) declared: Vec<Declared<'s>>,
    pub(super) functions: Vec<Function<'s>>,
    pub(super) functions_by_name: HashMap<&'s str, Vec<usize>>,
    pub(super) function_by_name_start: HashMap<usize, usize>,
    pub(super) test_name_starts: HashSet<usize>,
    module_starts: HashMap<usize, usize>,
    impl_owners: HashMap<usize, (Range<usize>, &'s str)>,
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
        self.body.get_or_init(|| self.read_body())
    }

    /// The names of the inline modules from the file's root down to `module`, outermost first.
    pub(super) fn inline_path(&self, module: usize) -> Vec<&'s str> {
        let mut path = Vec::new();
        let mut current = Some(module);
        // Parents always come before their children, so this ends.
        while let Some(module) = current.filter(|&module| module > 0) {
            path.push(self.modules[module].name);
            current = self.modules[module]
                .parent
                .filter(|&parent| parent < module);
        }
        path.reverse();
        path
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

    fn read_body(&self) -> Body<'s> {
        let source = self.file.source;
        let root = self.file.tree.root_node();
        let mut body = Body {
            calls: Vec::new(),
            bindings: Vec::new(),
            imports: self.modules.iter().map(|_| Vec::new()).collect(),
        };
        let mut modules: Vec<usize> = vec![0];
        let mut owners: Vec<(Range<usize>, &str)> = Vec::new();
        preorder(root, walked_kinds(root), |node, _| {
            let range = node.byte_range();
            while modules.len() > 1
                && modules
                    .last()
                    .is_some_and(|&module| !contains(&self.modules[module].range, &range))
            {
                modules.pop();
            }
            while owners
                .last()
                .is_some_and(|(owner, _)| !contains(owner, &range))
            {
                owners.pop();
            }
            let module = modules.last().copied().unwrap_or(0);
            let owner = owners.last().map(|&(_, owner)| owner);
            let mut call = |at: usize, path: Vec<&'s str>, on: On<'s>| {
                body.calls.push(Call {
                    at,
                    path,
                    on,
                    module,
                    owner,
                });
            };
            match node.kind() {
                "mod_item" => modules.extend(self.module_starts.get(&range.start)),
                "impl_item" => owners.extend(self.impl_owners.get(&range.start).cloned()),
                "let_declaration" => body.bindings.extend(binding(source, node)),
                "use_declaration" => {
                    if let Some(imports_here) = body.imports.get_mut(module) {
                        imports_here.extend(imports(source, node));
                    }
                }
                "call_expression" => {
                    let Some(mut function) = node.child_by_field_name("function") else {
                        return;
                    };
                    if function.kind() == "generic_function" {
                        let Some(inner) = function.child_by_field_name("function") else {
                            return;
                        };
                        function = inner;
                    }
                    match function.kind() {
                        "identifier" | "scoped_identifier" => {
                            let path = text(source, function);
                            if !path.contains('<') {
                                let at = function.end_byte();
                                call(at, path.split("::").map(str::trim).collect(), On::Path);
                            }
                        }
                        "field_expression" => {
                            let (Some(value), Some(field)) = (
                                function.child_by_field_name("value"),
                                function.child_by_field_name("field"),
                            ) else {
                                return;
                            };
                            let on = match value.kind() {
                                "self" => On::SelfValue,
                                "identifier" => On::Local(text(source, value)),
                                _ => return,
                            };
                            call(field.start_byte(), vec![text(source, field)], on);
                        }
                        _ => {}
                    }
                }
                "token_tree" => {
                    for (at, path, on) in calls_in_tokens(source, node) {
                        call(at, path, on);
                    }
                }
                _ => {}
            }
        });
        body.calls.sort_by_key(|call| call.at);
        body
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

/// The calls written in a macro's token tree: `name (` and `a::b::name (`, and `self.name (` or
/// `local.name (`, each with the offset of its name. Nested token trees are read on their own.
fn calls_in_tokens<'s>(source: &'s str, token_tree: Node) -> Vec<(usize, Vec<&'s str>, On<'s>)> {
    let tokens = children(token_tree);
    let mut calls = Vec::new();
    for (index, window) in tokens.windows(2).enumerate() {
        let (name, arguments) = (window[0], window[1]);
        let opens_call =
            arguments.kind() == "token_tree" && text(source, arguments).starts_with('(');
        if name.kind() != "identifier" || !opens_call {
            continue;
        }
        let mut path = vec![text(source, name)];
        let mut before = index;
        while before >= 2
            && tokens[before - 1].kind() == "::"
            && matches!(
                tokens[before - 2].kind(),
                "identifier" | "self" | "super" | "crate"
            )
        {
            path.insert(0, text(source, tokens[before - 2]));
            before -= 2;
        }
        let mut on = On::Path;
        if before >= 1 && tokens[before - 1].kind() == "." {
            // A method call: on `self`, or on a plain local (not `a.b.name(`, a field's).
            let receiver = before.checked_sub(2).map(|at| tokens[at]);
            let after_a_dot = before >= 3 && tokens[before - 3].kind() == ".";
            on = match receiver.map(|receiver| receiver.kind()) {
                Some("self") => On::SelfValue,
                Some("identifier") if !after_a_dot => {
                    On::Local(receiver.map_or("", |receiver| text(source, receiver)))
                }
                _ => continue,
            };
            if path.len() > 1 {
                continue;
            }
        }
        calls.push((name.start_byte(), path, on));
    }
    calls
}

/// The kinds the walk over the whole file stops at.
pub(in crate::context) fn walked_kinds(root: Node) -> &'static Kinds {
    static KINDS: OnceLock<Kinds> = OnceLock::new();
    KINDS.get_or_init(|| {
        let names = [
            "mod_item",
            "impl_item",
            "call_expression",
            "token_tree",
            "use_declaration",
            "let_declaration",
        ];
        Kinds::new(&root.language(), &names)
    })
}
