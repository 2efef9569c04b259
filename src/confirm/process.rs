//! Running one command of a run: in a process group of its own, under a condition, within a
//! timeout, and stopped at once when the user interrupts.
//!
//! Every command starts a new process group, so that a timeout or Ctrl-C ends the runner and
//! every process it started (a JVM's forks, pytest's subprocesses), and so that the terminal's
//! Ctrl-C reaches flakesense alone, which then ends the groups itself. After a command exits,
//! whatever it left running in its group is ended too.

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::condition::{Condition, Host, Noise, Offline};

/// A command to run, as a runner builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// A file the runner makes once it is up and about to run the tests: `noise` starts then,
    /// so that the runner's own start-up (pytest's collection, a JVM's) is not slowed down.
    pub ready: Option<PathBuf>,
}

impl Invocation {
    pub fn new(program: impl Into<OsString>, cwd: &Path) -> Invocation {
        Invocation {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.to_path_buf(),
            env: Vec::new(),
            ready: None,
        }
    }

    /// The file the runner makes when it is ready to run the tests.
    pub fn ready_file(mut self, path: PathBuf) -> Invocation {
        self.ready = Some(path);
        self
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Invocation {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: Into<OsString>>(mut self, args: impl IntoIterator<Item = I>) -> Invocation {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Invocation {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The command as a person would type it, for messages.
    pub fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|word| word.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Set by the SIGINT handler of the command line.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// When to stop: the user pressed Ctrl-C (command line), or the editor went away (language
/// server). Checked between and during commands.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    flag: Arc<AtomicBool>,
    sigint: bool,
}

impl Stop {
    /// A stop set only by [`Stop::request`].
    pub fn new() -> Stop {
        Stop::default()
    }

    /// A stop that Ctrl-C sets: installs a SIGINT handler that only records the signal, so that
    /// flakesense can end its children's process groups and leave without recording anything.
    pub fn on_ctrl_c() -> Stop {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_interrupt as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        }
        Stop {
            flag: Arc::default(),
            sigint: true,
        }
    }

    pub fn request(&self) {
        self.flag.store(true, Ordering::SeqCst);
    }

    pub fn is_requested(&self) -> bool {
        self.flag.load(Ordering::SeqCst) || (self.sigint && INTERRUPTED.load(Ordering::SeqCst))
    }
}

/// The run was stopped (Ctrl-C, or the editor asked): nothing of it may be recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// How a command ended.
#[derive(Debug)]
pub struct Finished {
    /// `None` when it was ended for running past the timeout.
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    /// Where its standard output and error went.
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

impl Finished {
    pub fn stdout_text(&self) -> String {
        read_lossy(&self.stdout)
    }

    /// The end of its standard error, for messages about a run that gave no result.
    pub fn stderr_tail(&self, lines: usize) -> String {
        let text = read_lossy(&self.stderr);
        let all: Vec<&str> = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

fn read_lossy(path: &Path) -> String {
    std::fs::read(path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

/// How long a runner gets to write what it has (pytest writes its report on SIGINT) before
/// its group is killed.
const GRACE: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(10);

/// Runs a command under a condition, its output written to `<logs>.stdout` and `<logs>.stderr`.
/// `Err(Stopped)` when the stop was requested: the group was ended and nothing is to be kept.
pub fn execute(
    invocation: &Invocation,
    condition: Condition,
    host: &Host,
    timeout: Duration,
    logs: &Path,
    stop: &Stop,
) -> Result<std::result::Result<Finished, Stopped>> {
    if stop.is_requested() {
        return Ok(Err(Stopped));
    }
    let stdout = logs.with_extension("stdout");
    let stderr = logs.with_extension("stderr");
    let mut command = match (condition, &host.offline) {
        (Condition::Offline, Offline::Prefix(prefix)) => {
            let mut command = Command::new(&prefix[0]);
            command
                .args(&prefix[1..])
                .arg(&invocation.program)
                .args(&invocation.args);
            command
        }
        _ => {
            let mut command = Command::new(&invocation.program);
            command.args(&invocation.args);
            command
        }
    };
    command
        .current_dir(&invocation.cwd)
        .envs(invocation.env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::null())
        .stdout(
            File::create(&stdout).with_context(|| format!("cannot create {}", stdout.display()))?,
        )
        .stderr(
            File::create(&stderr).with_context(|| format!("cannot create {}", stderr.display()))?,
        )
        .process_group(0);
    if condition == Condition::Cpu1
        && let Some(cpu) = host.cpu
    {
        pin_to_one_cpu(&mut command, cpu);
    }
    let mut noise = (condition == Condition::Noise && invocation.ready.is_none()).then(Noise::hold);
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot run `{}`", invocation.display()))?;
    let group = child.id() as libc::pid_t;
    let started = Instant::now();
    let mut ending: Option<(Instant, bool)> = None;
    let mut timed_out = false;
    loop {
        if has_exited(group) {
            break;
        }
        if condition == Condition::Noise
            && noise.is_none()
            && invocation
                .ready
                .as_ref()
                .is_some_and(|ready| ready.exists())
        {
            noise = Some(Noise::hold());
        }
        let now = Instant::now();
        if stop.is_requested() {
            signal_group(group, libc::SIGKILL);
            let _ = child.wait();
            return Ok(Err(Stopped));
        }
        match ending {
            None if now.duration_since(started) >= timeout => {
                // SIGINT first: pytest and the JVM write what they have on it.
                timed_out = true;
                signal_group(group, libc::SIGINT);
                ending = Some((now, false));
            }
            Some((since, false)) if now.duration_since(since) >= GRACE => {
                signal_group(group, libc::SIGKILL);
                ending = Some((since, true));
            }
            _ => {}
        }
        std::thread::sleep(POLL);
    }
    // The child is a zombie until reaped, so its group id cannot be reused: whatever it left
    // running in its group is ended before it is reaped.
    signal_group(group, libc::SIGKILL);
    drop(noise);
    let status = child.wait().context("cannot wait for a test run")?;
    Ok(Ok(Finished {
        status: (!timed_out).then_some(status),
        timed_out,
        stdout,
        stderr,
    }))
}

/// True once the process has exited, without reaping it (`WNOWAIT`).
fn has_exited(pid: libc::pid_t) -> bool {
    // SAFETY: `waitid` writes only into the zeroed `siginfo_t` it is given.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let found = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        found == 0 && info.si_pid() != 0
    }
}

fn signal_group(group: libc::pid_t, signal: libc::c_int) {
    // SAFETY: sending a signal has no memory effects; a group already gone gives ESRCH.
    unsafe {
        libc::kill(-group, signal);
    }
}

/// `cpu1`: the child and everything it starts run on one CPU at the lowest priority (nice 19).
#[cfg(target_os = "linux")]
fn pin_to_one_cpu(command: &mut Command, cpu: usize) {
    // SAFETY: between fork and exec the closure only makes two system calls, which are
    // async-signal-safe, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::setpriority(libc::PRIO_PROCESS, 0, 19) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_to_one_cpu(_: &mut Command, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Host {
        Host {
            offline: Offline::Unavailable("not needed".to_string()),
            cpu: None,
        }
    }

    #[test]
    fn a_run_past_its_timeout_is_ended_with_its_group() {
        let scratch = tempfile::tempdir().unwrap();
        // The shell starts a child of its own in the same group; both must end.
        let invocation = Invocation::new("sh", scratch.path())
            .arg("-c")
            .arg("sleep 30 & echo started; wait");
        let started = Instant::now();
        let finished = execute(
            &invocation,
            Condition::Plain,
            &host(),
            Duration::from_millis(200),
            &scratch.path().join("run"),
            &Stop::new(),
        )
        .unwrap()
        .unwrap();
        assert!(finished.timed_out);
        assert!(finished.status.is_none());
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(finished.stdout_text().trim(), "started");
    }

    #[test]
    fn a_stop_ends_the_run_and_keeps_nothing() {
        let scratch = tempfile::tempdir().unwrap();
        let stop = Stop::new();
        let requested = stop.clone();
        let timer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            requested.request();
        });
        let outcome = execute(
            &Invocation::new("sleep", scratch.path()).arg("30"),
            Condition::Plain,
            &host(),
            Duration::from_secs(60),
            &scratch.path().join("run"),
            &stop,
        )
        .unwrap();
        timer.join().unwrap();
        assert!(outcome.is_err());
    }

    #[test]
    fn exit_status_and_output_are_kept() {
        let scratch = tempfile::tempdir().unwrap();
        let finished = execute(
            &Invocation::new("sh", scratch.path())
                .arg("-c")
                .arg("echo out; echo err >&2; exit 3")
                .env("UNUSED", "1"),
            Condition::Noise,
            &host(),
            Duration::from_secs(60),
            &scratch.path().join("run"),
            &Stop::new(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(finished.status.and_then(|status| status.code()), Some(3));
        assert_eq!(finished.stdout_text(), "out\n");
        assert_eq!(finished.stderr_tail(5), "err");
    }
}
