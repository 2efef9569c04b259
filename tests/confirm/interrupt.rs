//! Ctrl-C during a confirmation: every test process it started ends, and nothing is recorded.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::{PytestProject, flakesense};

/// The processes whose environment holds `marker`, but `except`.
pub(crate) fn processes_marked(marker: &str, except: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == except {
            continue;
        }
        let mut environ = Vec::new();
        let readable = std::fs::File::open(entry.path().join("environ"))
            .and_then(|mut file| file.read_to_end(&mut environ));
        if readable.is_ok()
            && environ
                .windows(marker.len())
                .any(|window| window == marker.as_bytes())
        {
            let command = std::fs::read_to_string(entry.path().join("cmdline"))
                .unwrap_or_default()
                .replace('\0', " ");
            found.push((pid, command));
        }
    }
    found
}

#[test]
fn ctrl_c_ends_every_test_process_and_records_nothing() {
    let Some(pytest) = PytestProject::start() else {
        return;
    };
    let (service, root) = (&pytest.service, pytest.root());
    let marker = format!("FLAKESENSE_INTERRUPT_MARK={}", std::process::id());
    let (key, value) = marker.split_once('=').unwrap();
    let child = flakesense(root, service)
        .env(key, value)
        .args([
            "confirm",
            "--runs",
            "50",
            "--conditions",
            "plain,noise",
            "--record",
            "--test",
            "test_refreshes_the_cache_in_the_background",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let running = processes_marked(&marker, child.id());
        if running
            .iter()
            .any(|(_, command)| command.contains("pytest"))
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no pytest run started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a signal to a child of this test.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("nothing was recorded"), "{stderr}");
    assert!(output.stdout.is_empty(), "no partial report");
    // No label was written.
    assert!(!root.join(".flakesense/index").exists(), "no partial label");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_marked(&marker, std::process::id());
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "left running: {left:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
