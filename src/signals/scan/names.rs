//! The names a part mentions and which of them it writes: what links a thread's work to the
//! assertion that reads it. A name bound to a value is followed once (the lambda a thread runs,
//! the `Arc` cloned into it); a socket already listening links nothing.

use tree_sitter::Node;

use super::traits::{CALLABLES, Name};
use crate::signals::values::{Facts, string_value, text_of};

/// The names a node mentions, with those bound to a callable followed once (`Runnable task =
/// () -> list.add(1)` makes `task` mention `list`), and the names of values cloned into it
/// (`let done2 = done.clone()` makes `done2` mention `done`).
pub(super) fn names_of(node: Node<'_>, text: &str, facts: &Facts<'_>) -> Vec<Name> {
    let mut names = Vec::new();
    collect_names(node, text, facts, 0, &mut names);
    names
}

fn collect_names(node: Node<'_>, text: &str, facts: &Facts<'_>, depth: u8, names: &mut Vec<Name>) {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "identifier" | "field_identifier" | "shorthand_field_identifier" => {
                if is_callee_name(node) {
                    continue;
                }
                let name = text_of(node, text);
                if ignored_name(name) {
                    continue;
                }
                let written = is_written(node, text);
                let plain = written && is_plain(node, name, text, facts);
                push(names, name, written, plain);
                if depth == 0 {
                    follow_binding(name, written, facts, names);
                    // Python: `Thread(target=worker)`, `executor.submit(worker)` run a function
                    // defined in the test.
                    if let Some(function) = nested_function(node, name, text) {
                        collect_names(function, text, facts, 1, names);
                    }
                }
            }
            "string_literal" | "string" | "raw_string_literal" => {
                if let Some(value) = string_value(node, text)
                    && (2..=100).contains(&value.len())
                {
                    push(names, &format!("\"{value}\""), false, false);
                }
            }
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor));
            }
        }
    }
}

fn push(names: &mut Vec<Name>, text: &str, written: bool, plain: bool) {
    match names.iter_mut().find(|name| name.text == text) {
        Some(name) => {
            name.written |= written;
            name.plain |= plain;
        }
        None => names.push(Name {
            text: text.to_string(),
            written,
            plain,
        }),
    }
}

/// The body of the function named `name` defined inside the outermost function around `node`,
/// when `node` is handed to a call (`Thread(target=worker)`, `submit(worker)`).
fn nested_function<'tree>(node: Node<'tree>, name: &str, text: &str) -> Option<Node<'tree>> {
    let parent = node.parent()?;
    let handed = parent.kind() == "argument_list"
        || (parent.kind() == "keyword_argument"
            && parent.child_by_field_name("value") == Some(node));
    if !handed {
        return None;
    }
    let mut outermost = None;
    let mut ancestor = node.parent();
    while let Some(current) = ancestor {
        if current.kind() == "function_definition" {
            outermost = Some(current);
        }
        ancestor = current.parent();
    }
    let mut stack = vec![outermost?.child_by_field_name("body")?];
    while let Some(current) = stack.pop() {
        if current.kind() == "function_definition"
            && current
                .child_by_field_name("name")
                .is_some_and(|defined| text_of(defined, text) == name)
        {
            return current.child_by_field_name("body");
        }
        let mut cursor = current.walk();
        stack.extend(current.named_children(&mut cursor));
    }
    None
}

