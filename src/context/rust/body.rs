//! The walk over every node of a Rust file, made when a test first reaches it: call sites,
//! `use` imports per module, and the local variables whose type a `let` tells.
//!
//! Calls are read from the syntax tree and from the token trees of macro invocations, since most
//! of a test's calls sit inside `assert!`-like macros: `name(` or `path::name(` in a token tree
//! counts as a call.

use std::ops::Range;
use std::sync::OnceLock;

use tree_sitter::Node;

use super::definitions::RustFile;
use super::uses::{Import, imports};
use super::values::{Binding, binding};
use crate::context::syntax::{Kinds, children, contains, preorder, text};

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

/// Reads the calls, imports and bindings of `file`.
pub(super) fn read<'s>(file: &RustFile<'s>) -> Body<'s> {
    let source = file.file.source;
    let root = file.file.tree.root_node();
    let mut body = Body {
        calls: Vec::new(),
        bindings: Vec::new(),
        imports: file.modules.iter().map(|_| Vec::new()).collect(),
    };
    let mut modules: Vec<usize> = vec![0];
    let mut owners: Vec<(Range<usize>, &str)> = Vec::new();
    preorder(root, walked_kinds(root), |node, _| {
        let range = node.byte_range();
        while modules.len() > 1
            && modules
                .last()
                .is_some_and(|&module| !contains(&file.modules[module].range, &range))
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
            "mod_item" => modules.extend(file.module_starts.get(&range.start)),
            "impl_item" => owners.extend(file.impl_owners.get(&range.start).cloned()),
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
