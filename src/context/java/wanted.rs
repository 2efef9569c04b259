//! The classes a Java file's code uses that other files of the workspace may declare: what the
//! workspace looks up to give a test's context the code of its base classes, helpers and the
//! classes under test.

use super::definitions::{JavaFile, Receiver};
use super::members::ParameterSource;
use crate::context::graph::within;
use crate::context::syntax::last_segment;
use crate::context::{SourceFile, Wanted};

/// Classes of the JDK and of the test frameworks that code calls most. The caller looks up only
/// the files the workspace declares, so a name left out costs a lookup, not a wrong unit; this
/// spares the commonest ones.
const LIBRARY_CLASSES: [&str; 24] = [
    "Object",
    "String",
    "StringBuilder",
    "Integer",
    "Long",
    "Double",
    "Boolean",
    "Character",
    "Math",
    "System",
    "Thread",
    "Arrays",
    "Collections",
    "Objects",
    "Optional",
    "List",
    "Map",
    "Set",
    "ArrayList",
    "HashMap",
    "HashSet",
    "Stream",
    "Assert",
    "Assertions",
];

/// What the Java `file` uses that other files may define ([`Wanted`]), in the order the file
/// names them: the superclasses it does not declare, and the classes it does not declare whose
/// static methods it calls, that it creates, or whose methods it calls on a local variable or
/// field of that type. Only the code a test may run counts: methods, constructors, instance
/// field initialisers and initializer blocks.
pub(in crate::context) fn wanted(file: SourceFile) -> Vec<Wanted> {
    let java = JavaFile::new(file.source, file.tree.root_node(), &[]);
    let mut named: Vec<(usize, &str)> = Vec::new();
    for class in &java.classes {
        named.extend(class.superclass.map(|name| (class.range.start, name)));
    }
    for member in &java.members {
        for source in &member.sources {
            if let ParameterSource::Factory(reference) = source
                && let Some((class, _)) = reference.split_once('#')
            {
                named.push((member.range.start, last_segment(class)));
            }
        }
        for call in within(&java.calls, |call| call.at, &member.range) {
            let class = call.class.unwrap_or(member.class);
            let class_name = match call.receiver {
                Receiver::Implicit | Receiver::Super => continue,
                Receiver::New => Some(call.name),
                Receiver::Created(class) => Some(class),
                Receiver::Named(name) => java
                    .local_type(&member.range, call.at, name)
                    .or_else(|| java.field_type(class, name))
                    .or(Some(name)),
                Receiver::Field(name) => java.field_type(class, name),
            };
            named.extend(class_name.map(|name| (call.at, name)));
        }
    }
    named.sort_by_key(|&(at, _)| at);
    named
        .into_iter()
        .map(|(_, name)| name)
        .filter(|name| {
            name.starts_with(|first: char| first.is_uppercase())
                && !java.classes_by_name.contains_key(name)
                && !LIBRARY_CLASSES.contains(name)
        })
        .map(|name| Wanted::Type(name.to_owned()))
        .collect()
}
