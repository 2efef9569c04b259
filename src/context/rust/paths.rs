//! Where a Rust module's file is, from paths alone: which crate a file belongs to, where the
//! files of the modules it declares are, and which files a crate-relative module path names.
//!
//! The rules are rustc's and Cargo's (the Rust Reference, "Modules" and "The path attribute";
//! the Cargo Book, "Target auto-discovery"): a crate root or a `mod.rs` keeps the files of its
//! modules in its own directory, any other `dir/x.rs` keeps them in `dir/x/`. Cargo.toml is not
//! read, so custom target paths and `[lib] name` are not known.

/// How many segments of a module path are turned into candidate files: deeper paths are cut, so
/// a hostile path costs no more than a real one.
const MAX_MODULE_SEGMENTS: usize = 8;

/// Where a file sits in its crate, read from its path relative to the workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FilePlace {
    /// The file's directory, `""` at the workspace root.
    dir: String,
    /// Where the files of the modules it declares are.
    children_dir: String,
    /// A crate root: `src/lib.rs`, `src/main.rs`, `src/bin/x.rs`, every file directly in `tests/`,
    /// `benches/` or `examples/` (and their `name/main.rs`), `build.rs`.
    pub(super) is_root: bool,
    /// The crate the file belongs to, when its path tells: where its root keeps its modules'
    /// files, and the file's module path from there (`["net", "tls"]` for `src/net/tls.rs`).
    crate_of: Option<CrateOf>,
    /// For a file of a crate that may name the package's library (a test, bench, example or
    /// binary): the package's directory (`""` or `crates/pool`).
    pub(super) package: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct CrateOf {
    dir: String,
    module_path: Vec<String>,
    /// The crate is the package's library (or a binary beside it in `src/`), whose root is
    /// `src/lib.rs` or `src/main.rs`.
    in_src: bool,
}

impl FilePlace {
    /// The place of the file at `path` (`/`-separated; `\` and `.` segments are tolerated). A
    /// path that is no `.rs` file (a placeholder) is taken for a crate root in an unknown
    /// directory, whose modules are found by the end of their paths.
    pub(super) fn of(path: &str) -> FilePlace {
        let segments = normalise(path);
        let Some((name, dirs)) = segments
            .split_last()
            .filter(|(name, _)| name.ends_with(".rs"))
        else {
            return FilePlace {
                dir: String::new(),
                children_dir: String::new(),
                is_root: false,
                crate_of: None,
                package: None,
            };
        };
        let stem = name.trim_end_matches(".rs");
        let dir = dirs.join("/");
        // The first directory, from the root, that holds a crate's files.
        let kind_at = dirs
            .iter()
            .position(|dir| matches!(*dir, "src" | "tests" | "benches" | "examples"));
        let (is_root, crate_of, package) = match kind_at {
            Some(at) => {
                let package = dirs[..at].join("/");
                let in_src = dirs[at] == "src";
                let in_bin = in_src && dirs.get(at + 1) == Some(&"bin") && dirs.len() > at + 1;
                let crate_at = if in_bin { at + 1 } else { at };
                let depth = dirs.len() - crate_at - 1;
                let is_root = match depth {
                    0 if in_src && !in_bin => matches!(stem, "lib" | "main"),
                    0 => true,
                    1 => stem == "main" && !in_src,
                    _ => false,
                } || (in_bin && depth == 1 && stem == "main");
                let crate_dir = if is_root {
                    dir.clone()
                } else {
                    dirs[..=crate_at].join("/")
                };
                let mut module_path: Vec<String> = Vec::new();
                if !is_root {
                    module_path.extend(dirs[crate_at + 1..].iter().map(|dir| dir.to_string()));
                    if stem != "mod" {
                        module_path.push(stem.to_owned());
                    }
                }
                let names_library = !in_src || in_bin || (is_root && stem == "main");
                let crate_of = CrateOf {
                    dir: crate_dir,
                    module_path,
                    in_src: in_src && !in_bin,
                };
                (is_root, Some(crate_of), names_library.then_some(package))
            }
            None if stem == "build" => {
                let crate_of = CrateOf {
                    dir: dir.clone(),
                    module_path: Vec::new(),
                    in_src: false,
                };
                (true, Some(crate_of), None)
            }
            None => (matches!(stem, "lib" | "main"), None, None),
        };
        let owns_directory = is_root || stem == "mod" || crate_of.is_none();
        let children_dir = if owns_directory {
            dir.clone()
        } else {
            join(&dir, stem)
        };
        FilePlace {
            dir,
            children_dir,
            is_root,
            crate_of,
            package,
        }
    }

