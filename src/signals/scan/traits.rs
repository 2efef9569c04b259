//! What a mechanism reads of a hit besides its place: where it sits (in a loop, in code that runs
//! later on another thread or task, in clean-up code, after a fixture's `yield`), the names it
//! mentions and which of them it writes, the key of the state it changes, its duration, and the
//! name its value is kept in. Read once, when a file is scanned, so that matching mechanisms
//! needs no syntax tree.

use tree_sitter::Node;

use crate::signals::placement::call_name;
use crate::signals::values::{Facts, string_value, text_of};

/// The hit is inside a loop of its function (a sleep there polls).
pub const IN_LOOP: u8 = 1;
/// The hit is in code that runs later, on another thread or task: a lambda, closure or
/// anonymous class handed to a call that starts work (`submit`, `spawn`, `new Thread`), or a
/// function defined inside the test.
pub const DEFERRED: u8 = 1 << 1;
/// The hit is in clean-up code: a `finally` block, or code handed to `addCleanup`.
pub const CLEANUP: u8 = 1 << 2;
/// Python: the hit comes after a `yield` of its function (a fixture's tear-down).
pub const AFTER_YIELD: u8 = 1 << 3;

/// What a mechanism reads of a hit; empty for most.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Traits {
    /// [`IN_LOOP`], [`DEFERRED`], [`CLEANUP`], [`AFTER_YIELD`].
    pub flags: u8,
    /// The names the code captured as `@names` mentions (and the strings it holds), with the
    /// name its value is assigned to.
    pub names: Vec<Name>,
    /// The state a write or restore touches (`@key`): a property's name, an environment
    /// variable's, a static field's path.
    pub key: Option<String>,
    /// The duration captured as `@duration`, in milliseconds.
    pub value_ms: Option<f64>,
}

/// A name a hit mentions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// The identifier, or a string literal's characters in quotes (`"127.0.0.1:8080"`).
    pub text: String,
    /// The code writes it: assigns it, or calls a method on it (`list.add`, `latch.countDown`).
    pub written: bool,
    /// It holds state that is not safe to share between threads: a plain collection or counter
    /// (`new ArrayList<>()`, `int[] count = {0}`), or a Python name updated with `+=`.
    pub plain: bool,
}

/// Node kinds whose body runs when called, not where it is written.
const CALLABLES: [&str; 4] = [
    "lambda_expression",
    "lambda",
    "closure_expression",
    "class_body",
];

/// Node kinds that start a function of its own.
const FUNCTIONS: [&str; 5] = [
    "method_declaration",
    "constructor_declaration",
    "function_definition",
    "function_item",
    "async_block",
];

/// Loops of the three grammars.
const LOOPS: [&str; 8] = [
    "for_statement",
    "enhanced_for_statement",
    "while_statement",
    "do_statement",
    "for_expression",
    "while_expression",
    "loop_expression",
    "for_in_clause",
];

/// A call whose callable argument runs later, on another thread or task, or when an event comes.
fn starts_work(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "spawn",
        "submit",
        "execute",
        "schedule",
        "thread",
        "timer",
        "async",
        "create_task",
        "ensure_future",
        "call_soon",
        "call_later",
        "call_at",
        "run_in_executor",
        "subscribe",
        "listen",
        "listener",
        "register",
        "callback",
        "handler",
        "watch",
        "start",
        "process",
    ]
    .iter()
    .any(|word| lower.contains(word))
        || (name.len() > 2 && name.starts_with("on") && name[2..].starts_with(char::is_uppercase))
}

/// A call whose callable argument is clean-up: it runs after the test whatever happens.
fn registers_cleanup(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["cleanup", "finalizer", "defer", "atexit"]
        .iter()
        .any(|word| lower.contains(word))
}

/// The flags of a hit: its ancestors up to the function it is written in.
pub(super) fn flags_of(hit: Node<'_>, text: &str) -> u8 {
    let mut flags = 0;
    let mut functions = 0;
    let mut node = hit;
    while let Some(parent) = node.parent() {
        let kind = parent.kind();
        if LOOPS.contains(&kind) && flags & DEFERRED == 0 && functions == 0 {
            flags |= IN_LOOP;
        }
        if kind == "finally_clause" {
            flags |= CLEANUP;
        }
        if (CALLABLES.contains(&kind) || kind == "async_block")
            && let Some(call) = enclosing_call(parent)
        {
            let name = call_name(call, text).unwrap_or("");
            if registers_cleanup(name) {
                flags |= CLEANUP;
            } else if starts_work(name) {
                flags |= DEFERRED;
            }
        }
        if FUNCTIONS.contains(&kind) && kind != "async_block" {
            functions += 1;
            if functions == 1 && kind == "function_definition" && after_yield(parent, hit) {
                flags |= AFTER_YIELD;
            }
            if functions >= 2 {
                // Defined inside the test: it runs when something calls it, often a thread.
                flags |= DEFERRED;
            }
        }
        node = parent;
    }
    flags
}

/// The call a callable is an argument of (`submit(() -> ...)`, `new Thread(() -> ...)`,
/// `Thread(target=...)` does not apply: a name is no callable).
fn enclosing_call(callable: Node<'_>) -> Option<Node<'_>> {
    let mut node = callable;
    for _ in 0..3 {
        let parent = node.parent()?;
        match parent.kind() {
            "argument_list" | "arguments" | "keyword_argument" | "parenthesized_expression" => {}
            "method_invocation"
            | "object_creation_expression"
            | "call"
            | "call_expression"
            | "macro_invocation" => return Some(parent),
            _ => return None,
        }
        node = parent;
    }
    None
}

/// Whether a `yield` of `function` (not of a function inside it) ends before `hit` starts.
fn after_yield(function: Node<'_>, hit: Node<'_>) -> bool {
    let Some(body) = function.child_by_field_name("body") else {
        return false;
    };
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        if node.start_byte() >= hit.start_byte() {
            continue;
        }
        match node.kind() {
            "yield" if node.end_byte() <= hit.start_byte() => return true,
            "function_definition" | "lambda" | "class_definition" => continue,
            _ => {}
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    false
}

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

/// Whether a written name holds state that threads cannot share safely: bound to a plain Java
/// collection, array or builder, or (Python) updated with `+=`.
fn is_plain(node: Node<'_>, name: &str, text: &str, facts: &Facts<'_>) -> bool {
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

/// The name the hit's value is kept in: `keys` of `Set<String> keys = map.keySet()`, `start` of
/// `let start = Instant::now()`.
pub(super) fn assigned_to<'a>(hit: Node<'_>, text: &'a str) -> Option<&'a str> {
    let mut node = hit;
    for _ in 0..4 {
        let parent = node.parent()?;
        match parent.kind() {
            "variable_declarator" => {
                return Some(text_of(parent.child_by_field_name("name")?, text));
            }
            "let_declaration" => {
                let pattern = parent.child_by_field_name("pattern")?;
                return (pattern.kind() == "identifier").then(|| text_of(pattern, text));
            }
            "assignment" | "assignment_expression" => {
                let left = parent.child_by_field_name("left")?;
                return matches!(left.kind(), "identifier").then(|| text_of(left, text));
            }
            "await" | "await_expression" | "parenthesized_expression" | "try_expression" => {}
            _ => return None,
        }
        node = parent;
    }
    None
}

/// The state a `@key` names: a string's characters, else the code without spaces.
pub(super) fn key_of(node: Node<'_>, text: &str) -> String {
    string_value(node, text).unwrap_or_else(|| {
        text_of(node, text)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    })
}
