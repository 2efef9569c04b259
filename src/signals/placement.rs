//! Where a match sits in the syntax tree, read to decide whether it counts: inside a string or a
//! skip condition, below a lambda, on a parameter of the enclosing function, on a local port.

use tree_sitter::Node;

use super::values::{self, Facts, text_of};

/// Whether a value only becomes part of a string: an operand (through parentheses, `str(...)`,
/// `int(...)`, and the characters a comprehension hands to `"".join(...)`) of a `+` or `%` whose
/// other side is a string literal, or an f-string's interpolation.
pub(super) fn in_text(hit: Node<'_>, text: &str) -> bool {
    let mut node = hit;
    while let Some(parent) = node.parent() {
        match parent.kind() {
            "interpolation" => return true,
            "parenthesized_expression" | "argument_list" => {}
            "list_comprehension" | "generator_expression"
                if parent.child_by_field_name("body") == Some(node) => {}
            "call"
                if parent
                    .child_by_field_name("function")
                    .is_some_and(|function| {
                        matches!(text_of(function, text), "str" | "int")
                            || joins_text(function, text)
                    }) => {}
            "binary_expression" | "binary_operator" => {
                let operator = parent.child_by_field_name("operator").map(|o| o.kind());
                if !matches!(operator, Some("+" | "%")) {
                    return false;
                }
                let mut cursor = parent.walk();
                if parent
                    .named_children(&mut cursor)
                    .any(|operand| matches!(operand.kind(), "string_literal" | "string"))
                {
                    return true;
                }
            }
            _ => return false,
        }
        node = parent;
    }
    false
}

/// Whether a called function is a string literal's `join` (`"".join(...)`, `"-".join(...)`).
fn joins_text(function: Node<'_>, text: &str) -> bool {
    function.kind() == "attribute"
        && function
            .child_by_field_name("object")
            .is_some_and(|object| object.kind() == "string")
        && function
            .child_by_field_name("attribute")
            .is_some_and(|attribute| text_of(attribute, text) == "join")
}

/// Whether a hit is in the condition of an `if` whose body begins by skipping the test: a return,
/// `pytest.skip`, `self.skipTest`, `raise SkipTest`, `pytest.xfail`, an `assume...` call.
pub(super) fn in_skip_condition(hit: Node<'_>, text: &str) -> bool {
    let mut node = hit;
    while let Some(parent) = node.parent() {
        if matches!(parent.kind(), "if_statement" | "if_expression") {
            if parent.child_by_field_name("condition") != Some(node) {
                return false;
            }
            let Some(body) = parent.child_by_field_name("consequence") else {
                return false;
            };
            let mut cursor = body.walk();
            let first = if matches!(body.kind(), "block") {
                body.named_children(&mut cursor)
                    .find(|statement| !statement.kind().contains("comment"))
            } else {
                Some(body)
            };
            return first.is_some_and(|statement| skips(statement, text));
        }
        if FUNCTION_BODIES.contains(&parent.kind()) {
            return false;
        }
        node = parent;
    }
    false
}

/// Whether a statement skips the rest of a test: a return, `raise SkipTest(...)`, or a call to
/// `skip`, `skipTest`, `xfail` or an `assume...`.
fn skips(statement: Node<'_>, text: &str) -> bool {
    let statement = match statement.kind() {
        "expression_statement" => match statement.named_child(0) {
            Some(expression) => expression,
            None => return false,
        },
        _ => statement,
    };
    match statement.kind() {
        "return_statement" | "return_expression" => true,
        "raise_statement" => statement.named_child(0).is_some_and(|raised| {
            call_name(raised, text)
                .or_else(|| values::last_name(raised, text))
                .is_some_and(|name| name == "SkipTest")
        }),
        _ => call_name(statement, text).is_some_and(|name| {
            matches!(name, "skip" | "skipTest" | "xfail") || name.starts_with("assume")
        }),
    }
}

/// Whether an identifier names a parameter of the function it is in (Python, Java, Rust).
pub(super) fn is_parameter(node: Node<'_>, text: &str) -> bool {
    let name = text_of(node, text);
    let mut ancestor = node.parent();
    while let Some(function) = ancestor {
        if matches!(
            function.kind(),
            "function_definition"
                | "method_declaration"
                | "constructor_declaration"
                | "function_item"
        ) {
            let Some(parameters) = function.child_by_field_name("parameters") else {
                return false;
            };
            let mut cursor = parameters.walk();
            return parameters.named_children(&mut cursor).any(|parameter| {
                let named = if parameter.kind() == "identifier" {
                    Some(parameter)
                } else {
                    parameter
                        .child_by_field_name("name")
                        .or_else(|| parameter.child_by_field_name("pattern"))
                        .or_else(|| parameter.named_child(0))
                };
                named.is_some_and(|named| {
                    named.kind() == "identifier" && text_of(named, text) == name
                })
            });
        }
        ancestor = function.parent();
    }
    false
}

