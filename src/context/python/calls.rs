//! What a call runs: a function or method of the caller's file, a function or class imported
//! from another module the resolver was given (`wait()`, `h.wait()`, `Server()`), or a method
//! of an instance a variable holds (`server = Server()` then `server.start()`).
//!
//! Calling a class runs its `__init__` (a unit named after the class, as the call reads). An
//! instance is followed only from a plain assignment of the call that makes it, on one line
//! (`server = Server(...)`, `self.server = Server(...)` in any method of the class); what a
//! fixture returns, a `with` statement binds or a function builds is not followed.

use std::ops::Range;

use super::call_sites::{Call, Receiver};
use super::definitions::Item;
use super::namespace::Symbol;
use super::{Key, TestScope};
use crate::context::graph::{Step, within};
use crate::context::{Anchor, ContextKind};

impl TestScope<'_, '_> {
    /// Appends a helper step for each function or method that a call in `range` of `file` runs.
    pub(super) fn helpers(&self, file: usize, range: &Range<usize>, found: &mut Vec<Step<Key>>) {
        let python = &self.files[file];
        for call in within(&python.calls, |call| call.at, range) {
            let anchor = Some(Anchor {
                at: call.at,
                cleanup: call.cleanup,
            });
            found.extend(self.callee(file, range, call).map(|(file, function)| Step {
                key: (file, Item::Function(function)),
                kind: ContextKind::Helper,
                anchor,
            }));
        }
    }

    /// The function (its file and index) that `call`, in `range` of `file`, runs.
    fn callee(&self, file: usize, range: &Range<usize>, call: &Call) -> Option<(usize, usize)> {
        let python = &self.files[file];
        let caller_mro = call
            .class
            .map(|class| python.mro(class))
            .unwrap_or_default();
        let here = |function: Option<usize>| function.map(|function| (file, function));
        match call.receiver {
            Receiver::Module => {
                here(python.module_functions.get(call.name).copied()).or_else(|| {
                    // Without imports, a name is a class of the file or nothing it defines.
                    let symbol = match self.namespaces.is_empty() {
                        true => Symbol::Class(file, *python.classes_by_name.get(call.name)?),
                        false => self.namespaces.symbol(self.files, file, call.name)?,
                    };
                    self.called(symbol)
                })
            }
            Receiver::Instance => here(python.method(caller_mro, call.name)),
            Receiver::Super => {
                here(python.method(caller_mro.get(1..).unwrap_or_default(), call.name))
            }
            Receiver::Named(receiver) => {
                let class = python.classes_by_name.get(receiver);
                here(class.and_then(|&class| python.method(python.mro(class), call.name)))
                    .or_else(|| {
                        let (file, class) = self.instance_of(file, range, call, receiver)?;
                        self.method(file, class, call.name)
                    })
                    .or_else(|| self.imported_member(file, receiver, call.name))
            }
        }
    }

    /// What `receiver.name()` runs in `file` when `receiver` is a module or a class it imports.
    fn imported_member(&self, file: usize, receiver: &str, name: &str) -> Option<(usize, usize)> {
        // Without imports, a receiver can only be a class of the file, looked up already.
        if self.namespaces.is_empty() {
            return None;
        }
        match self.namespaces.dotted(self.files, file, receiver)? {
            Symbol::Module(module) => {
                self.called(self.namespaces.symbol(self.files, module, name)?)
            }
            Symbol::Class(file, class) => self.method(file, class, name),
            Symbol::Function(..) | Symbol::Fixture(..) => None,
        }
    }

    /// What calling `symbol` runs: the function, or the class's `__init__`.
    fn called(&self, symbol: Symbol) -> Option<(usize, usize)> {
        match symbol {
            Symbol::Function(file, function) => Some((file, function)),
            Symbol::Class(file, class) => self.method(file, class, "__init__"),
            Symbol::Fixture(..) | Symbol::Module(_) => None,
        }
    }

    /// The method `name` of `class` of `file` or of a base defined in the same file.
    fn method(&self, file: usize, class: usize, name: &str) -> Option<(usize, usize)> {
        let python = &self.files[file];
        let method = python.method(python.mro(class), name)?;
        Some((file, method))
    }

    /// The class (its file and index) of the instance `variable` holds where `call` uses it:
    /// the last assignment before the call in the same unit, or for `self.x`, an assignment in
    /// any method of the caller's class or of its bases (a set-up making what tests use).
    fn instance_of(
        &self,
        file: usize,
        range: &Range<usize>,
        call: &Call,
        variable: &str,
    ) -> Option<(usize, usize)> {
        let python = &self.files[file];
        let instantiations = &python.instantiations;
        if instantiations.is_empty() {
            return None;
        }
        let made = match variable.starts_with("self.") {
            true => {
                let mro = call.class.map(|class| python.mro(class))?;
                mro.iter().find_map(|&class| {
                    let range = &python.classes[class].range;
                    let made = within(instantiations, |made| made.at, range).iter();
                    made.filter(|made| made.class == Some(class))
                        .find(|made| made.variable == variable)
                })
            }
            false => within(instantiations, |made| made.at, &(range.start..call.at))
                .iter()
                .rev()
                .find(|made| made.variable == variable),
        }?;
        match self.namespaces.dotted(self.files, file, made.class_name)? {
            Symbol::Class(file, class) => Some((file, class)),
            _ => None,
        }
    }
}
