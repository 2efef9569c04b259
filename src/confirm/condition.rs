//! The conditions a test is run in to expose its flakiness, after the studies the design notes
//! cite: CPU and memory noise (Shaker), one CPU at low priority, no network, twice in one process.
//!
//! What the host can offer is found out once ([`Host::probe`]): a network namespace may be
//! refused by the kernel, and a condition the host cannot offer is reported as unavailable with
//! the reason, never skipped silently.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use serde::Serialize;

use crate::category::Category;

/// A condition of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Condition {
    /// The test alone, as the runner runs it.
    Plain,
    /// Busy threads on every core and memory churn, started by flakesense around the run.
    Noise,
    /// The test process pinned to one CPU at the lowest priority.
    Cpu1,
    /// The run in a new network namespace without a usable interface.
    Offline,
    /// The test run two times in one process.
    Twice,
}

impl Condition {
    pub const ALL: [Condition; 5] = [
        Condition::Plain,
        Condition::Noise,
        Condition::Cpu1,
        Condition::Offline,
        Condition::Twice,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Condition::Plain => "plain",
            Condition::Noise => "noise",
            Condition::Cpu1 => "cpu1",
            Condition::Offline => "offline",
            Condition::Twice => "twice",
        }
    }

    pub fn from_name(name: &str) -> Option<Condition> {
        Condition::ALL
            .into_iter()
            .find(|condition| condition.name() == name.trim())
    }

    /// Parses a comma-separated list (`plain,noise`), keeping the canonical order.
    pub fn parse_list(list: &str) -> Result<Vec<Condition>, String> {
        let mut conditions = Vec::new();
        for name in list.split(',').filter(|name| !name.trim().is_empty()) {
            let condition = Condition::from_name(name).ok_or_else(|| {
                format!(
                    "unknown condition `{name}` (expected plain, noise, cpu1, offline or twice)"
                )
            })?;
            conditions.push(condition);
        }
        if conditions.is_empty() {
            return Err("name at least one condition".to_string());
        }
        conditions.sort();
        conditions.dedup();
        Ok(conditions)
    }

    /// The categories a failure under this condition points to, most likely first: what the
    /// condition changes is what the test depends on.
    pub fn points_to(self) -> &'static [Category] {
        match self {
            Condition::Plain => &[],
            // A test slowed down by load waits too little or races with its threads.
            Condition::Noise => &[
                Category::AsyncWait,
                Category::Concurrency,
                Category::Timeout,
                Category::Time,
            ],
            Condition::Cpu1 => &[
                Category::Concurrency,
                Category::AsyncWait,
                Category::Timeout,
                Category::Time,
            ],
            Condition::Offline => &[Category::Network],
            // Passing once and failing when run again in the same process: state left behind.
            Condition::Twice => &[Category::OrderDependency],
        }
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.name())
    }
}

/// Busy threads per core while `noise` runs. Shaker found that noise exposes timing flakiness in
/// fewer runs the more the test must share the processor; with eight competitors per core a
/// thread of the test gets about a ninth of a core.
pub const BUSY_THREADS_PER_CORE: usize = 8;

/// What each memory churn thread allocates, touches and frees, over and over.
const CHURN_BYTES: usize = 32 * 1024 * 1024;

/// Noise around a run: busy threads on every core and threads that allocate, touch and free
/// memory, evicting the test's caches and taking page faults. Stops when dropped.
pub struct Noise {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Noise {
    fn start() -> Noise {
        let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for _ in 0..cores * BUSY_THREADS_PER_CORE {
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || {
                let mut value = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..50_000 {
                        value = std::hint::black_box(
                            value.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                }
            }));
        }
        for _ in 0..cores {
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let mut block = vec![0u8; CHURN_BYTES];
                    for page in block.iter_mut().step_by(4096) {
                        *page = 1;
                    }
                    std::hint::black_box(&block);
                }
            }));
        }
        Noise { stop, threads }
    }
}