/// Node kinds of the three grammars whose body is code of its own: the walk that looks for an
/// enclosing assertion or annotation stops at them.
pub(super) const FUNCTION_BODIES: [&str; 3] = ["lambda_expression", "lambda", "closure_expression"];

/// A port a test fixes: a number from 1024 to 65535, or a local address with such a port. Port 0
/// asks the system for a free one; the well-known ports below 1024 need privileges to bind, so in
/// a test they are data (`setServerPort(443)`, `InetSocketAddress(host, 80)`), not a port it holds.
pub(super) fn is_fixed_local_port(node: Node<'_>, text: &str, facts: &Facts<'_>) -> bool {
    if let Some(number) = facts.number(node, text) {
        return (1024.0..=65535.0).contains(&number) && number.fract() == 0.0;
    }
    match string_or_bound(node, text, facts)
        .as_deref()
        .and_then(values::host_of)
    {
        Some((host, Some(port))) => values::is_local(host) && (1024..=65535).contains(&port),
        _ => false,
    }
}

/// Whether a command's program is the crate's own binary, which Cargo builds for its
/// integration tests: `env!("CARGO_BIN_EXE_app")`, `cargo_bin!("app")`, `cargo_bin("app")`, or
/// a name bound to one (`const BINARY: &str = env!("CARGO_BIN_EXE_app");`).
pub(super) fn is_own_binary(node: Node<'_>, text: &str, facts: &Facts<'_>) -> bool {
    let names_it = |code: &str| code.contains("CARGO_BIN_EXE_") || code.contains("cargo_bin");
    names_it(values::text_of(node, text))
        || values::last_name(node, text)
            .and_then(|name| facts.binding(name))
            .is_some_and(|bound| names_it(values::text_of(bound, facts.text)))
}

/// Whether an address expression surely stays on the machine: a string naming a local host, or
/// code that builds one (`listener.local_addr()`, `f"http://localhost:{port}"`).
pub(super) fn is_known_local(node: Node<'_>, text: &str, facts: &Facts<'_>) -> bool {
    if let Some(value) = string_or_bound(node, text, facts) {
        return values::host_of(&value).map_or_else(
            || values::is_local(value.trim()),
            |(host, _)| values::is_local(host),
        );
    }
    let code = text_of(node, text);
    [
        "local_addr",
        "localhost",
        "127.0.0.1",
        "[::1]",
        "0.0.0.0",
        "LOCALHOST",
        "LOOPBACK",
    ]
    .iter()
    .any(|local| code.contains(local))
}

/// The value of a string literal, or of a name bound to one.
pub(super) fn string_or_bound(node: Node<'_>, text: &str, facts: &Facts<'_>) -> Option<String> {
    values::string_value(node, text).or_else(|| {
        let name = values::last_name(node, text)?;
        let bound = facts.binding(name)?;
        values::string_value(bound, facts.text)
    })
}

/// The name of the function, method, constructor or macro a call node calls.
pub(super) fn call_name<'a>(node: Node<'_>, text: &'a str) -> Option<&'a str> {
    let callee = match node.kind() {
        "method_invocation" => node.child_by_field_name("name")?,
        "object_creation_expression" => node.child_by_field_name("type")?,
        "call" | "call_expression" => node.child_by_field_name("function")?,
        "macro_invocation" => node.child_by_field_name("macro")?,
        _ => return None,
    };
    values::last_name(callee, text).or_else(|| {
        // A generic type `Foo<T>` or a call on a call's result.
        let mut cursor = callee.walk();
        let last = callee.named_children(&mut cursor).last()?;
        values::last_name(last, text)
    })
}

