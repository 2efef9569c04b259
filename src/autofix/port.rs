//! The fix of a fixed port: the bind asks for port 0 (the system picks a free one), and the
//! test's other uses of the number read the port the socket got, from the variable the server
//! is kept in.

use tree_sitter::Node;

use super::syntax::{Site, capture, is_number, is_string};
use super::{Edit, FixEntry};
use crate::language::Language;
use crate::signals::PartHit;

pub(super) fn ephemeral_port(
    site: &Site<'_>,
    entry: &FixEntry,
    part: &PartHit,
) -> Option<Vec<Edit>> {
    let captures = site.captures(part.id, &part.range)?;
    let port = capture(&captures, "port")?;
    let (number, range) = port_in(site, port)?;
    let mut edits = vec![Edit {
        range: range.clone(),
        text: "0".to_string(),
    }];
    // The test's other uses of the number: each must become the bound port, read from the
    // server after it is bound.
    let others: Vec<Node<'_>> = site
        .nodes_of_test()
        .into_iter()
        .filter(|node| node.byte_range() != range && !node.byte_range().contains(&range.start))
        .filter(|node| {
            (is_number(*node) && site.text(*node) == number)
                || (is_string(*node) && mentions(site.text(*node), &number))
        })
        .collect();
    if others.is_empty() {
        return Some(edits);
    }
    if others.iter().any(|node| is_string(*node)) {
        return None;
    }
    let hit = site.node_at(&part.range)?;
    let (variable, declared) = bound_variable(site, hit)?;
    let form = entry.form_for(&site.source[part.range.clone()])?;
    let read = form.read.as_deref()?.replace("{var}", &variable);
    for other in others {
        if other.start_byte() < declared {
            return None;
        }
        edits.push(Edit {
            range: other.byte_range(),
            text: read.clone(),
        });
    }
    Some(edits)
}

/// The port number the captured node holds and its range: an integer literal, or the digits
/// after the colon of an address string (`"127.0.0.1:8080"`).
fn port_in(site: &Site<'_>, port: Node<'_>) -> Option<(String, std::ops::Range<usize>)> {
    let text = site.text(port);
    let valid = |digits: &str| {
        digits
            .parse::<u32>()
            .is_ok_and(|n| (1024..=65535).contains(&n))
    };
    if is_number(port) {
        return valid(text).then(|| (text.to_string(), port.byte_range()));
    }
    if is_string(port) {
        let colon = text.rfind(':')?;
        let digits: String = text[colon + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let after = &text[colon + 1 + digits.len()..];
        if valid(&digits) && after.chars().all(|c| c == '"' || c == '/') {
            let start = port.start_byte() + colon + 1;
            return Some((digits.clone(), start..start + digits.len()));
        }
    }
    None
}

/// Whether a string holds `number` as a port (`"localhost:8080"`, `"http://h:8080/x"`).
fn mentions(text: &str, number: &str) -> bool {
    text.match_indices(number).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + number.len()..].chars().next();
        before == Some(':') && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// The variable the bound server or socket is kept in, and where its declaration ends: the
/// variable declared with the bind as its value, or the socket a Python `bind` is called on.
fn bound_variable(site: &Site<'_>, hit: Node<'_>) -> Option<(String, usize)> {
    if site.language == Language::Python
        && let Some(function) = hit.child_by_field_name("function")
        && function.kind() == "attribute"
        && let Some(object) = function.child_by_field_name("object")
        && object.kind() == "identifier"
    {
        return Some((site.text(object).to_string(), hit.end_byte()));
    }
    let mut node = hit;
    loop {
        let parent = node.parent()?;
        let declared = match parent.kind() {
            // Java: `ServerSocket server = new ServerSocket(8080)`, in a try's resources too.
            "variable_declarator" | "resource" => parent.child_by_field_name("name"),
            // Python: `server = HTTPServer(("", 8000), Handler)`.
            "assignment" => parent
                .child_by_field_name("left")
                .filter(|left| left.kind() == "identifier"),
            // Rust: `let listener = TcpListener::bind("127.0.0.1:8080").unwrap();`
            "let_declaration" => parent
                .child_by_field_name("pattern")
                .filter(|pattern| pattern.kind() == "identifier"),
            "block" | "expression_statement" | "method_declaration" | "function_item" => {
                return None;
            }
            _ => {
                node = parent;
                continue;
            }
        };
        let name = declared?;
        return Some((site.text(name).to_string(), parent.end_byte()));
    }
}
