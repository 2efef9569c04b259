//! A parsed piece of a file (the file itself, or a Rust macro body parsed on its own) and how a
//! match of the catalogue's patterns in it becomes a hit in the file: its values read against
//! the entry's conditions, its range and line taken back to the file.

use std::cell::Cell;
use std::ops::Range;

use tree_sitter::Node;

use super::Hit;
use super::names::names_of;
use super::traits::{Name, Traits, assigned_to, flags_of, key_of};
use crate::signals::catalogue::{Catalogue, Entry};
use crate::signals::placement::{
    FUNCTION_BODIES, call_name, in_skip_condition, in_text, is_fixed_local_port, is_known_local,
    is_module_global, is_own_binary, is_parameter, is_shared_container, string_or_bound,
};
use crate::signals::query::Capture;
use crate::signals::values::{self, Facts, text_of};

/// A parsed piece of a file: the file itself, or a macro body parsed on its own, whose text is
/// `prefix` bytes of wrapping (one line) followed by the file's bytes from `start_in_file`, which
/// lie on the file's row `first_row_in_file`.
pub(super) struct Part<'a> {
    pub(super) text: &'a str,
    pub(super) root: Node<'a>,
    pub(super) prefix: usize,
    pub(super) start_in_file: usize,
    pub(super) first_row_in_file: usize,
    /// For a macro body: the whole invocation in the file, with its line and text, which a match
    /// that covers the wrapping (`assert(...)` standing for `assert!(...)`) reports instead.
    pub(super) invocation: Option<(Range<usize>, u32, &'a str)>,
    /// For a macro body: the [`traits`](super::traits) flags of the invocation in the file,
    /// which hold for every hit inside it.
    pub(super) outer_flags: u8,
}

impl<'a> Part<'a> {
    /// The file's own text, walked from `root`.
    pub(super) fn whole(text: &'a str, root: Node<'a>) -> Part<'a> {
        Part {
            text,
            root,
            prefix: 0,
            start_in_file: 0,
            first_row_in_file: 0,
            invocation: None,
            outer_flags: 0,
        }
    }

    /// Where a range of this part lies in the file; `None` for the wrapping.
    pub(super) fn in_file(&self, range: Range<usize>) -> Option<Range<usize>> {
        let start = range.start.checked_sub(self.prefix)? + self.start_in_file;
        let end = range.end.checked_sub(self.prefix)? + self.start_in_file;
        Some(start..end)
    }

    /// The file's line, from 1, of a node of this part.
    pub(super) fn line(&self, node: Node<'_>) -> u32 {
        let row = node.start_position().row;
        let row = if self.prefix == 0 {
            row
        } else {
            self.first_row_in_file + row.saturating_sub(1)
        };
        u32::try_from(row + 1).unwrap_or(u32::MAX)
    }
}

/// Records the hits of the catalogue's signals in a part.
pub(super) fn matches(
    catalogue: &Catalogue,
    part: &Part<'_>,
    facts: &Facts<'_>,
    work: &Cell<u64>,
    hits: &mut Vec<Hit>,
) {
    catalogue
        .query
        .matches(part.root, part.text, work, &mut |pattern, captures| {
            add_hit(catalogue, part, facts, pattern, captures, hits);
        });
}