impl Drop for Noise {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// The noise of this process and how many hold it.
static SHARED_NOISE: Mutex<(usize, Option<Noise>)> = Mutex::new((0, None));

/// A hold on the process's one noise: the first hold starts it, the last one to go stops it. A
/// batch of runs holds it across its runs, so that it is not stopped and started again around
/// each (which costs the joining of every noise thread); a run holds it too.
pub struct NoiseHold(());

impl Noise {
    pub fn hold() -> NoiseHold {
        let mut shared = SHARED_NOISE.lock().unwrap_or_else(PoisonError::into_inner);
        shared.0 += 1;
        if shared.1.is_none() {
            shared.1 = Some(Noise::start());
        }
        NoiseHold(())
    }
}

impl Drop for NoiseHold {
    fn drop(&mut self) {
        let stopped = {
            let mut shared = SHARED_NOISE.lock().unwrap_or_else(PoisonError::into_inner);
            shared.0 = shared.0.saturating_sub(1);
            if shared.0 == 0 { shared.1.take() } else { None }
        };
        // Joined outside the lock.
        drop(stopped);
    }
}

/// How the host runs a command without network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offline {
    /// The words put before the command: `unshare -n`, or `unshare -r -n` where only an
    /// unprivileged user namespace allows a network namespace.
    Prefix(Vec<String>),
    /// Why not: the kernel refused, or `unshare` is missing.
    Unavailable(String),
}

/// What the host offers the conditions, found once per confirmation.
#[derive(Debug, Clone)]
pub struct Host {
    pub offline: Offline,
    /// The CPU `cpu1` pins a run to; `None` where processor affinity cannot be set.
    pub cpu: Option<usize>,
}

impl Host {
    pub fn probe() -> Host {
        Host {
            offline: probe_offline(),
            cpu: last_allowed_cpu(),
        }
    }

    /// What the host offers the conditions asked for: a network namespace is tried only when
    /// `offline` is among them (it starts processes), processor affinity always (it is a system
    /// call).
    pub fn probe_for(conditions: &[Condition]) -> Host {
        Host {
            offline: if conditions.contains(&Condition::Offline) {
                probe_offline()
            } else {
                Offline::Unavailable("not asked for".to_string())
            },
            cpu: last_allowed_cpu(),
        }
    }

    /// A host for commands run plainly (building the tests): it offers no condition.
    pub fn plain() -> Host {
        Host {
            offline: Offline::Unavailable("not probed".to_string()),
            cpu: None,
        }
    }

    /// Why the host cannot offer a condition, if it cannot.
    pub fn unavailable(&self, condition: Condition) -> Option<String> {
        match condition {
            Condition::Offline => match &self.offline {
                Offline::Prefix(_) => None,
                Offline::Unavailable(reason) => Some(reason.clone()),
            },
            Condition::Cpu1 if self.cpu.is_none() => {
                Some("processor affinity cannot be set on this system".to_string())
            }
            _ => None,
        }
    }
}

/// Tries `unshare -n`, then `unshare -r -n`, on `true`.
fn probe_offline() -> Offline {
    let mut refusals = Vec::new();
    for prefix in [&["unshare", "-n"][..], &["unshare", "-r", "-n"][..]] {
        let output = Command::new(prefix[0])
            .args(&prefix[1..])
            .arg("true")
            .stdin(Stdio::null())
            .output();
        match output {
            Ok(output) if output.status.success() => {
                return Offline::Prefix(prefix.iter().map(|word| word.to_string()).collect());
            }
            Ok(output) => {
                let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
                refusals.push(format!(
                    "`{} true` failed ({})",
                    prefix.join(" "),
                    if said.is_empty() {
                        output.status.to_string()
                    } else {
                        said
                    }
                ));
            }
            Err(error) => {
                return Offline::Unavailable(format!(
                    "cannot run `unshare` to make a network namespace: {error}"
                ));
            }
        }
    }
    Offline::Unavailable(format!(
        "the kernel refused a network namespace: {}",
        refusals.join("; ")
    ))
}

#[cfg(target_os = "linux")]
fn last_allowed_cpu() -> Option<usize> {
    // SAFETY: `cpu_set_t` is plain data, and the kernel writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        (0..libc::CPU_SETSIZE as usize)
            .rev()
            .find(|&cpu| libc::CPU_ISSET(cpu, &set))
    }
}

#[cfg(not(target_os = "linux"))]
fn last_allowed_cpu() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condition_lists_parse_in_canonical_order() {
        assert_eq!(
            Condition::parse_list("twice, plain,noise,plain"),
            Ok(vec![Condition::Plain, Condition::Noise, Condition::Twice])
        );
        assert!(
            Condition::parse_list("plain,stress")
                .unwrap_err()
                .contains("stress")
        );
        assert!(Condition::parse_list(" , ").is_err());
    }

    #[test]
    fn noise_is_shared_by_its_holders_and_stops_with_the_last() {
        let running = || {
            SHARED_NOISE
                .lock()
                .unwrap()
                .1
                .as_ref()
                .is_some_and(|noise| !noise.threads.is_empty())
        };
        let batch = Noise::hold();
        let run = Noise::hold();
        assert!(running());
        drop(run);
        assert!(running(), "the batch still holds it");
        drop(batch);
        assert!(!running());
    }
}
