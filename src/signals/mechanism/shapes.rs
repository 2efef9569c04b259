//! The shapes a mechanism's parts take, each a search over the ordered parts of one test: one
//! part that is the mechanism, a start and a check (with a fixed wait) with nothing waiting for
//! the work between, a write never restored, a race on plain state.

use std::ops::Range;

use super::super::scan::traits::{AFTER_YIELD, CLEANUP, DEFERRED, IN_LOOP};
use super::Roles;
use super::entry::Link;
use super::events::{Event, Phase};

/// The chosen parts of a mechanism: (role, event position).
pub(super) type Parts = Vec<(&'static str, usize)>;

/// One part that is the mechanism. A wait must be one the test runs itself for its outcome
/// (`waits`): a wait written in a callback or a thread's body (`latch.await(50, MILLISECONDS)`
/// in a handler) is not the test waiting, nor is one in clean-up (a `finally` block, tear-down)
/// that closes what the test used; a fixed port bound in a thread is still bound.
pub(super) fn single(
    events: &[Event<'_>],
    roles: &Roles,
    slack_below_ms: Option<f64>,
    waits: bool,
) -> Option<Parts> {
    let at = events.iter().enumerate().position(|(at, event)| {
        roles.check.contains(&event.entry)
            && !(waits
                && (event.has(DEFERRED)
                    || event.has(CLEANUP)
                    || event.cleanup
                    || event.phase == Phase::After))
            && slack_below_ms.is_none_or(|most| slack(events, roles, at) < most)
    })?;
    Some(vec![("check", at)])
}

/// What a bound on time leaves the machine: the bound, less the longest wait shorter than it in
/// what the test runs (a wait longer than the bound cannot have been waited out when the bound
/// holds). Infinite for a check without a bound.
fn slack(events: &[Event<'_>], roles: &Roles, at: usize) -> f64 {
    let check = &events[at];
    let Some(bound) = check.hit.traits.value_ms else {
        return f64::INFINITY;
    };
    let waited = events
        .iter()
        .filter(|event| {
            roles.wait.contains(&event.entry)
                && !(event.region == check.region && contains(check.range(), event.range()))
        })
        .filter_map(|event| event.hit.traits.value_ms)
        .filter(|&wait| wait < bound)
        .fold(0.0, f64::max);
    bound - waited
}

pub(super) fn sequence(events: &[Event<'_>], roles: &Roles, link: Link) -> Option<Parts> {
    for (check_at, check) in events.iter().enumerate() {
        if !roles.check.contains(&check.entry) || check.has(DEFERRED) || check.phase != Phase::Test
        {
            continue;
        }
        // An assertion on a wait (`assertTrue(latch.await(1, SECONDS))`) waits for the work.
        let waits_itself = events.iter().any(|event| {
            roles.cures.contains(&event.entry)
                && event.region == check.region
                && contains(check.range(), event.range())
        });
        if waits_itself {
            continue;
        }
        // The nearest start before the check that the check reads.
        for start_at in (0..check_at).rev() {
            let start = &events[start_at];
            if !roles.start.contains(&start.entry)
                || start.range() == check.range()
                || !linked(start, check, link)
            {
                continue;
            }
            // An assertion in a loop that also sleeps or waits polls the condition.
            let polled = check.has(IN_LOOP)
                && events[start_at + 1..].iter().any(|event| {
                    event.region == check.region
                        && event.has(IN_LOOP)
                        && !event.has(DEFERRED)
                        && (roles.cures.contains(&event.entry) || roles.wait.contains(&event.entry))
                });
            if polled {
                break;
            }
            let between = &events[start_at + 1..check_at];
            // A wait chained on the start (`loop.schedule(task).sync()`) waits for it too.
            let chained = events.iter().any(|event| {
                roles.cures.contains(&event.entry)
                    && event.region == start.region
                    && event.range() != start.range()
                    && contains(event.range(), start.range())
            });
            let waits_on_work = chained
                || between.iter().any(|event| {
                    !event.has(DEFERRED)
                        && (roles.cures.contains(&event.entry)
                            || (roles.wait.contains(&event.entry) && event.has(IN_LOOP)))
                });
            if waits_on_work {
                // A wait for the work lies between: an earlier start is waited for too.
                break;
            }
            if roles.wait.is_empty() {
                return Some(vec![("start", start_at), ("check", check_at)]);
            }
            let wait = between.iter().rposition(|event| {
                roles.wait.contains(&event.entry) && !event.has(DEFERRED) && !event.has(IN_LOOP)
            });
            if let Some(wait) = wait {
                let wait_at = start_at + 1 + wait;
                return Some(vec![
                    ("start", start_at),
                    ("wait", wait_at),
                    ("check", check_at),
                ]);
            }
        }
    }
    None
}

pub(super) fn unrestored(events: &[Event<'_>], roles: &Roles) -> Option<Parts> {
    let restoring =
        |event: &Event<'_>| event.phase == Phase::After || event.cleanup || event.has(AFTER_YIELD);
    for (write_at, write) in events.iter().enumerate() {
        // A write in set-up, a field or a fixture is made afresh before every test that runs
        // it: it cannot change this test's outcome, only later tests'. The test's own writes
        // (and its helpers') are what another test can see.
        // Nor is what the code under test keeps (a cache it fills, a registry it writes): it is
        // the code's own design, there whichever test ran first, not state the test forgot.
        if !roles.write.contains(&write.entry)
            || restoring(write)
            || write.phase != Phase::Test
            || write.under_test
        {
            continue;
        }
        let Some(key) = &write.hit.traits.key else {
            continue;
        };
        // A restore without a key (`os.environ.clear()`, `os.environ.update(saved)` in clean-up)
        // restores every key; the test's own write without one puts back none.
        let same_key = |other: &Event<'_>| other.hit.traits.key.as_ref().is_none_or(|k| k == key);
        let writes_key = |other: &Event<'_>| {
            roles.write.contains(&other.entry) && other.hit.traits.key.as_ref() == Some(key)
        };
        // A set-up that resets the key (`System.clearProperty("key")` in `@BeforeEach`) hands
        // every test of the class the same start: the class owns the key.
        // A test that wrote the key before puts it back with this write (`Flags.enabled =
        // true; ...; Flags.enabled = false;`): it leaks only when the test has already failed.
        let reset = events[..write_at].iter().any(|earlier| {
            (earlier.phase == Phase::Before
                && roles.restore.contains(&earlier.entry)
                && same_key(earlier))
                || (earlier.phase == Phase::Test && writes_key(earlier))
        });
        // And the first write is put back by the later one.
        let restored = reset
            || events[write_at + 1..].iter().any(|later| {
                ((roles.restore.contains(&later.entry)
                    || (roles.write.contains(&later.entry) && restoring(later)))
                    && same_key(later))
                    || (later.phase == Phase::Test && writes_key(later))
            });
        if !restored {
            return Some(vec![("write", write_at)]);
        }
    }
    None
}

pub(super) fn race(events: &[Event<'_>], roles: &Roles) -> Option<Parts> {
    for (check_at, check) in events.iter().enumerate() {
        if !roles.check.contains(&check.entry) || check.has(DEFERRED) || check.phase != Phase::Test
        {
            continue;
        }
        for (start_at, start) in events[..check_at].iter().enumerate() {
            if !roles.start.contains(&start.entry) {
                continue;
            }
            let shared = start
                .hit
                .traits
                .names
                .iter()
                .filter(|name| name.written && name.plain && mentions(check, &name.text));
            let repeated = start.has(IN_LOOP)
                || events[..check_at]
                    .iter()
                    .enumerate()
                    .any(|(other_at, other)| {
                        other_at != start_at
                            && roles.start.contains(&other.entry)
                            && other.hit.traits.names.iter().any(|name| {
                                name.written && start.hit.traits.names.iter().any(|own| own == name)
                            })
                    });
            if repeated && shared.count() > 0 {
                return Some(vec![("start", start_at), ("check", check_at)]);
            }
        }
    }
    None
}

/// Whether the check reads what the start does, as the link asks.
fn linked(start: &Event<'_>, check: &Event<'_>, link: Link) -> bool {
    let names = &start.hit.traits.names;
    match link {
        Link::None => true,
        // Work a method started on an object is read through that object (`indexer.start()`
        // starts it, `indexer.isDone()` reads it), whatever the method's own names are.
        Link::Names => {
            names.iter().any(|name| mentions(check, &name.text))
                || start
                    .receiver
                    .is_some_and(|receiver| mentions(check, receiver))
        }
        Link::Written => names
            .iter()
            .any(|name| name.written && mentions(check, &name.text)),
        Link::Flow => {
            (start.region == check.region && contains(check.range(), start.range()))
                || names
                    .iter()
                    .any(|name| name.written && mentions(check, &name.text))
        }
    }
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

fn mentions(event: &Event<'_>, text: &str) -> bool {
    event.hit.traits.names.iter().any(|name| name.text == text)
}