/// Records a match of the signals' patterns whose values meet its entry's conditions.
pub(super) fn add_hit(
    catalogue: &Catalogue,
    part: &Part<'_>,
    facts: &Facts<'_>,
    pattern: usize,
    captures: &[Capture<'_>],
    hits: &mut Vec<Hit>,
) {
    let entry_index = catalogue.pattern_entry[pattern];
    let entry = &catalogue.entries[entry_index];
    let at = captures
        .first()
        .and_then(|(_, node)| part.in_file(node.byte_range()))
        .or_else(|| part.invocation.as_ref().map(|(range, _, _)| range.clone()))
        .map_or(0, |range| range.start);
    facts.start_reading(at);
    let Some(accepted) = accepted(catalogue, entry, captures, part, facts) else {
        return;
    };
    let mut traits = traits(&accepted, part.text, facts);
    traits.flags |= part.outer_flags;
    let (hit, shown_as) = (accepted.hit, accepted.shown_as);
    let call = called_below_its_receiver(hit)
        .and_then(|name| Some((name, part.text.get(name.start_byte()..hit.end_byte())?)));
    let (start, code) = match call {
        Some((name, call)) => (name, chained_call(text_of(hit, part.text), call)),
        None => (hit, text_of(hit, part.text).to_string()),
    };
    match (
        part.in_file(start.start_byte()..hit.end_byte()),
        &part.invocation,
    ) {
        (Some(range), _) => hits.push(Hit {
            entry: entry_index,
            range,
            line: part.line(start),
            text: shown(shown_as.as_deref().unwrap_or(&code)),
            traits,
        }),
        (None, Some((range, line, text))) => hits.push(Hit {
            entry: entry_index,
            range: range.clone(),
            line: *line,
            text: shown(shown_as.as_deref().unwrap_or(text)),
            traits,
        }),
        (None, None) => {}
    }
}

/// A match whose values meet its entry's conditions.
struct Accepted<'tree> {
    /// The reported node.
    hit: Node<'tree>,
    /// What to show of it when that is not its own text.
    shown_as: Option<String>,
    /// The node captured as `@names`, whose names a mechanism links by.
    names: Option<Node<'tree>>,
    /// The node captured as `@key`: the state a write touches.
    key: Option<Node<'tree>>,
    /// The duration captured, in milliseconds.
    duration_ms: Option<f64>,
}

/// What a mechanism reads of an accepted match.
fn traits(accepted: &Accepted<'_>, text: &str, facts: &Facts<'_>) -> Traits {
    let mut names = accepted
        .names
        .map(|node| names_of(node, text, facts))
        .unwrap_or_default();
    if let Some(kept_in) = assigned_to(accepted.hit, text) {
        names.push(Name {
            text: kept_in.to_string(),
            written: true,
            plain: false,
        });
    }
    Traits {
        flags: flags_of(accepted.hit, text),
        names,
        key: accepted.key.map(|node| key_of(node, text)),
        value_ms: accepted.duration_ms,
    }
}

/// The match whose values meet its entry's conditions, if they do.
fn accepted<'tree>(
    catalogue: &Catalogue,
    entry: &Entry,
    captures: &[Capture<'tree>],
    part: &Part<'_>,
    facts: &Facts<'_>,
) -> Option<Accepted<'tree>> {
    let names = catalogue.query.capture_names();
    let text = part.text;
    let mut hit = None;
    let mut shown_as = None;
    let mut unit_override = None;
    let mut names_node = None;
    let mut key = None;
    let mut duration_ms = None;
    let mut remote = false;
    let mut elapsed_unit = None;
    for &(index, node) in captures {
        match names[index as usize].as_str() {
            "unit" => unit_override = Some(values::unit_ms(text_of(node, text))?),
            // A bound is read in the unit of the clock difference it bounds.
            "elapsed" => elapsed_unit = Some(facts.clock_difference_unit(node, text)?),
            _ => {}
        }
    }
    for &(index, node) in captures {
        match names[index as usize].as_str() {
            "hit" => hit = Some(node),
            name @ ("duration" | "duration.ms" | "duration.s") => {
                let own_unit = match name {
                    "duration.ms" => Some(1.0),
                    "duration.s" => Some(1000.0),
                    _ => entry.unit.as_deref().and_then(values::default_unit_ms),
                };
                let default_ms = unit_override.or(own_unit).unwrap_or(1.0);
                let duration = facts.duration_ms(node, text, default_ms);
                duration_ms = duration_ms.or(duration);
                if let (Some(min), Some(duration)) = (entry.min_ms, duration)
                    && duration < min
                {
                    return None;
                }
                if let Some(max) = entry.max_ms
                    && duration.is_none_or(|duration| duration > max)
                {
                    return None;
                }
            }
            "port" if !is_fixed_local_port(node, text, facts) => return None,
            "address" => {
                let value = string_or_bound(node, text, facts)?;
                let (host, _) = values::host_of(&value)?;
                if values::is_local(host) || values::is_placeholder(host) {
                    return None;
                }
                if values::string_value(node, text).is_none() {
                    // Through a name: the evidence shows the address the name holds.
                    shown_as = Some(format!("{} = {value:?}", text_of(node, text)));
                }
            }
            "target" if is_known_local(node, text, facts) => return None,
            "receiver" if facts.is_mock(node, text) => return None,
            "owner" if is_parameter(node, text) => return None,
            "hash-receiver" if !facts.is_hash_collection(node, text) => return None,
            "program" if is_own_binary(node, text, facts) => return None,
            "bound" => {
                let bound = facts.duration_ms(node, text, elapsed_unit.unwrap_or(1.0))?;
                if entry.max_ms.is_some_and(|max| bound > max) || bound <= 0.0 {
                    return None;
                }
                duration_ms = Some(bound);
            }
            "remote" => {
                facts.remote_host(node, text)?;
                remote = true;
            }
            // A receiver that holds a thread: `new Thread(...)`, a thread class of the test's
            // own (`new ReturnerThread(...)`), `Thread.ofPlatform()...`.
            "thread" if !facts.holds_thread(node, text) => return None,
            // unittest's `places=N`: values agree to half a unit of the N-th decimal (seconds).
            "places" => {
                let places = facts.number(node, text)?;
                duration_ms = Some(500.0 * 10f64.powf(-places));
            }
            "shared" if !is_shared_container(node, text) => return None,
            // A module, a name imported at the top of the module, or a class defined there.
            "global" if !is_module_global(node, text) => return None,
            "names" => names_node = Some(node),
            "key" => key = Some(node),
            _ => {}
        }
    }
    let hit = hit?;
    // A request through an explicit proxy goes to the proxy, not to the host it names.
    if remote && text_of(hit, text).to_ascii_lowercase().contains("prox") {
        return None;
    }
    if entry.not_in_text && in_text(hit, text) {
        return None;
    }
    if entry.not_in_skip_condition && in_skip_condition(hit, text) {
        return None;
    }
    let mut ancestor = hit.parent();
    let mut inside = entry.inside.is_empty();
    while let Some(node) = ancestor {
        // A lambda's body runs when it is called, not as the surrounding call's argument:
        // `assertThrows(E.class, () -> new Socket("10.1.1.1", 80))` connects.
        if FUNCTION_BODIES.contains(&node.kind()) {
            break;
        }
        if entry.not_inside.iter().any(|kind| kind == node.kind()) {
            return None;
        }
        inside |= entry.inside.iter().any(|kind| kind == node.kind());
        if let Some(regex) = &entry.not_inside_call_regex
            && call_name(node, text).is_some_and(|name| regex.is_match(name))
        {
            return None;
        }
        ancestor = node.parent();
    }
    inside.then_some(Accepted {
        hit,
        shown_as,
        names: names_node,
        key,
        duration_ms,
    })
}

