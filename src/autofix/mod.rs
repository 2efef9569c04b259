//! Fixes for the mechanisms whose cure is mechanical: a fixed sleep before an assertion becomes a
//! wait for the assertion with a deadline, a fixed port becomes port 0, a tight bound on a wait
//! becomes a generous one, process-wide state is saved and restored. Each fix is data beside the
//! mechanism it cures (`[[fix]]` in `grammars/signals/*.toml`), offered only where its
//! preconditions hold, and only once the fixed file has been read again and shown to parse, to
//! keep the test's name and assertions, and to be rid of the mechanism it cures. Anything else
//! stays a hint in words.

mod entry;
mod port;
mod restore;
mod syntax;
mod wait;

use std::collections::HashSet;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

use anyhow::{Context, Result};

use regex::Regex;
use std::sync::OnceLock;

pub use entry::{FixEntry, FixKind, Form};

use crate::analysis::{self, ReadTests, Surroundings};
use crate::extract::{self, TestMethod};
use crate::language::Language;
use crate::signals::catalogue;
use crate::signals::{MechanismHit, Place};
use syntax::Site;

/// One replacement of a byte range of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: String,
}

/// A fix offered for one mechanism of one test.
#[derive(Debug, Clone)]
pub struct Fix {
    pub test_id: String,
    pub test_name: String,
    /// The `[[fix]]` entry's id.
    pub id: &'static str,
    pub kind: FixKind,
    /// The mechanism it cures.
    pub mechanism: &'static str,
    pub title: &'static str,
    /// Sorted by position, none overlapping.
    pub edits: Vec<Edit>,
}

impl Fix {
    /// `source` with the edits made.
    pub fn apply(&self, source: &str) -> String {
        apply(source, &self.edits)
    }
}

fn apply(source: &str, edits: &[Edit]) -> String {
    let mut fixed = String::with_capacity(source.len() + 256);
    let mut at = 0;
    for edit in edits {
        fixed.push_str(&source[at..edit.range.start]);
        fixed.push_str(&edit.text);
        at = edit.range.end;
    }
    fixed.push_str(&source[at..]);
    fixed
}

/// The fixes for the tests of a file that `warned` names, one per mechanism at most, each
/// checked by reading the fixed file again (see the module's documentation).
pub fn offer(
    language: Language,
    path: &str,
    source: &str,
    surroundings: &Surroundings,
    warned: &dyn Fn(&str) -> bool,
) -> Vec<Fix> {
    let catalogue = catalogue::catalogue(language);
    if catalogue.fixes.is_empty() {
        return Vec::new();
    }
    let read = analysis::read_tests(language, path, source, surroundings);
    if read.has_syntax_errors || read.incomplete.is_some() {
        return Vec::new();
    }
    let Some(tree) = extract::parse(language, source, None) else {
        return Vec::new();
    };
    let mut offered = Vec::new();
    for (test, signals) in read.tests.iter().zip(&read.signals) {
        if test.ignored || !warned(&test.id) {
            continue;
        }
        let site = Site::new(language, source, &tree, test, catalogue);
        for mechanism in &signals.mechanisms {
            let found = catalogue
                .fixes
                .iter()
                .filter(|entry| entry.cures.iter().any(|id| id == mechanism.id))
                .find_map(|entry| {
                    let fix = build(&site, entry, mechanism)?;
                    verify(
                        language,
                        path,
                        source,
                        surroundings,
                        &read,
                        test,
                        mechanism,
                        &fix,
                    )
                    .then_some(fix)
                });
            offered.extend(found);
        }
    }
    offered
}

/// The fix `entry` describes for `mechanism` in the test of `site`, where its preconditions
/// hold.
fn build(site: &Site<'_>, entry: &'static FixEntry, mechanism: &MechanismHit) -> Option<Fix> {
    // Only code of the test's own body is changed: a set-up or a helper serves other tests too.
    let cured = cured_part(entry.kind, mechanism)?;
    if cured.place != Place::Test || !site.test.range.contains(&cured.range.start) {
        return None;
    }
    let mut edits = match entry.kind {
        FixKind::ConditionWait => wait::condition_wait(site, entry, mechanism)?,
        FixKind::GenerousWait => wait::generous_wait(site, cured)?,
        FixKind::EphemeralPort => port::ephemeral_port(site, entry, cured)?,
        FixKind::RestoreState => restore::restore_state(site, entry, cured)?,
    };
    edits.sort_by_key(|edit| (edit.range.start, edit.range.end));
    if edits
        .windows(2)
        .any(|pair| pair[0].range.end > pair[1].range.start)
    {
        return None;
    }
    Some(Fix {
        test_id: site.test.id.clone(),
        test_name: site.test.name.clone(),
        id: &entry.id,
        kind: entry.kind,
        mechanism: mechanism.id,
        title: &entry.title,
        edits,
    })
}

/// The part a fix of `kind` changes, and whose absence afterwards shows the cure.
fn cured_part(kind: FixKind, mechanism: &MechanismHit) -> Option<&crate::signals::PartHit> {
    let role = match kind {
        FixKind::RestoreState => "write",
        _ => "check",
    };
    mechanism.parts.iter().find(|part| part.role == role)
}