    /// The files rustc takes `mod name;` from, declared in this file inside the inline modules
    /// `inline` (outermost first), with its `#[path = "..."]` when it has one.
    pub(super) fn declared(&self, inline: &[&str], name: &str, path: Option<&str>) -> Vec<String> {
        let mut base = if inline.is_empty() {
            self.dir.clone()
        } else {
            self.children_dir.clone()
        };
        for module in inline {
            base = join(&base, module);
        }
        match path {
            Some(path) => vec![normalise(&join(&base, path)).join("/")],
            None => {
                let base = if inline.is_empty() {
                    self.children_dir.clone()
                } else {
                    base
                };
                children(&base, name)
            }
        }
    }

    /// The module path of this file's inline module `inline` in its crate, when the path tells.
    pub(super) fn module_path(&self, inline: &[&str]) -> Option<Vec<String>> {
        let crate_of = self.crate_of.as_ref()?;
        let mut path = crate_of.module_path.clone();
        path.extend(inline.iter().map(|module| module.to_string()));
        Some(path)
    }

    /// The files of the crate-relative module `path`, nearest first, for a path that goes on
    /// with an item: `a::b` gives `a/b.rs`, `a/b/mod.rs`, then `a.rs`, `a/mod.rs` (where `b` may
    /// be an item of `a`), then the crate root (where `a` may be an inline module). Empty when the
    /// file's crate is not known from its path.
    pub(super) fn in_crate(&self, path: &[&str]) -> Vec<String> {
        match &self.crate_of {
            Some(crate_of) => {
                // A test crate's root is the test file itself, as a library's root is when
                // this file is it: no other file to look for.
                let roots: &[&str] = if crate_of.in_src && !self.is_root {
                    &["lib.rs", "main.rs"]
                } else {
                    &[]
                };
                module_files(&crate_of.dir, path, roots)
            }
            None => Vec::new(),
        }
    }

    /// The files of module `path` of the package's library, for a crate that names it.
    pub(super) fn in_library(&self, path: &[&str]) -> Vec<String> {
        match &self.package {
            Some(package) => module_files(&join(package, "src"), path, &["lib.rs"]),
            None => Vec::new(),
        }
    }

    /// Where the crate's root keeps its modules' files: `src`, `tests`; `None` when the path does
    /// not tell.
    pub(super) fn crate_dir(&self) -> Option<&str> {
        self.crate_of.as_ref().map(|crate_of| crate_of.dir.as_str())
    }

