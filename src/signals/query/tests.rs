//! Holds the catalogue's queries, matched in Rust, to tree-sitter's own engine: over every
//! example of every entry and every source fixture, both find the same matches.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::path::Path;

use streaming_iterator::StreamingIterator;

use super::Query;
use crate::language::Language;

/// A match as both engines report it: the pattern and each capture's name and byte range.
type Found = (usize, Vec<(String, usize, usize)>);

fn ours(query: &Query, tree: &tree_sitter::Tree, text: &str) -> BTreeSet<Found> {
    let mut all = BTreeSet::new();
    let work = Cell::new(u64::MAX);
    query.matches(tree.root_node(), text, &work, &mut |pattern, captures| {
        let mut captures: Vec<_> = captures
            .iter()
            .map(|(index, node)| {
                let name = query.capture_names()[*index as usize].clone();
                (name, node.start_byte(), node.end_byte())
            })
            .collect();
        captures.sort();
        all.insert((pattern, captures));
    });
    all
}

fn tree_sitters(
    query: &tree_sitter::Query,
    tree: &tree_sitter::Tree,
    text: &str,
) -> BTreeSet<Found> {
    let mut all = BTreeSet::new();
    let mut cursor = tree_sitter::QueryCursor::new();
    let mut found = cursor.matches(query, tree.root_node(), text.as_bytes());
    while let Some(found) = found.next() {
        let mut captures: Vec<_> = found
            .captures()
            .iter()
            .map(|capture| {
                let name = query.capture_names()[capture.index as usize].to_string();
                (name, capture.node.start_byte(), capture.node.end_byte())
            })
            .collect();
        captures.sort();
        all.insert((found.pattern_index, captures));
    }
    all
}

/// The query texts of a language's catalogue file: its facts, then its signals and mitigations.
fn query_texts(language: Language) -> Vec<String> {
    let file: toml::Table = toml::from_str(super::super::catalogue::source_of(language)).unwrap();
    let texts = |section: &str| -> String {
        file.get(section)
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .map(|entry| format!("{}\n", entry["query"].as_str().unwrap()))
            .collect()
    };
    vec![texts("fact"), texts("signal") + &texts("mitigation")]
}

/// Every example of the language's catalogue as a file, and its source fixtures.
fn corpus(language: Language) -> Vec<String> {
    let mut files = Vec::new();
    let file: toml::Table = toml::from_str(super::super::catalogue::source_of(language)).unwrap();
    for section in ["signal", "mitigation"] {
        for entry in file[section].as_array().unwrap() {
            for key in ["matches", "ignores"] {
                for code in entry
                    .get(key)
                    .and_then(toml::Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let code = code.as_str().unwrap();
                    files.push(match language {
                        Language::Java => format!("class T {{\n{code}\n}}\n"),
                        _ => code.to_string(),
                    });
                }
            }
        }
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut stack = vec![fixtures];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if Language::from_path(&path) == Some(language)
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                files.push(text);
            }
        }
    }
    files
}

#[test]
fn the_catalogue_matches_as_tree_sitter_matches_it() {
    for language in Language::ALL {
        let grammar = language.grammar();
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&grammar).unwrap();
        let files = corpus(language);
        let mut total = 0;
        assert!(files.len() > 20, "{language}: only {} files", files.len());
        for text in query_texts(language) {
            let reference = tree_sitter::Query::new(&grammar, &text).unwrap_or_else(|error| {
                panic!("{language}: tree-sitter refuses the query: {error}")
            });
            let query = Query::new(&grammar, &text).unwrap();
            assert_eq!(query.pattern_count(), reference.pattern_count());
            for file in &files {
                let tree = parser.parse(file, None).unwrap();
                let expected = tree_sitters(&reference, &tree, file);
                let found = ours(&query, &tree, file);
                assert_eq!(found, expected, "{language}, in:\n{file}");
                total += found.len();
            }
        }
        // The comparison means something only if both engines find plenty.
        assert!(total > 200, "{language}: only {total} matches");
    }
}

fn java(text: &str) -> Result<Query, super::QueryError> {
    Query::new(&Language::Java.grammar(), text)
}

