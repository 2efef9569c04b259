//! The bounds that keep the analysis of one file within its time and memory whatever its bytes.
//!
//! Extraction itself walks the tree in linear time (see `walk`), so three things remain unbounded
//! by the input's size alone: tree-sitter's error recovery, which on some inputs spends far more
//! time per byte than on valid code (a 2 MB file of random bytes parses in about 10 s, valid
//! code of that size in well under 1 s); the size of the tree, which for long flat lists or deep
//! brackets is several times that of code (a 2 MB `vec![1, 2, ...]` makes a tree of 608 MB, a
//! 2 MB Rust file of 188,000 functions one of 104 MB); and how deep a file nests the scopes that
//! tests live in.

use std::cell::Cell;
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
    /// Bytes the parser may allocate for one file, where [`count_parser_memory`] counts them.
    ///
    /// Twice the largest tree of valid code of 2 MB measured (104 MB); flat literals and deep
    /// brackets of that size take 256 to 608 MB. With the source, the models and the judging,
    /// a process analysing a 2 MB file stays under 300 MB.
    pub parse_memory: usize,
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
        parse_memory: 200 * 1024 * 1024,
        max_nesting: 32,
        max_tests: 10_000,
        max_id_bytes: 16 * 1024 * 1024,
    };
}

/// The processor time and parser memory spent so far in one extraction, against its budget.
#[derive(Debug)]
pub(super) struct Budget {
    time: Duration,
    memory: usize,
    started: Clock,
    memory_at_start: isize,
}

/// What ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Spent {
    Time,
    Memory,
}

impl Budget {
    pub fn start(limits: &Limits) -> Budget {
        Budget {
            time: limits.parse_time,
            memory: limits.parse_memory,
            started: Clock::now(),
            memory_at_start: parser_memory(),
        }
    }

    /// The processor time it allows.
    pub fn time(&self) -> Duration {
        self.time
    }

    /// The parser memory it allows.
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// What is spent, if anything; cheap enough to ask every hundred parser operations.
    pub fn spent(&self) -> Option<Spent> {
        let grown = parser_memory().saturating_sub(self.memory_at_start);
        if usize::try_from(grown).is_ok_and(|grown| grown > self.memory) {
            Some(Spent::Memory)
        } else if self.started.elapsed() >= self.time {
            Some(Spent::Time)
        } else {
            None
        }
    }
}

thread_local! {
    /// Bytes tree-sitter allocated on this thread less those it freed here: a tree freed on
    /// another thread stays counted, so only differences over one parse mean anything.
    static PARSER_MEMORY: Cell<isize> = const { Cell::new(0) };
}

fn parser_memory() -> isize {
    PARSER_MEMORY.try_with(Cell::get).unwrap_or(0)
}

/// Makes tree-sitter allocate through functions that count, per thread, the memory it holds, so
/// that a parse whose tree grows past [`Limits::parse_memory`] is stopped. Without it only the
/// time bound applies. It counts on Linux, where `malloc_usable_size` tells a block's size, and
/// does nothing elsewhere.
///
/// # Safety
///
/// Call it once, at the start of the process, before any other tree-sitter call and before any
/// thread that could make one is started: tree-sitter keeps its allocator in plain globals.
pub unsafe fn count_parser_memory() {
    #[cfg(target_os = "linux")]
    // SAFETY: the caller guarantees no other tree-sitter call runs or has run; the functions
    // are libc's allocator with counting, one family, as `set_allocator` requires.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: counting::malloc,
            calloc: counting::calloc,
            realloc: counting::realloc,
            free: counting::free,
        }));
    }
}

/// libc's allocator, counting in [`PARSER_MEMORY`] the usable size of every block.
#[cfg(target_os = "linux")]
mod counting {
    use std::ffi::c_void;

    use super::PARSER_MEMORY;

    fn add(bytes: isize) {
        // After the thread's locals are gone (a tree dropped during thread exit), nothing counts.
        let _ = PARSER_MEMORY.try_with(|memory| memory.set(memory.get().saturating_add(bytes)));
    }

    /// The usable size of a live block, or 0 for null.
    fn size(block: *mut c_void) -> isize {
        if block.is_null() {
            return 0;
        }
        // SAFETY: `block` is a live block of libc's allocator, as every block tree-sitter holds
        // is: tree-sitter's default allocator is libc's too.
        let size = unsafe { libc::malloc_usable_size(block) };
        isize::try_from(size).unwrap_or(isize::MAX)
    }

    pub unsafe extern "C" fn malloc(bytes: usize) -> *mut c_void {
        // SAFETY: plain libc allocation.
        let block = unsafe { libc::malloc(bytes) };
        add(size(block));
        block
    }

    pub unsafe extern "C" fn calloc(count: usize, bytes: usize) -> *mut c_void {
        // SAFETY: plain libc allocation.
        let block = unsafe { libc::calloc(count, bytes) };
        add(size(block));
        block
    }

    pub unsafe extern "C" fn realloc(block: *mut c_void, bytes: usize) -> *mut c_void {
        let before = size(block);
        // SAFETY: `block` is null or a live block of libc's allocator, as tree-sitter passes.
        let moved = unsafe { libc::realloc(block, bytes) };
        if !moved.is_null() || bytes == 0 {
            add(size(moved) - before);
        }
        moved
    }

    pub unsafe extern "C" fn free(block: *mut c_void) {
        add(-size(block));
        // SAFETY: `block` is null or a live block of libc's allocator, as tree-sitter passes.
        unsafe { libc::free(block) }
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

    fn limits(parse_time: Duration, parse_memory: usize) -> Limits {
        Limits {
            parse_time,
            parse_memory,
            ..Limits::DEFAULT
        }
    }

    #[test]
    fn a_zero_budget_is_spent_at_once_and_a_large_one_is_not() {
        let hour = Duration::from_secs(3_600);
        assert_eq!(
            Budget::start(&limits(Duration::ZERO, usize::MAX)).spent(),
            Some(Spent::Time)
        );
        assert_eq!(Budget::start(&limits(hour, usize::MAX)).spent(), None);
    }

    #[test]
    fn thread_time_advances_with_work() {
        let budget = Budget::start(&limits(Duration::from_nanos(1), usize::MAX));
        let mut state: u64 = 1;
        for _ in 0..1_000_000 {
            state = std::hint::black_box(state.wrapping_mul(6_364_136_223_846_793_005));
        }
        assert_eq!(budget.spent(), Some(Spent::Time));
    }

    #[test]
    fn memory_counts_only_what_grew_since_the_start() {
        let budget = Budget::start(&limits(Duration::from_secs(3_600), 1_000));
        PARSER_MEMORY.with(|memory| memory.set(memory.get() + 1_000));
        assert_eq!(budget.spent(), None);
        PARSER_MEMORY.with(|memory| memory.set(memory.get() + 1));
        assert_eq!(budget.spent(), Some(Spent::Memory));
        PARSER_MEMORY.with(|memory| memory.set(memory.get() - 1_001));
        assert_eq!(budget.spent(), None);
    }
}
