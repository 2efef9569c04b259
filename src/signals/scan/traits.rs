//! What a mechanism reads of a hit besides its place: where it sits (in a loop, in code that runs
//! later on another thread or task, in clean-up code, after a fixture's `yield`), the names it
//! mentions and which of them it writes, the key of the state it changes, its duration, and the
//! name its value is kept in. Read once, when a file is scanned, so that matching mechanisms
//! needs no syntax tree.

use tree_sitter::Node;

use crate::signals::placement::call_name;
use crate::signals::values::{string_value, text_of};

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
pub(super) const CALLABLES: [&str; 4] = [
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
