//! What a Rust file uses that other files of the workspace define: the files of the modules it
//! declares (`mod name;`), the module files its `crate::`, `super::` and library paths lead to,
//! and the functions it imports from crates it cannot place.

use rustc_hash::FxHashSet as HashSet;

use super::body::On;
use super::definitions::RustFile;
use super::paths::FilePlace;
use super::targets::may_name_the_library;
use crate::context::{SourceFile, Wanted};

/// At most this many files and functions from one file: enough for a test crate's helpers and
/// the modules of the code it tests, and no more whatever the file holds.
const MAX_WANTED: usize = 64;

/// At most this many of the functions looked up by name.
const MAX_FUNCTIONS: usize = 16;

/// What the Rust `file` at `path` uses that other files may define ([`Wanted`]), each once, in
/// the order the file names them:
///
/// - `mod name;`: the files rustc reads it from ([`FilePlace::declared`]);
/// - `use crate::a::b;`, `crate::a::b::f()`, `super::` paths: the files of the module the path
///   leads to, longest prefix first, then the crate's root ([`FilePlace::in_crate`]);
/// - in a test, bench, example or binary, `use my_crate::a::f;` or `my_crate::a::f()`: the same
///   in the package's `src/`, for a first segment that nothing in the file binds and that may be
///   the package's crate name ([`may_name_the_library`]);
/// - a function imported that way and called: by its name, for the workspace's symbols to find
///   when the crate is another package of the workspace.
pub(in crate::context) fn wanted(path: &str, file: SourceFile) -> Vec<Wanted> {
    let place = FilePlace::of(path);
    let rust = RustFile::new(file, &[]);
    let body = rust.body();
    // Names a path's first segment may be besides a crate.
    let mut bound: HashSet<&str> = rust.declared.iter().map(|declared| declared.name).collect();
    bound.extend(rust.modules.iter().map(|module| module.name));
    let imports = body
        .imports
        .iter()
        .enumerate()
        .flat_map(|(module, imports)| imports.iter().map(move |import| (module, import)));
    bound.extend(imports.clone().map(|(_, import)| import.alias));
    let mut found: Vec<(usize, Wanted)> = Vec::new();
    for declared in &rust.declared {
        let Some(inline) = rust.inline_path(declared.module) else {
            continue;
        };
        let files = place.declared(&inline, declared.name, declared.path);
        found.push((declared.at, Wanted::File(files)));
    }
    let called: HashSet<&str> = body
        .calls
        .iter()
        .filter(|call| call.path.len() == 1 && call.on == On::Path)
        .map(|call| call.path[0])
        .collect();
    let mut functions = 0;
    for (module, import) in imports {
        let files = module_files(&place, &rust, module, &import.path, &bound);
        if !files.is_empty() {
            found.push((import.at, Wanted::File(files)));
        }
        let through_a_crate = import
            .path
            .first()
            .is_some_and(|first| !bound.contains(first) && may_name_the_library(first));
        let a_function = import.alias.starts_with(|c: char| c.is_lowercase());
        if !import.glob
            && through_a_crate
            && a_function
            && called.contains(import.alias)
            && functions < MAX_FUNCTIONS
        {
            functions += 1;
            found.push((import.at, Wanted::Function(import.alias.to_owned())));
        }
    }
    for call in body.calls.iter().filter(|call| call.on == On::Path) {
        let Some((_, qualifiers)) = call.path.split_last() else {
            continue;
        };
        let files = module_files(&place, &rust, call.module, qualifiers, &bound);
        if !files.is_empty() {
            found.push((call.at, Wanted::File(files)));
        }
    }
    found.sort_by_key(|(at, _)| *at);
    let mut seen = HashSet::default();
    found
        .into_iter()
        .map(|(_, wanted)| wanted)
        .filter(|wanted| seen.insert(wanted.clone()))
        .take(MAX_WANTED)
        .collect()
}

/// The files of the module a path written in `module` of `rust` leads to, when it leaves the
/// file through `crate::`, `super::` or the package's library.
fn module_files(
    place: &FilePlace,
    rust: &RustFile,
    module: usize,
    path: &[&str],
    bound: &HashSet<&str>,
) -> Vec<String> {
    let Some((&first, rest)) = path.split_first() else {
        return Vec::new();
    };
    match first {
        "crate" => place.in_crate(rest),
        "super" | "self" => {
            let Some(inline) = rust.inline_path(module) else {
                return Vec::new();
            };
            let Some(mut module_path) = place.module_path(&inline) else {
                return Vec::new();
            };
            let own_depth = module_path.len() - inline.len();
            let mut rest = path;
            while let Some((&"super", tail)) = rest.split_first() {
                if module_path.pop().is_none() {
                    return Vec::new();
                }
                rest = tail;
            }
            if let Some((&"self", tail)) = rest.split_first() {
                rest = tail;
            }
            // Still in this file: its own `mod name;` declarations name the files.
            if module_path.len() >= own_depth {
                return Vec::new();
            }
            let mut full: Vec<&str> = module_path.iter().map(String::as_str).collect();
            full.extend(rest);
            place.in_crate(&full)
        }
        first if !bound.contains(first) && may_name_the_library(first) => place.in_library(rest),
        _ => Vec::new(),
    }
}
