//! Reads a Python file's call sites: what each call names and on what, and which variables
//! hold an instance of a class the file calls.

use std::sync::OnceLock;

use rustc_hash::FxHashMap as HashMap;
use tree_sitter::Node;

use super::definitions::PythonFile;
use crate::context::syntax::{Kinds, contains, preorder, text};

pub(super) enum Receiver<'s> {
    /// `foo()`: a module-level function.
    Module,
    /// `self.foo()` or `cls.foo()`.
    Instance,
    /// `super().foo()`.
    Super,
    /// `Name.foo()`: a method of a class of the file called `Name`, of an instance a variable
    /// holds, or a function of an imported module; `a.b.foo()` gives `a.b`.
    Named(&'s str),
}

pub(super) struct Call<'s> {
    pub(super) at: usize,
    pub(super) name: &'s str,
    pub(super) receiver: Receiver<'s>,
    /// The call is in a `finally` block.
    pub(super) cleanup: bool,
    pub(super) class: Option<usize>,
}

/// `server = Server(...)` or `self.server = h.Server(...)`: a variable that holds an instance of
/// a class, so that `server.start()` runs that class's method.
pub(super) struct Instantiation<'s> {
    /// Where the call starts.
    pub(super) at: usize,
    /// `server` or `self.server`.
    pub(super) variable: &'s str,
    /// What is called: `Server`, `h.Server`.
    pub(super) class_name: &'s str,
    /// The class whose code assigns it.
    pub(super) class: Option<usize>,
}

impl<'s> PythonFile<'s> {
    pub(super) fn read_calls(
        &mut self,
        source: &'s str,
        root: Node,
        class_starts: &HashMap<usize, usize>,
        with_modules: bool,
    ) {
        let mut open: Vec<usize> = Vec::new();
        preorder(root, walked_kinds(root), |node, cleanup| {
            let range = node.byte_range();
            while open
                .last()
                .is_some_and(|&class| !contains(&self.classes[class].range, &range))
            {
                open.pop();
            }
            match node.kind() {
                // A decorated class starts at its first decorator, where its statement starts.
                "class_definition" | "decorated_definition" => {
                    open.extend(class_starts.get(&range.start))
                }
                "call" => {
                    let Some(function) = node.child_by_field_name("function") else {
                        return;
                    };
                    let (name, receiver) = match function.kind() {
                        "identifier" => (function, Receiver::Module),
                        "attribute" => {
                            let (Some(object), Some(name)) = (
                                function.child_by_field_name("object"),
                                function.child_by_field_name("attribute"),
                            ) else {
                                return;
                            };
                            let receiver = match (object.kind(), text(source, object)) {
                                ("identifier", "self" | "cls") => Receiver::Instance,
                                ("identifier", class_name) => Receiver::Named(class_name),
                                // Without other modules only an instance `self` holds can
                                // resolve (`self.server.start()`): a file read alone keeps no
                                // more calls than it did before modules were read.
                                ("attribute", dotted)
                                    if (with_modules || dotted.starts_with("self."))
                                        && is_dotted(dotted) =>
                                {
                                    Receiver::Named(dotted)
                                }
                                ("call", _) if calls_super(source, object) => Receiver::Super,
                                _ => return,
                            };
                            (name, receiver)
                        }
                        _ => return,
                    };
                    let at = name.start_byte();
                    let name = text(source, name);
                    // By convention only a class's name starts with a capital: checking that
                    // first spares reading the line before every call.
                    let instance = name.starts_with(|c: char| c.is_ascii_uppercase())
                        && !matches!(receiver, Receiver::Instance | Receiver::Super);
                    if let Some(variable) = instance.then(|| assigned_to(source, node)).flatten() {
                        self.instantiations.push(Instantiation {
                            at: range.start,
                            variable,
                            class_name: text(source, function),
                            class: open.last().copied(),
                        });
                    }
                    self.calls.push(Call {
                        at,
                        name,
                        receiver,
                        cleanup,
                        class: open.last().copied(),
                    });
                }
                _ => {}
            }
        });
        self.calls.sort_by_key(|call| call.at);
    }
}

/// Whether the text of an attribute is a dotted name: identifiers joined by dots (`a.b.c`),
/// nothing called, indexed or spaced on the way. Read from the text, which is cheaper than
/// walking the attribute's nodes for every call.
fn is_dotted(text: &str) -> bool {
    text.bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.') || byte >= 0x80)
}

/// The variable a call is assigned to when it is all the right side of a simple assignment on
/// its line: `server = Server(...)`, `self.server = Server(...)`. Only the line's start is read,
/// and only so far: a long line is left alone.
fn assigned_to<'s>(source: &'s str, call: Node) -> Option<&'s str> {
    const MAX_PREFIX: usize = 160;
    // tree-sitter counts a node's column in bytes from its line's start.
    let column = call.start_position().column;
    if column > MAX_PREFIX {
        return None;
    }
    let at = call.start_byte();
    let left = source
        .get(at.checked_sub(column)?..at)?
        .trim_end()
        .strip_suffix('=')?;
    // `==`, `+=`, `:=` and their kin are no plain assignment.
    if left.ends_with(|c: char| "=!<>+-*/%&|^:@".contains(c)) {
        return None;
    }
    let variable = left.trim();
    let name = variable.strip_prefix("self.").unwrap_or(variable);
    let identifier = name.starts_with(|c: char| c == '_' || c.is_alphabetic())
        && name.chars().all(|c| c == '_' || c.is_alphanumeric());
    identifier.then_some(variable)
}

/// Whether `call` is `super()`.
fn calls_super(source: &str, call: Node) -> bool {
    let function = call.child_by_field_name("function");
    function.is_some_and(|function| text(source, function) == "super")
}

/// The kinds the walk over the whole file stops at.
pub(in crate::context) fn walked_kinds(root: Node) -> &'static Kinds {
    static KINDS: OnceLock<Kinds> = OnceLock::new();
    KINDS.get_or_init(|| {
        let names = ["class_definition", "decorated_definition", "call"];
        Kinds::new(&root.language(), &names)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::parse;
    use crate::language::Language;

    #[test]
    fn only_a_plain_assignment_of_a_class_call_holds_an_instance() {
        let source = "def f():\n    a = Server()\n    self.b = h.Server(1)\n    c == Server()\n    \
                      d += Server()\n    e = wrap(Server())\n    g = server()\n    h: T = Server()\n";
        let tree = parse(Language::Python, source, None).expect("the Python grammar loads");
        let file = PythonFile::new(source, tree.root_node(), true);
        let made: Vec<(&str, &str)> = file
            .instantiations
            .iter()
            .map(|made| (made.variable, made.class_name))
            .collect();
        assert_eq!(made, [("a", "Server"), ("self.b", "h.Server")]);
    }

    #[test]
    fn a_call_on_a_dotted_name_names_it_and_one_on_anything_else_is_left_out() {
        let source = "a.b.c()\nself.server.start()\nf().g()\nx[0].y()\n";
        let tree = parse(Language::Python, source, None).expect("the Python grammar loads");
        let named = |with_modules: bool| -> Vec<(&str, &str)> {
            let file = PythonFile::new(source, tree.root_node(), with_modules);
            let calls = file.calls.into_iter();
            let named = calls.filter_map(|call| match call.receiver {
                Receiver::Named(receiver) => Some((receiver, call.name)),
                _ => None,
            });
            named.collect()
        };
        assert_eq!(named(true), [("a.b", "c"), ("self.server", "start")]);
        // Read alone, a dotted name can only be an instance `self` holds.
        assert_eq!(named(false), [("self.server", "start")]);
    }
}