/// Whether the fixed file parses, keeps every test with its name and at least as many
/// assertions in the fixed one, and no longer has the mechanism on the part the fix changed.
#[allow(clippy::too_many_arguments)]
fn verify(
    language: Language,
    path: &str,
    source: &str,
    surroundings: &Surroundings,
    before: &ReadTests,
    test: &TestMethod,
    mechanism: &MechanismHit,
    fix: &Fix,
) -> bool {
    let fixed = fix.apply(source);
    let after = analysis::read_tests(language, path, &fixed, surroundings);
    if after.has_syntax_errors || after.incomplete.is_some() {
        return false;
    }
    let ids = |read: &ReadTests| -> HashSet<(String, String)> {
        read.tests
            .iter()
            .map(|test| (test.id.clone(), test.name.clone()))
            .collect()
    };
    if ids(before) != ids(&after) {
        return false;
    }
    let Some(at) = after.tests.iter().position(|other| other.id == test.id) else {
        return false;
    };
    if assertions(language, &after.tests[at].code) < assertions(language, &test.code) {
        return false;
    }
    let Some(cured) = cured_part(fix.kind, mechanism) else {
        return false;
    };
    // No mechanism the test did not have: a wait that the catalogue does not read as one
    // would turn "asserts after a sleep" into "asserts without waiting".
    let had: HashSet<&str> = before.signals[before_at(before, test)]
        .mechanisms
        .iter()
        .map(|hit| hit.id)
        .collect();
    if after.signals[at]
        .mechanisms
        .iter()
        .any(|hit| !had.contains(hit.id))
    {
        return false;
    }
    !after.signals[at].mechanisms.iter().any(|other| {
        other.id == mechanism.id
            && other
                .parts
                .iter()
                .any(|part| part.role == cured.role && part.text == cured.text)
    })
}

/// The position of `test` among the tests read before the fix.
fn before_at(before: &ReadTests, test: &TestMethod) -> usize {
    before
        .tests
        .iter()
        .position(|other| other.id == test.id)
        .unwrap_or(0)
}

/// How many assertions a test's code holds, by the language's usual forms.
fn assertions(language: Language, code: &str) -> usize {
    static PATTERNS: OnceLock<[Regex; 3]> = OnceLock::new();
    let [java, python, rust] = PATTERNS.get_or_init(|| {
        [
            Regex::new(r"\b(assert\w*|fail|verify\w*)\s*\(").expect("a valid pattern"),
            Regex::new(r"\bassert\b|\.assert\w*\s*\(|\bfail\s*\(").expect("a valid pattern"),
            Regex::new(r"\b(debug_)?assert(_eq|_ne|_matches)?!").expect("a valid pattern"),
        ]
    });
    let pattern = match language {
        Language::Java => java,
        Language::Python => python,
        Language::Rust => rust,
    };
    pattern.find_iter(code).count()
}

/// A unified diff of a file and its fixed text, as `git diff` shows it (`a/` and `b/` paths).
pub fn unified_diff(path: &str, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

/// Replaces a file's text with `text`, provided it still holds `expected` (what the fixes were
/// worked out on), through a new file renamed over it and keeping its permissions: a crash leaves
/// the old file or the new one, never half of each. A symbolic link stays a link: its target is
/// written.
pub fn write_file(path: &Path, expected: &str, text: &str) -> Result<()> {
    let path =
        std::fs::canonicalize(path).with_context(|| format!("cannot read {}", path.display()))?;
    let now = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    if now != expected.as_bytes() {
        anyhow::bail!(
            "{} changed while its fixes were worked out; run again",
            path.display()
        );
    }
    let directory = path.parent().unwrap_or(Path::new("."));
    let permissions = std::fs::metadata(&path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .permissions();
    let mut temporary = tempfile::NamedTempFile::new_in(directory)
        .with_context(|| format!("cannot write beside {}", path.display()))?;
    temporary.write_all(text.as_bytes())?;
    temporary.as_file().sync_all()?;
    std::fs::set_permissions(temporary.path(), permissions)?;
    temporary
        .persist(&path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const AFTER_SLEEP: &str = "class T {
    @Test
    void t() throws Exception {
        List<Integer> received = new CopyOnWriteArrayList<>();
        executor.submit(() -> received.add(1));
        Thread.sleep(100);
        assertEquals(1, received.size());
    }
}
";

    fn offered(source: &str) -> Vec<Fix> {
        offer(
            Language::Java,
            "T.java",
            source,
            &Surroundings::default(),
            &|_| true,
        )
    }

    #[test]
    fn a_fix_is_offered_on_the_tests_own_code_and_its_edit_parses() {
        let fixes = offered(AFTER_SLEEP);
        assert_eq!(fixes.len(), 1);
        assert_eq!(fixes[0].kind, FixKind::ConditionWait);
        let fixed = fixes[0].apply(AFTER_SLEEP);
        assert!(!fixed.contains("Thread.sleep(100);"), "{fixed}");
        assert!(
            fixed
                .contains("            try {\n                assertEquals(1, received.size());\n"),
            "{fixed}"
        );
    }

    #[test]
    fn no_fix_for_a_test_not_warned_a_broken_file_or_a_sleep_in_a_helper() {
        assert!(
            offer(
                Language::Java,
                "T.java",
                AFTER_SLEEP,
                &Surroundings::default(),
                &|_| false
            )
            .is_empty()
        );
        let broken = AFTER_SLEEP.replace("received.size());", "received.size();");
        assert!(offered(&broken).is_empty());
        // The sleep lives in a helper other tests call too: not the test's own code.
        let helper = AFTER_SLEEP
            .replace("Thread.sleep(100);", "pause();")
            .replace(
                "\n}\n",
                "\n    void pause() throws Exception { Thread.sleep(100); }\n}\n",
            );
        assert!(offered(&helper).is_empty());
    }
}