    /// The files that may be the root of this file's crate, other than this file.
    pub(super) fn crate_roots(&self) -> Vec<String> {
        match &self.crate_of {
            Some(crate_of) if crate_of.in_src && !self.is_root => ["lib.rs", "main.rs"]
                .iter()
                .map(|root| join(&crate_of.dir, root))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The directory of the package's library, for a crate that names it.
    pub(super) fn library_dir(&self) -> Option<String> {
        self.package.as_ref().map(|package| join(package, "src"))
    }
}

/// The files of module `name` whose parent keeps its modules' files in `dir`.
pub(super) fn children(dir: &str, name: &str) -> Vec<String> {
    vec![
        join(dir, &format!("{name}.rs")),
        join(dir, &format!("{name}/mod.rs")),
    ]
}

/// The files of module `path` under `dir`, longest prefix first, then `roots` in `dir`. A
/// segment that starts with a capital letter names a type, never a file: the path is cut there.
fn module_files(dir: &str, path: &[&str], roots: &[&str]) -> Vec<String> {
    let modules = path
        .iter()
        .take(MAX_MODULE_SEGMENTS)
        .take_while(|segment| segment.starts_with(|c: char| c.is_lowercase() || c == '_'));
    let modules: Vec<&str> = modules.copied().collect();
    let mut files = Vec::new();
    for length in (1..=modules.len()).rev() {
        let (name, parents) = modules[..length].split_last().unwrap_or((&"", &[]));
        let mut parent = dir.to_owned();
        for module in parents {
            parent = join(&parent, module);
        }
        files.extend(children(&parent, name));
    }
    files.extend(roots.iter().map(|root| join(dir, root)));
    files
}

/// `dir/name`, or `name` at the root.
pub(super) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The segments of `path`, with `.` and empty segments dropped and `..` taking the one before
/// it away (at the root there is none to take, and it is dropped: such a file is matched by the
/// end of its path).
fn normalise(path: &str) -> Vec<&str> {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split(['/', '\\']) {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            segment => segments.push(segment),
        }
    }
    segments
}

/// Whether the workspace path `file` and `candidate` end alike, one being the other's end after
/// a `/`: a candidate from a file whose place is not known exactly (a placeholder path, or one
/// from another root) still finds its file by the end of its path.
pub(super) fn ends_alike(candidate: &str, file: &str) -> bool {
    let ends_with = |long: &str, short: &str| {
        long.len() > short.len()
            && long.ends_with(short)
            && long.as_bytes()[long.len() - short.len() - 1] == b'/'
    };
    ends_with(file, candidate) || ends_with(candidate, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(file: &str, inline: &[&str], name: &str, path: Option<&str>) -> Vec<String> {
        FilePlace::of(file).declared(inline, name, path)
    }

    #[test]
    fn a_crate_root_or_mod_rs_keeps_its_modules_beside_it_any_other_file_below_it() {
        for root in [
            "src/lib.rs",
            "src/main.rs",
            "src/bin/tool.rs",
            "benches/b.rs",
        ] {
            let dir = root.rsplit_once('/').map_or("", |(dir, _)| dir);
            assert_eq!(
                declared(root, &[], "net", None),
                [format!("{dir}/net.rs"), format!("{dir}/net/mod.rs")],
                "{root}"
            );
        }
        assert_eq!(
            declared("tests/it.rs", &[], "common", None),
            ["tests/common.rs", "tests/common/mod.rs"]
        );
        assert_eq!(
            declared("tests/common/mod.rs", &[], "server", None),
            ["tests/common/server.rs", "tests/common/server/mod.rs"]
        );
        assert_eq!(
            declared("src/net.rs", &[], "tls", None),
            ["src/net/tls.rs", "src/net/tls/mod.rs"]
        );
        assert_eq!(
            declared("build.rs", &[], "gen", None),
            ["gen.rs", "gen/mod.rs"]
        );
        assert_eq!(
            declared("crates/pool/tests/it/main.rs", &[], "common", None),
            [
                "crates/pool/tests/it/common.rs",
                "crates/pool/tests/it/common/mod.rs"
            ]
        );
    }

    #[test]
    fn inline_modules_are_directories_and_path_attributes_start_from_the_file_s_directory() {
        assert_eq!(
            declared("src/lib.rs", &["a"], "b", None),
            ["src/a/b.rs", "src/a/b/mod.rs"]
        );
        assert_eq!(
            declared("src/net.rs", &["a"], "b", None),
            ["src/net/a/b.rs", "src/net/a/b/mod.rs"]
        );
        assert_eq!(
            declared("tests/it.rs", &[], "common", Some("support/common.rs")),
            ["tests/support/common.rs"]
        );
        assert_eq!(
            declared("src/net.rs", &[], "shared", Some("../shared.rs")),
            ["shared.rs"]
        );
        assert_eq!(
            declared("src/net.rs", &["a"], "x", Some("x.rs")),
            ["src/net/a/x.rs"]
        );
    }

    #[test]
    fn a_path_that_is_no_rust_file_declares_modules_beside_it() {
        assert_eq!(
            declared("t", &[], "common", None),
            ["common.rs", "common/mod.rs"]
        );
        assert!(!FilePlace::of("t").is_root);
        assert!(FilePlace::of("t").in_crate(&["a"]).is_empty());
    }

    #[test]
    fn crate_paths_name_module_files_longest_first_then_the_root() {
        let library = FilePlace::of("src/pool.rs");
        assert_eq!(
            library.in_crate(&["net", "tls"]),
            [
                "src/net/tls.rs",
                "src/net/tls/mod.rs",
                "src/net.rs",
                "src/net/mod.rs",
                "src/lib.rs",
                "src/main.rs"
            ]
        );
        assert_eq!(library.in_crate(&["Pool"]), ["src/lib.rs", "src/main.rs"]);
        assert_eq!(
            library.module_path(&["tests"]),
            Some(vec!["pool".into(), "tests".into()])
        );
        assert_eq!(library.package, None, "a library does not name itself");
        let test = FilePlace::of("crates/pool/tests/it.rs");
        assert_eq!(
            test.in_crate(&["common"]),
            [
                "crates/pool/tests/common.rs",
                "crates/pool/tests/common/mod.rs"
            ]
        );
        assert_eq!(
            test.in_library(&["pool", "Pool"]),
            [
                "crates/pool/src/pool.rs",
                "crates/pool/src/pool/mod.rs",
                "crates/pool/src/lib.rs"
            ]
        );
        assert_eq!(FilePlace::of("src/main.rs").in_library(&[]), ["src/lib.rs"]);
        let deep = ["m"; 20];
        assert_eq!(library.in_crate(&deep).len(), 2 * MAX_MODULE_SEGMENTS + 2);
    }

    #[test]
    fn files_match_by_the_end_of_their_paths_at_a_slash() {
        assert!(ends_alike("common/mod.rs", "tests/common/mod.rs"));
        assert!(ends_alike(
            "/home/me/repo/tests/common.rs",
            "tests/common.rs"
        ));
        assert!(!ends_alike("mmon/mod.rs", "tests/common/mod.rs"));
        assert!(
            !ends_alike("tests/common.rs", "tests/common.rs"),
            "equal paths match exactly"
        );
    }
}
