//! Reads a `use` declaration into the names it binds: `use a::{b, c::d as e, f::*};` binds `b`
//! to `a::b` and `e` to `a::c::d`, and brings in everything of `a::f`.

use tree_sitter::Node;

use crate::context::syntax::{named_children, text};

/// At most this many names from one declaration: a generated `use` list of thousands of names
/// is read in part rather than slowing every lookup.
const MAX_NAMES: usize = 256;

/// A name a `use` binds in its module, or a glob it brings in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Import<'s> {
    /// The name the module sees: the last segment, or the `as` alias; empty for a glob.
    pub(super) alias: &'s str,
    /// The path written, without a leading `::`: `["super", "common", "setup"]`.
    pub(super) path: Vec<&'s str>,
    /// `use path::*`: every public name of `path`.
    pub(super) glob: bool,
    /// Where the declaration starts.
    pub(super) at: usize,
}

/// The names `use_declaration` binds, in source order. Nested lists are read with a stack, so
/// that a deeply nested one cannot overflow it.
pub(super) fn imports<'s>(source: &'s str, use_declaration: Node) -> Vec<Import<'s>> {
    let at = use_declaration.start_byte();
    let mut found = Vec::new();
    let Some(argument) = use_declaration.child_by_field_name("argument") else {
        return found;
    };
    let mut pending: Vec<(Node, Vec<&'s str>)> = vec![(argument, Vec::new())];
    while let Some((node, prefix)) = pending.pop() {
        if found.len() >= MAX_NAMES {
            break;
        }
        let joined = |path: Option<Node>| {
            let mut joined = prefix.clone();
            joined.extend(path.map(|path| segments(source, path)).unwrap_or_default());
            joined
        };
        match node.kind() {
            "use_list" => {
                // Pushed in reverse, so that they are read in source order.
                for item in named_children(node).into_iter().rev() {
                    pending.push((item, prefix.clone()));
                }
            }
            "scoped_use_list" => {
                if let Some(list) = node.child_by_field_name("list") {
                    pending.push((list, joined(node.child_by_field_name("path"))));
                }
            }
            "use_wildcard" => {
                let path = joined(node.named_child(0));
                found.push(Import {
                    alias: "",
                    path,
                    glob: true,
                    at,
                });
            }
            "use_as_clause" => {
                let alias = node
                    .child_by_field_name("alias")
                    .map(|alias| text(source, alias));
                let mut path = joined(node.child_by_field_name("path"));
                if path.last() == Some(&"self") {
                    path.pop();
                }
                if let Some(alias) = alias.filter(|alias| *alias != "_" && !path.is_empty()) {
                    found.push(Import {
                        alias,
                        path,
                        glob: false,
                        at,
                    });
                }
            }
            "identifier" | "scoped_identifier" | "self" | "super" | "crate" => {
                let mut path = joined(Some(node));
                // `a::{self}` binds `a`.
                if path.last() == Some(&"self") && path.len() > 1 {
                    path.pop();
                }
                if let Some(&alias) = path.last() {
                    found.push(Import {
                        alias,
                        path,
                        glob: false,
                        at,
                    });
                }
            }
            _ => {}
        }
    }
    found
}

/// The segments of a path as written, without empty ones (a leading `::`) and spaces.
fn segments<'s>(source: &'s str, path: Node) -> Vec<&'s str> {
    text(source, path)
        .split("::")
        .map(str::trim)
        .filter(|segment| !segment.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::parse;
    use crate::language::Language;

    fn read(source: &str) -> Vec<String> {
        let tree = parse(Language::Rust, source, None).expect("the Rust grammar loads");
        let mut found = Vec::new();
        for item in named_children(tree.root_node()) {
            for import in imports(source, item) {
                let path = import.path.join("::");
                found.push(match import.glob {
                    true => format!("{path}::*"),
                    false => format!("{} = {path}", import.alias),
                });
            }
        }
        found
    }

    #[test]
    fn every_form_of_use_binds_its_names() {
        assert_eq!(read("use common::setup;"), ["setup = common::setup"]);
        assert_eq!(
            read("use crate::net::{self, connect as open, tls::{Tls, *}};"),
            [
                "net = crate::net",
                "open = crate::net::connect",
                "Tls = crate::net::tls::Tls",
                "crate::net::tls::*"
            ]
        );
        assert_eq!(read("use super::*;"), ["super::*"]);
        assert_eq!(read("pub use ::pool::Pool as _;"), Vec::<String>::new());
        assert_eq!(read("use std;"), ["std = std"]);
    }

    #[test]
    fn a_deeply_nested_list_is_read_without_recursion() {
        let depth = 5_000;
        let source = format!("use {}x{};", "a::{".repeat(depth), "}".repeat(depth));
        let found = read(&source);
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("x = a::a::"), "{}", &found[0][..20]);
    }
}