/// Adds what a name's value mentions (the work a thread bound to it runs, the server a client
/// was built for), and the name a clone copies (an `Arc` handed to a thread, written when the
/// clone is), once: names are not followed further.
fn follow_binding(name: &str, written: bool, facts: &Facts<'_>, names: &mut Vec<Name>) {
    let Some(bound) = facts.binding(name) else {
        return;
    };
    let code = text_of(bound, facts.text);
    if is_listener(code) {
        // A socket already listening accepts whenever a client comes: work that serves it links
        // nothing a sleep before connecting could change.
        names.retain(|kept| kept.text != name);
        return;
    }
    if let Some(source) = cloned_name(code) {
        // A clone of an `Arc` is the same state: writing one writes the other.
        push(names, source, written, false);
    } else if code.len() <= MAX_FOLLOWED_BYTES {
        // The callables in the value (a thread's lambda, a function's body) are the work and
        // write what they write; the rest of it was computed before (`let addr =
        // listener.local_addr()`) and writes nothing when the name is used.
        let mut found = Vec::new();
        collect_names(bound, facts.text, facts, 1, &mut found);
        for name in found {
            push(names, &name.text, false, false);
        }
        let mut stack = vec![bound];
        while let Some(node) = stack.pop() {
            if CALLABLES.contains(&node.kind()) || node.kind() == "block" {
                collect_names(node, facts.text, facts, 1, names);
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }
}

/// A value longer than this is not read for names: a whole class body bound to a name.
const MAX_FOLLOWED_BYTES: usize = 2_000;

/// Whether a value is a socket bound and listening before anything uses it.
fn is_listener(code: &str) -> bool {
    [
        "bind(",
        "ServerSocket(",
        ".listen(",
        "create_server(",
        "start_server(",
    ]
    .iter()
    .any(|listens| code.contains(listens))
}

/// The name a clone expression copies: `done` of `done.clone()`, `Arc::clone(&done)`.
fn cloned_name(code: &str) -> Option<&str> {
    let code = code.trim();
    let inner = code
        .strip_suffix(".clone()")
        .or_else(|| {
            code.strip_prefix("Arc::clone(&")
                .or_else(|| code.strip_prefix("Rc::clone(&"))
                .and_then(|rest| rest.strip_suffix(')'))
        })?
        .trim();
    let simple = !inner.is_empty()
        && inner
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    simple.then(|| inner.rsplit('.').next().unwrap_or(inner))
}

/// Whether an identifier is the name of the function or method being called rather than a
/// value: `sleep` of `Thread.sleep(1)`, `append` of `items.append(x)`.
fn is_callee_name(node: Node<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    match parent.kind() {
        "method_invocation" => parent.child_by_field_name("name") == Some(node),
        "call" | "call_expression" | "macro_invocation" => {
            parent.child_by_field_name("function") == Some(node)
                || parent.child_by_field_name("macro") == Some(node)
        }
        "attribute" | "field_expression" | "scoped_identifier" => {
            let is_member = parent.child_by_field_name("attribute") == Some(node)
                || parent.child_by_field_name("field") == Some(node)
                || parent.child_by_field_name("name") == Some(node);
            let called = parent.parent().is_some_and(|call| {
                matches!(call.kind(), "call" | "call_expression")
                    && call.child_by_field_name("function") == Some(parent)
            });
            (is_member && called) || parent.kind() == "scoped_identifier"
        }
        _ => false,
    }
}

/// Names that link nothing: the receiver of the test itself, and types (`Thread`, `TimeUnit`),
/// which every test that uses them shares.
fn ignored_name(name: &str) -> bool {
    if matches!(
        name,
        "self" | "this" | "cls" | "super" | "_" | "len" | "str"
    ) {
        return true;
    }
    // CamelCase is a type; ALL_CAPS (a static, a constant) is state.
    let mut chars = name.chars();
    let first_upper = chars.next().is_some_and(char::is_uppercase);
    first_upper && name.chars().any(char::is_lowercase)
}

/// Whether the code writes the name: assigns it, updates it, or calls a method on it.
fn is_written(node: Node<'_>, text: &str) -> bool {
    let mut target = node;
    // `this.count`, `self.items`, `state.done`: the member is what is written.
    while let Some(parent) = target.parent() {
        let is_member = matches!(
            parent.kind(),
            "field_access" | "attribute" | "field_expression"
        ) && (parent.child_by_field_name("field") == Some(target)
            || parent.child_by_field_name("attribute") == Some(target));
        if is_member || parent.kind() == "array_access" || parent.kind() == "subscript" {
            target = parent;
        } else {
            break;
        }
    }
    let Some(parent) = target.parent() else {
        return false;
    };
    match parent.kind() {
        "assignment_expression"
        | "assignment"
        | "augmented_assignment"
        | "compound_assignment_expr" => parent.child_by_field_name("left") == Some(target),
        "update_expression" | "unary_expression" => {
            text_of(parent, text).contains("++") || text_of(parent, text).contains("--")
        }
        // The receiver of a call: `list.add(x)`, `latch.countDown()`, `tx.send(v)`.
        "method_invocation" => parent.child_by_field_name("object") == Some(target),
        // A method called on it, or handed on to be called (`submit(results.append, 1)`).
        "attribute" | "field_expression" => {
            (parent.child_by_field_name("object") == Some(target)
                || parent.child_by_field_name("value") == Some(target))
                && parent.parent().is_some_and(|user| {
                    (matches!(user.kind(), "call" | "call_expression")
                        && user.child_by_field_name("function") == Some(parent))
                        || matches!(
                            user.kind(),
                            "argument_list" | "arguments" | "keyword_argument"
                        )
                })
        }
        // Java `received::add`.
        "method_reference" => parent.named_child(0) == Some(target),
        _ => false,
    }
}

/// Whether a write is made holding a lock: inside Java's `synchronized` block or Python's `with
/// lock:`, which make the threads take turns.
fn guarded(node: Node<'_>, text: &str) -> bool {
    let mut ancestor = node.parent();
    while let Some(current) = ancestor {
        match current.kind() {
            "synchronized_statement" => return true,
            "with_statement" if text_of(current, text).to_ascii_lowercase().contains("lock") => {
                return true;
            }
            "method_declaration" | "function_definition" => return false,
            _ => ancestor = current.parent(),
        }
    }
    false
}

/// Whether a written name holds state that threads cannot share safely: bound to a plain Java
/// collection, array or builder, or (Python) updated with `+=`.
fn is_plain(node: Node<'_>, name: &str, text: &str, facts: &Facts<'_>) -> bool {
    if guarded(node, text) {
        return false;
    }
    let augmented = node.parent().is_some_and(|parent| {
        parent.kind() == "augmented_assignment" || text_of(parent, text).ends_with("++")
    });
    if augmented {
        return true;
    }
    let Some(bound) = facts.binding(name) else {
        return false;
    };
    let value = text_of(bound, facts.text).trim_start();
    let Some(constructed) = value.strip_prefix("new ") else {
        return value.starts_with('{') && bound.kind() == "array_initializer";
    };
    let class = constructed
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or("");
    matches!(
        class,
        "ArrayList"
            | "LinkedList"
            | "HashMap"
            | "HashSet"
            | "TreeMap"
            | "TreeSet"
            | "LinkedHashMap"
            | "LinkedHashSet"
            | "ArrayDeque"
            | "PriorityQueue"
            | "StringBuilder"
            | "int"
            | "long"
            | "boolean"
    )
}
