//! The bounds that keep the analysis of one file within its time and memory whatever its bytes.
//!
//! Extraction itself walks the tree in linear time (see `walk`), so two things remain unbounded
//! by the input's size alone: tree-sitter's error recovery, which on some inputs spends far more
//! time per byte than on valid code (a 2 MB file of random bytes parses in about 10 s, valid
//! code of that size in well under 1 s), and how deep a file nests the scopes that tests live in.

use std::time::{Duration, Instant};

/// What one extraction may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Limits {
    /// Processor time the parser may spend on one file, macro bodies parsed again included.
    ///
    /// Valid code of the largest size the front ends read (2 MB) parses in 0.3 to 0.9 s of
    /// processor time here; error recovery on hostile input takes up to ten times as long. The
    /// budget leaves room for valid files on a slower machine and keeps a 2 MB file of any
    /// content under 2 s. It counts the thread's processor time, not the wall clock, so a busy
    /// machine (a `check` on every core, other builds) does not cut a valid file short.
    pub parse_time: Duration,
    /// Scopes (classes, modules, macro bodies) and syntax errors one inside another that the
    /// walk enters before it gives the file up.
    ///
    /// Real code nests a handful deep (JUnit 5 `@Nested` classes, `mod tests { mod x {} }`): over
    /// the 9,080 source files of the benchmark's 31 repositories, no test sits in more than 4
    /// scopes. Nesting has no other bound: 40,000 nested modules make an 80,000-deep tree, and
    /// ids that repeat every enclosing name, which is what took 2.9 GB before this bound.
    pub max_nesting: usize,
    /// Tests judged in one file; the rest are left out and reported.
    ///
    /// The largest test file of the benchmark's 31 repositories holds 345 tests; a file of 2 MB
    /// can hold 100,000 one-line ones, each judged against every model.
    pub max_tests: usize,
    /// Bytes of test ids one file may produce: a class name of a megabyte repeated in every id
    /// would otherwise exhaust memory long before `max_tests`.
    pub max_id_bytes: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        parse_time: Duration::from_millis(1_500),
        max_nesting: 32,
        max_tests: 10_000,
        max_id_bytes: 16 * 1024 * 1024,
    };
}

/// The processor time spent so far in one extraction, against its budget.
#[derive(Debug)]
pub(super) struct Budget {
    limit: Duration,
    started: Clock,
}

impl Budget {
    pub fn start(limit: Duration) -> Budget {
        Budget {
            limit,
            started: Clock::now(),
        }
    }

    /// Whether the budget is spent; cheap enough to ask every hundred parser operations.
    pub fn is_spent(&self) -> bool {
        self.started.elapsed() >= self.limit
    }
}

/// The processor time of the current thread where the platform tells it, else the wall clock.
#[derive(Debug, Clone, Copy)]
enum Clock {
    #[cfg_attr(not(unix), allow(dead_code, reason = "only Unix reports thread time"))]
    Thread(Duration),
    #[cfg_attr(
        unix,
        allow(dead_code, reason = "the fallback where thread time is unknown")
    )]
    Wall(Instant),
}

impl Clock {
    fn now() -> Clock {
        match thread_time() {
            Some(time) => Clock::Thread(time),
            None => Clock::Wall(Instant::now()),
        }
    }

    fn elapsed(self) -> Duration {
        match self {
            Clock::Thread(started) => {
                thread_time().map_or(Duration::MAX, |now| now.saturating_sub(started))
            }
            Clock::Wall(started) => started.elapsed(),
        }
    }
}

#[cfg(unix)]
fn thread_time() -> Option<Duration> {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through a valid pointer to a local.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut time) };
    if status != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(time.tv_sec).ok()?,
        u32::try_from(time.tv_nsec).ok()?,
    ))
}

#[cfg(not(unix))]
fn thread_time() -> Option<Duration> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_budget_is_spent_at_once_and_a_large_one_is_not() {
        assert!(Budget::start(Duration::ZERO).is_spent());
        assert!(!Budget::start(Duration::from_secs(3_600)).is_spent());
    }

    #[test]
    fn thread_time_advances_with_work() {
        let budget = Budget::start(Duration::from_nanos(1));
        let mut state: u64 = 1;
        for _ in 0..1_000_000 {
            state = std::hint::black_box(state.wrapping_mul(6_364_136_223_846_793_005));
        }
        assert!(budget.is_spent());
    }
}
