//! Python's `fnmatch` as pytest applies it to its settings: a glob matches a base name, or a
//! whole path when it holds a `/` (`fnmatch_ex`), and a class or function name is collected by
//! a prefix or a glob (`_matches_prefix_or_glob_option`).

use std::path::Path;

use regex::Regex;

/// The entries of one setting, each with its compiled glob where it has glob characters.
#[derive(Debug, Clone)]
pub(super) struct Patterns {
    pub(super) entries: Vec<String>,
    globs: Vec<Glob>,
}

impl PartialEq for Patterns {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Eq for Patterns {}

#[derive(Debug, Clone)]
struct Glob {
    pattern: String,
    regex: Regex,
}

impl Patterns {
    pub(super) fn new(entries: &[String]) -> Patterns {
        let globs = entries
            .iter()
            .filter_map(|entry| {
                // Relative path globs match the end of an absolute path, as in `fnmatch_ex`.
                let pattern = if entry.contains('/') && !entry.starts_with('/') {
                    format!("*/{entry}")
                } else {
                    entry.clone()
                };
                Some(Glob {
                    regex: fnmatch_regex(&pattern)?,
                    pattern: entry.clone(),
                })
            })
            .collect();
        Patterns {
            entries: entries.to_vec(),
            globs,
        }
    }

    /// pytest's `fnmatch_ex`: a glob without a `/` matches the base name, one with a `/` the
    /// whole path.
    pub(super) fn match_path(&self, path: &Path) -> bool {
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy())
            .unwrap_or_default();
        let whole = path.to_string_lossy().replace('\\', "/");
        self.globs.iter().any(|glob| {
            if glob.pattern.contains('/') {
                glob.regex.is_match(&whole)
            } else {
                glob.regex.is_match(&name)
            }
        })
    }

    /// pytest's `_matches_prefix_or_glob_option`: a prefix, or a glob where the entry has glob
    /// characters.
    pub(super) fn prefix_or_glob(&self, name: &str) -> bool {
        self.entries
            .iter()
            .any(|entry| name.starts_with(entry.as_str()))
            || self
                .globs
                .iter()
                .any(|glob| has_glob_characters(&glob.pattern) && glob.regex.is_match(name))
    }
}

fn has_glob_characters(entry: &str) -> bool {
    entry.contains(['*', '?', '['])
}

/// Python's `fnmatch.translate`: `*` any run of characters (`/` included), `?` one character,
/// `[seq]` and `[!seq]` sets, everything else literal; the whole name must match. Case-sensitive,
/// as `fnmatch.fnmatch` is on POSIX. `None` only for a set the regex engine refuses.
fn fnmatch_regex(pattern: &str) -> Option<Regex> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut regex = String::from("(?s)^");
    let mut index = 0;
    while let Some(&char) = chars.get(index) {
        index += 1;
        match char {
            '*' => regex.push_str(".*"),
            '?' => regex.push('.'),
            '[' => {
                // A set runs to the next `]`, a `]` right after the opening (or after `!`)
                // being part of it; without a closing `]` the `[` is literal.
                let mut end = index;
                if chars.get(end) == Some(&'!') {
                    end += 1;
                }
                if chars.get(end) == Some(&']') {
                    end += 1;
                }
                while chars.get(end).is_some_and(|&char| char != ']') {
                    end += 1;
                }
                if end >= chars.len() {
                    regex.push_str("\\[");
                    continue;
                }
                let mut set: String = chars[index..end].iter().collect();
                index = end + 1;
                let negated = set.starts_with('!');
                if negated {
                    set.remove(0);
                }
                regex.push('[');
                if negated {
                    regex.push('^');
                }
                // Every member is escaped but the `-` of a range: a leading `^`, and the `&&`,
                // `--` and `~~` set operations of the regex engine, are literal in fnmatch.
                let mut previous_dash = false;
                for member in set.chars() {
                    if member == '-' && !previous_dash {
                        regex.push('-');
                        previous_dash = true;
                    } else {
                        if member.is_ascii_punctuation() {
                            regex.push('\\');
                        }
                        regex.push(member);
                        previous_dash = false;
                    }
                }
                regex.push(']');
            }
            other => regex.push_str(&regex::escape(&other.to_string())),
        }
    }
    regex.push('$');
    Regex::new(&regex).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_sets_and_literals() {
        let matches = |pattern: &str, name: &str| {
            fnmatch_regex(pattern).is_some_and(|regex| regex.is_match(name))
        };
        assert!(matches("test_[ab].py", "test_a.py"));
        assert!(!matches("test_[ab].py", "test_c.py"));
        assert!(matches("test_[!ab].py", "test_c.py"));
        assert!(!matches("test_[!ab].py", "test_a.py"));
        assert!(matches("test_?.py", "test_x.py"));
        assert!(!matches("test_?.py", "test_xy.py"));
        // Regex characters are literal, an unclosed set too.
        assert!(matches("a.b+(c)", "a.b+(c)"));
        assert!(!matches("a.b", "axb"));
        assert!(matches("test_[x", "test_[x"));
        assert!(matches("[]]x", "]x"));
        assert!(matches("[^a]", "^"));
        assert!(!matches("[^a]", "b"));
        assert!(matches("[a-c]", "b"));
        assert!(matches("[&&]", "&"));
        assert!(matches("*", "a/b"));
    }
}
