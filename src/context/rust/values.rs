//! The type of a local variable when its `let` says it plainly, so that a method called on it
//! (`let pool = Pool::new(4); pool.spawn()`) resolves to that type's method.
//!
//! Only what needs no inference: an annotation (`let pool: Pool = ...`), a constructor-like call
//! on a type (`Pool::new(..)`, `shop::Pool::open(..)`, with `?`, `.unwrap()` or `.expect(..)`
//! after it), a struct literal (`Pool { .. }`). Anything else leaves the variable's type unknown
//! and its methods unresolved, as before.

use tree_sitter::Node;

use crate::context::syntax::text;

/// Calls after a constructor that keep its type: `Pool::new()?`, `Pool::new().unwrap()`.
const KEEP_THE_TYPE: [&str; 3] = ["unwrap", "expect", "unwrap_or_default"];

/// How deep `?`, `.await` and `.unwrap()` are taken off a `let`'s value.
const MAX_UNWRAPS: usize = 8;

/// A local variable whose type a `let` tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Binding<'s> {
    /// Where the `let` starts: it holds for calls after it.
    pub(super) at: usize,
    pub(super) name: &'s str,
    /// The type's path as written: `["Pool"]`, `["shop", "pool", "Pool"]`, `["Self"]`.
    pub(super) type_path: Vec<&'s str>,
}

/// The binding a `let_declaration` makes, when its pattern is a name and its type is plain.
pub(super) fn binding<'s>(source: &'s str, let_declaration: Node) -> Option<Binding<'s>> {
    let pattern = let_declaration.child_by_field_name("pattern")?;
    if pattern.kind() != "identifier" {
        return None;
    }
    let type_path = match let_declaration.child_by_field_name("type") {
        Some(annotation) => type_path(text(source, annotation))?,
        None => constructed(source, let_declaration.child_by_field_name("value")?)?,
    };
    Some(Binding {
        at: let_declaration.start_byte(),
        name: text(source, pattern),
        type_path,
    })
}

/// The type a value expression plainly constructs.
fn constructed<'s>(source: &'s str, mut value: Node) -> Option<Vec<&'s str>> {
    for _ in 0..MAX_UNWRAPS {
        let inner = match value.kind() {
            "try_expression" | "await_expression" | "parenthesized_expression" => {
                value.named_child(0)
            }
            "call_expression" => {
                let function = value.child_by_field_name("function")?;
                let keeps = function.kind() == "field_expression"
                    && function
                        .child_by_field_name("field")
                        .is_some_and(|field| KEEP_THE_TYPE.contains(&text(source, field)));
                if !keeps {
                    break;
                }
                function.child_by_field_name("value")
            }
            _ => break,
        };
        value = inner?;
    }
    match value.kind() {
        "call_expression" => {
            let function = value.child_by_field_name("function")?;
            if function.kind() != "scoped_identifier" {
                return None;
            }
            let mut path = plain_path(text(source, function))?;
            path.pop();
            is_type(&path).then_some(path)
        }
        "struct_expression" => type_path(text(source, value.child_by_field_name("name")?)),
        _ => None,
    }
}

/// The path of a plain type: `Pool`, `shop::Pool`, `&mut Pool`; `None` for generic types and
/// anything else, whose methods this does not follow.
fn type_path(written: &str) -> Option<Vec<&str>> {
    let written = written
        .trim_start_matches(['&', ' '])
        .trim_start_matches("mut ");
    let path = plain_path(written)?;
    is_type(&path).then_some(path)
}

/// The segments of a path without generics, spaces or anything else in it.
fn plain_path(written: &str) -> Option<Vec<&str>> {
    let written = written.trim();
    if written.contains(['<', '(', '[', ' ', '\n']) {
        return None;
    }
    Some(written.split("::").collect())
}

/// Whether `path` ends with a type's name: capitalised, as Rust names types.
fn is_type(path: &[&str]) -> bool {
    path.last()
        .is_some_and(|name| name.starts_with(|c: char| c.is_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::parse;
    use crate::language::Language;

    fn types_bound(body: &str) -> Vec<String> {
        let source = format!("fn f() {{\n{body}\n}}\n");
        let tree = parse(Language::Rust, &source, None).expect("the Rust grammar loads");
        let mut found = Vec::new();
        let mut cursor = tree.walk();
        let mut pending = vec![tree.root_node()];
        while let Some(node) = pending.pop() {
            if node.kind() == "let_declaration"
                && let Some(binding) = binding(&source, node)
            {
                found.push(format!("{} {}", binding.name, binding.type_path.join("::")));
            }
            pending.extend(node.children(&mut cursor));
        }
        found.sort();
        found
    }

    #[test]
    fn plain_types_are_read_and_anything_that_needs_inference_is_not() {
        let body = "let a = Pool::new(4);\nlet b: shop::Pool = make();\nlet c = Pool::open()?.unwrap();\n\
                    let d = Pool { size: 1 };\nlet mut e = Self::new();\nlet f = make();\n\
                    let g = Vec::<u8>::new();\nlet h: Arc<Pool> = x;\nlet (i, j) = Pool::pair();\n\
                    let k = pool::new();\nlet l = Pool::new().len();";
        assert_eq!(
            types_bound(body),
            ["a Pool", "b shop::Pool", "c Pool", "d Pool", "e Self"]
        );
    }
}