/// Whether a name (or `self.name`, `cls.name`) holds a container shared by every test of the
/// process: a list, dict or set (literal or built) bound at the top of the module or in a class
/// body, where each test that changes it leaves the change to the next.
pub(super) fn is_shared_container(node: Node<'_>, text: &str) -> bool {
    let Some(name) = values::last_name(node, text) else {
        return false;
    };
    let through_self = node.kind() == "attribute"
        && node
            .child_by_field_name("object")
            .is_some_and(|object| matches!(text_of(object, text), "self" | "cls"));
    if node.kind() != "identifier" && !through_self {
        return false;
    }
    let mut ancestor = node.parent();
    while let Some(scope) = ancestor {
        let body = match scope.kind() {
            "module" => Some(scope),
            // A class defined inside a function is made afresh each time the function runs.
            "class_definition" if !inside_function(scope) => scope.child_by_field_name("body"),
            _ => None,
        };
        if let Some(body) = body
            && binds_container(body, name, text)
        {
            return true;
        }
        ancestor = scope.parent();
    }
    false
}

/// Whether the function around `node` binds `name` itself (a parameter, an assignment, a `for`
/// target, `with ... as name`, `except ... as name`), which hides a global of that name.
fn bound_in_function(node: Node<'_>, name: &str, text: &str) -> bool {
    let mut function = None;
    let mut ancestor = node.parent();
    while let Some(current) = ancestor {
        if current.kind() == "function_definition" {
            function = Some(current);
        }
        ancestor = current.parent();
    }
    let Some(function) = function else {
        return false;
    };
    let mut stack = vec![function];
    while let Some(current) = stack.pop() {
        if current.kind() == "identifier" && text_of(current, text) == name {
            let binds = current.parent().is_some_and(|parent| match parent.kind() {
                "as_pattern_target"
                | "parameters"
                | "default_parameter"
                | "typed_parameter"
                | "typed_default_parameter"
                | "pattern_list" => true,
                "assignment" | "for_statement" | "augmented_assignment" => {
                    parent.child_by_field_name("left") == Some(current)
                }
                _ => false,
            });
            if binds {
                return true;
            }
        }
        let mut cursor = current.walk();
        stack.extend(current.named_children(&mut cursor));
    }
    false
}

/// Whether a node lies inside a function definition.
fn inside_function(node: Node<'_>) -> bool {
    let mut ancestor = node.parent();
    while let Some(current) = ancestor {
        if current.kind() == "function_definition" {
            return true;
        }
        ancestor = current.parent();
    }
    false
}

/// Whether a Python name stands for something every test of the process shares: a module or a
/// name imported at the top of the module, or a class defined there.
pub(super) fn is_module_global(node: Node<'_>, text: &str) -> bool {
    let name = text_of(node, text);
    if bound_in_function(node, name, text) {
        return false;
    }
    let mut root = node;
    while let Some(parent) = root.parent() {
        root = parent;
    }
    let mut cursor = root.walk();
    root.named_children(&mut cursor)
        .any(|statement| match statement.kind() {
            "import_statement" | "import_from_statement" => {
                let mut names = statement.walk();
                statement.named_children(&mut names).any(|imported| {
                    let bound = match imported.kind() {
                        "aliased_import" => imported.child_by_field_name("alias"),
                        "dotted_name" => imported.named_child(0),
                        _ => None,
                    };
                    statement.child_by_field_name("module_name") != Some(imported)
                        && bound.is_some_and(|bound| text_of(bound, text) == name)
                })
            }
            "class_definition" => statement
                .child_by_field_name("name")
                .is_some_and(|defined| text_of(defined, text) == name),
            "decorated_definition" => statement
                .child_by_field_name("definition")
                .filter(|definition| definition.kind() == "class_definition")
                .and_then(|definition| definition.child_by_field_name("name"))
                .is_some_and(|defined| text_of(defined, text) == name),
            _ => false,
        })
}

/// Whether a module or class body binds `name` to a container at its top level.
fn binds_container(body: Node<'_>, name: &str, text: &str) -> bool {
    let mut cursor = body.walk();
    body.named_children(&mut cursor).any(|statement| {
        let Some(assignment) = statement
            .named_child(0)
            .filter(|_| statement.kind() == "expression_statement")
            .filter(|child| child.kind() == "assignment")
        else {
            return false;
        };
        let (Some(left), Some(right)) = (
            assignment.child_by_field_name("left"),
            assignment.child_by_field_name("right"),
        ) else {
            return false;
        };
        left.kind() == "identifier"
            && text_of(left, text) == name
            && (matches!(right.kind(), "list" | "dictionary" | "set")
                || (right.kind() == "call"
                    && right
                        .child_by_field_name("function")
                        .is_some_and(|function| {
                            matches!(
                                text_of(function, text),
                                "list"
                                    | "dict"
                                    | "set"
                                    | "defaultdict"
                                    | "OrderedDict"
                                    | "Counter"
                                    | "deque"
                            )
                        })))
    })
}
