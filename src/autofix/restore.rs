//! The fix of process-wide state a test changes and never puts back: in Java the old value is
//! saved before the write and restored in a `finally` around the rest of the test; in Python a
//! pytest test makes the write through `monkeypatch`, which undoes it after the test.

use tree_sitter::Node;

use super::syntax::{Site, capture, descendants, is_string};
use super::{Edit, FixEntry, Form};
use crate::language::Language;
use crate::signals::PartHit;

pub(super) fn restore_state(
    site: &Site<'_>,
    entry: &FixEntry,
    part: &PartHit,
) -> Option<Vec<Edit>> {
    let statement = site.statement_at(&part.range)?;
    let form = entry.form_for(site.text(statement))?;
    if form.write.is_some() {
        through_fixture(site, form, statement)
    } else {
        save_and_restore(site, form, part, statement)
    }
}

/// Java: `String saved = System.getProperty(key);` before the write, and the rest of the test
/// in `try { ... } finally { restore }`.
fn save_and_restore(
    site: &Site<'_>,
    form: &Form,
    part: &PartHit,
    statement: Node<'_>,
) -> Option<Vec<Edit>> {
    // Only a statement of the method's own body: the `finally` then covers all that follows.
    let body = statement.parent()?;
    if body.parent()? != site.function()? {
        return None;
    }
    let captures = site.captures(part.id, &part.range)?;
    let key = capture(&captures, "key").map_or("", |key| site.text(key));
    // The key is read again when restoring: a literal or a name, never a call.
    if key.contains('(') {
        return None;
    }
    let indent = site.indent(statement)?;
    let unit = site.indent_unit(statement);
    let saved = site.fresh_name("saved");
    let fill = |code: &str| code.replace("{saved}", &saved).replace("{key}", key);
    let rest_start = site.line_end(statement.end_byte() - 1);
    let closing = body.end_byte() - 1;
    let rest_end = site.line_start(closing);
    if rest_start >= rest_end || site.source[rest_start..rest_end].trim().is_empty() {
        return None;
    }
    let rest = &site.source[rest_start..rest_end];
    if descendants(body).into_iter().any(|node| {
        is_string(node) && node.start_byte() >= rest_start && site.text(node).contains('\n')
    }) {
        return None;
    }
    let mut wrapped = format!("{indent}try {{\n");
    for line in rest.split_inclusive('\n') {
        if line.trim().is_empty() {
            wrapped.push_str(line.trim_start_matches([' ', '\t']));
        } else {
            wrapped.push_str(&unit);
            wrapped.push_str(line);
        }
    }
    if !wrapped.ends_with('\n') {
        wrapped.push('\n');
    }
    wrapped.push_str(&format!(
        "{indent}}} finally {{\n{indent}{unit}{}\n{indent}}}\n",
        fill(form.restore.as_deref()?)
    ));
    let at = statement.start_byte();
    Some(vec![
        Edit {
            range: at..at,
            text: format!("{}\n{indent}", fill(form.save.as_deref()?)),
        },
        Edit {
            range: rest_start..rest_end,
            text: wrapped,
        },
    ])
}

/// Python: the write made through pytest's `monkeypatch` fixture (`monkeypatch.setenv(key,
/// value)`), which the test then asks for.
fn through_fixture(site: &Site<'_>, form: &Form, statement: Node<'_>) -> Option<Vec<Edit>> {
    if site.language != Language::Python {
        return None;
    }
    let function = site.function()?;
    // A unittest method cannot ask for a fixture.
    if let Some(class) = enclosing_class(function)
        && class
            .child_by_field_name("superclasses")
            .is_some_and(|bases| site.text(bases).contains("TestCase"))
    {
        return None;
    }
    let expression = statement.named_child(0)?;
    let mut values: Vec<(&str, &str)> = Vec::new();
    match expression.kind() {
        "assignment" => {
            let left = expression.child_by_field_name("left")?;
            values.push(("value", site.text(expression.child_by_field_name("right")?)));
            match left.kind() {
                "subscript" => {
                    values.push(("object", site.text(left.child_by_field_name("value")?)));
                    values.push(("key", site.text(left.child_by_field_name("subscript")?)));
                }
                "attribute" => {
                    values.push(("object", site.text(left.child_by_field_name("object")?)));
                    values.push((
                        "attribute",
                        site.text(left.child_by_field_name("attribute")?),
                    ));
                }
                _ => return None,
            }
        }
        "call" => {
            let arguments = site.text(expression.child_by_field_name("arguments")?);
            values.push((
                "args",
                arguments.strip_prefix('(')?.strip_suffix(')')?.trim(),
            ));
        }
        _ => return None,
    }
    let mut write = form.write.clone()?;
    for (name, value) in &values {
        write = write.replace(&format!("{{{name}}}"), value);
    }
    if ["{key}", "{value}", "{object}", "{attribute}", "{args}"]
        .iter()
        .any(|placeholder| write.contains(placeholder))
    {
        return None;
    }
    let mut edits = vec![Edit {
        range: statement.byte_range(),
        text: write,
    }];
    edits.extend(ask_for_monkeypatch(site, function)?);
    Some(edits)
}

/// The class a function is defined in, if any.
fn enclosing_class(function: Node<'_>) -> Option<Node<'_>> {
    let mut node = function.parent()?;
    loop {
        match node.kind() {
            "class_definition" => return Some(node),
            "function_definition" | "module" => return None,
            _ => node = node.parent()?,
        }
    }
}

/// `monkeypatch` added to the test's parameters, unless it is there.
fn ask_for_monkeypatch(site: &Site<'_>, function: Node<'_>) -> Option<Vec<Edit>> {
    let parameters = function.child_by_field_name("parameters")?;
    let mut cursor = parameters.walk();
    let named: Vec<Node<'_>> = parameters.named_children(&mut cursor).collect();
    // A parameter's name, whatever its annotation or default (`monkeypatch: MonkeyPatch`).
    let name_of = |parameter: &Node<'_>| -> String {
        let name = match parameter.kind() {
            "identifier" => Some(*parameter),
            _ => parameter
                .child_by_field_name("name")
                .or_else(|| parameter.named_child(0)),
        };
        name.map_or_else(String::new, |name| site.text(name).to_string())
    };
    if named
        .iter()
        .any(|parameter| name_of(parameter) == "monkeypatch")
    {
        return Some(Vec::new());
    }
    // After `*args` or `**kwargs` a plain parameter cannot come.
    if named
        .iter()
        .any(|parameter| site.text(*parameter).starts_with('*'))
    {
        return None;
    }
    Some(vec![match named.last() {
        Some(last) => Edit {
            range: last.end_byte()..last.end_byte(),
            text: ", monkeypatch".to_string(),
        },
        None => Edit {
            range: parameters.start_byte() + 1..parameters.start_byte() + 1,
            text: "monkeypatch".to_string(),
        },
    }])
}