/// The name of a matched method call whose receiver starts on an earlier line, as in a chain
/// (`builder\n    .setMaxBytes(2, SECONDS)`): the evidence shows and points at that call rather
/// than at the chain's first word.
fn called_below_its_receiver(hit: Node<'_>) -> Option<Node<'_>> {
    let name = match hit.kind() {
        "method_invocation" => hit.child_by_field_name("name"),
        "call" | "call_expression" => {
            let callee = hit.child_by_field_name("function")?;
            callee
                .child_by_field_name("attribute")
                .or_else(|| callee.child_by_field_name("field"))
        }
        _ => None,
    }?;
    (name.start_position().row > hit.start_position().row).then_some(name)
}

/// How many characters of matched code the evidence shows.
const SHOWN_CHARS: usize = 60;
/// How many characters of a chain's first line name it before its last call, at most and at
/// least (a long call leaves the head less room).
const CHAIN_HEAD_CHARS: std::ops::RangeInclusive<usize> = 12..=30;

/// A call at the end of a chain as a user reads it: the chain's first line, then the call,
/// `TestServer::configure()….spawn()`.
fn chained_call(chain: &str, call: &str) -> String {
    let call_chars = call.lines().next().unwrap_or("").trim().chars().count();
    let room = SHOWN_CHARS.saturating_sub(call_chars + 2);
    let head: String = chain
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .chars()
        .take(room.clamp(*CHAIN_HEAD_CHARS.start(), *CHAIN_HEAD_CHARS.end()))
        .collect();
    format!("{head}….{call}")
}

/// The matched code as a user reads it: the first line, at most `SHOWN_CHARS` characters.
fn shown(code: &str) -> String {
    let line = code.lines().next().unwrap_or("").trim();
    let mut shown: String = line.chars().take(SHOWN_CHARS).collect();
    if shown.len() < line.len() || code.trim().lines().nth(1).is_some() {
        shown.push_str("...");
    }
    shown
}