#[test]
fn a_query_outside_the_subset_is_refused_where_it_goes_wrong() {
    // Each case: the query, where the error must point (the text it starts at), its message.
    let cases = [
        (
            "(method_invocation (identifier)* @hit)",
            "* @hit",
            "quantifiers are not supported",
        ),
        (
            "(method_invocatio) @hit",
            "method_invocatio)",
            "the grammar has no node kind \"method_invocatio\"",
        ),
        (
            "(method_invocation nme: (identifier)) @hit",
            "nme",
            "the grammar has no field \"nme\"",
        ),
        ("(method_invocation (identifier) @hit", "", "unclosed `(`"),
        (
            "((identifier) (identifier)) @hit",
            "(identifier)) @hit",
            "a group of sibling patterns is not supported",
        ),
        (
            "((identifier) @hit (#lol? @hit \"x\"))",
            "#lol",
            "unsupported predicate #lol?",
        ),
        (
            "(expression) @hit",
            "expression",
            "\"expression\" is a supertype, which is not supported",
        ),
    ];
    for (text, at, message) in cases {
        let offset = if at.is_empty() {
            text.len()
        } else {
            text.find(at).unwrap()
        };
        let got = java(text).err().map(|error| (error.offset, error.message));
        assert_eq!(got, Some((offset, message.to_string())), "{text}");
    }
    assert!(
        java("(method_invocation . (identifier) @hit .) ((identifier) @hit (#eq? @hit \"x\"))")
            .is_ok()
    );
    // Blanks and comments may go anywhere between tokens, as in tree-sitter.
    let spaced = java("( method_invocation ; a call\n  name: ( identifier ) @hit )").unwrap();
    assert_eq!(spaced.pattern_count(), 1);
    let error = java("( method_invocatio ) @hit").unwrap_err();
    assert_eq!(error.offset, 2, "{error}");
}

#[test]
fn matching_stops_when_its_work_runs_out_and_keeps_what_it_found() {
    let query = java("(method_invocation name: (identifier) @hit)").unwrap();
    let calls: String = (0..200)
        .map(|i| format!("  void t{i}() {{ call{i}(); }}\n"))
        .collect();
    let text = format!("class T {{\n{calls}}}\n");
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&Language::Java.grammar()).unwrap();
    let tree = parser.parse(&text, None).unwrap();
    let count = |work: u64| {
        let mut found = 0;
        query.matches(tree.root_node(), &text, &Cell::new(work), &mut |_, _| {
            found += 1
        });
        found
    };
    assert_eq!(count(u64::MAX), 200);
    let some = count(1_000);
    assert!(
        some > 0 && some < 200,
        "{some} of 200 found with a small budget"
    );
}

#[test]
fn a_cut_or_garbled_query_is_refused_without_panicking() {
    for language in Language::ALL {
        let grammar = language.grammar();
        let text = query_texts(language).concat();
        let boundaries: Vec<usize> = (0..text.len())
            .step_by(41)
            .filter(|&end| text.is_char_boundary(end))
            .collect();
        let mut refused = 0;
        for &end in &boundaries {
            refused += usize::from(Query::new(&grammar, &text[..end]).is_err());
            let garbled = text[..end].replace('(', "[").replace('"', "");
            let _ = Query::new(&grammar, &garbled);
        }
        assert!(
            refused > boundaries.len() / 2,
            "{language}: most cuts are refused"
        );
    }
}

/// Each match of `query` in the Java `text`: its pattern and the text of its `@hit` capture.
fn java_hits<'t>(query: &Query, text: &'t str) -> Vec<(usize, &'t str)> {
    let hit = query
        .capture_index_for_name("hit")
        .expect("the query captures @hit");
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&Language::Java.grammar()).unwrap();
    let tree = parser.parse(text, None).unwrap();
    let mut found = Vec::new();
    query.matches(
        tree.root_node(),
        text,
        &Cell::new(u64::MAX),
        &mut |pattern, captures| {
            let node = captures.iter().find(|(index, _)| *index == hit).unwrap().1;
            found.push((pattern, &text[node.byte_range()]));
        },
    );
    found
}

#[test]
fn a_predicate_between_two_captures_compares_their_text() {
    let query = java(
        "(binary_expression left: (identifier) @a right: (identifier) @b (#eq? @a @b)) @hit\n\
         (binary_expression left: (identifier) @a right: (identifier) @b (#not-eq? @a @b)) @hit",
    )
    .unwrap();
    let text = "class T { boolean same = x == x; boolean other = x == y; }";
    assert_eq!(java_hits(&query, text), [(0, "x == x"), (1, "x == y")]);
}

#[test]
fn a_pattern_is_found_when_the_text_it_needs_is_under_a_repeated_field() {
    // Both declarators sit under the field `declarator`: the pattern needs the second one's name,
    // so a check of the first alone would rule the declaration out.
    let query = java(
        "(field_declaration declarator: (variable_declarator name: (identifier) @n (#eq? @n \"b\"))) @hit",
    )
    .unwrap();
    let text = "class T { int a = 1, b = 2; int c = 3; }";
    assert_eq!(java_hits(&query, text), [(0, "int a = 1, b = 2;")]);
}
