//! The node kinds and fields of the Java grammar that reading a file asks for, by id. A node's
//! kind name and a field's id by name are C strings that tree-sitter measures and compares on
//! every call, which cost more than the rest of a walk over a file.

use std::num::NonZeroU16;
use std::sync::OnceLock;

use tree_sitter::Node;

/// The kinds of nodes the reading of a file tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A class, interface, enum or record declaration.
    Class,
    MethodInvocation,
    MethodReference,
    ObjectCreation,
    LocalVariables,
    Resource,
    This,
    Super,
    Identifier,
    FieldAccess,
    /// `Server`.
    TypeIdentifier,
    /// `pkg.Server` or `Server<T>`.
    QualifiedOrGenericType,
}

/// The ids of the kinds and fields of the Java grammar that reading a file asks for.
pub(super) struct Grammar {
    /// Per kind id, the kind it is.
    kinds: Vec<Option<Kind>>,
    pub(super) name: u16,
    pub(super) object: u16,
    pub(super) field: u16,
    pub(super) type_: u16,
    pub(super) declarator: Option<NonZeroU16>,
    pub(super) value: u16,
}

impl Grammar {
    /// The ids of the grammar of `node`'s tree, a Java one.
    pub(super) fn of(node: Node) -> &'static Grammar {
        static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
        GRAMMAR.get_or_init(|| {
            let language = node.language();
            let named: [(&str, Kind); 16] = [
                ("class_declaration", Kind::Class),
                ("interface_declaration", Kind::Class),
                ("enum_declaration", Kind::Class),
                ("record_declaration", Kind::Class),
                ("method_invocation", Kind::MethodInvocation),
                ("method_reference", Kind::MethodReference),
                ("object_creation_expression", Kind::ObjectCreation),
                ("local_variable_declaration", Kind::LocalVariables),
                ("resource", Kind::Resource),
                ("this", Kind::This),
                ("super", Kind::Super),
                ("identifier", Kind::Identifier),
                ("field_access", Kind::FieldAccess),
                ("type_identifier", Kind::TypeIdentifier),
                ("scoped_type_identifier", Kind::QualifiedOrGenericType),
                ("generic_type", Kind::QualifiedOrGenericType),
            ];
            let ids = 0..u16::try_from(language.node_kind_count()).unwrap_or(u16::MAX);
            // A name may have several ids (an alias and a rule); each is the kind.
            let kinds = ids
                .map(|id| {
                    let name = language.node_kind_for_id(id)?;
                    // `this` and `super` are keywords as well as nodes: both are the kind.
                    let named_kind = named.iter().find(|(kind, _)| *kind == name)?;
                    Some(named_kind.1)
                })
                .collect();
            let field = |name: &str| language.field_id_for_name(name).map_or(0, u16::from);
            Grammar {
                kinds,
                name: field("name"),
                object: field("object"),
                field: field("field"),
                type_: field("type"),
                declarator: language.field_id_for_name("declarator"),
                value: field("value"),
            }
        })
    }

    pub(super) fn kind(&self, node: Node) -> Option<Kind> {
        let id = usize::from(node.kind_id());
        self.kinds.get(id).copied().flatten()
    }
}
