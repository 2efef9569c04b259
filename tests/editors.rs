//! Emacs as a client of `flakesense serve`, through the configuration in `editors/emacs/`: its
//! checks (`editors/emacs/check/run.sh`) drive eglot alone, eglot through the multiplexer
//! rassumfrassum, and lsp-mode against this build of the server, as a user would. The Neovim
//! client is tested in `tests/lsp.rs`; the VS Code extension by `editors/vscode/e2e/`.
//!
//! Without Emacs the test says so and passes; `.ci/run` installs it with eglot, lsp-mode and rass.

mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn emacs_shows_the_warning_and_a_mark_through_eglot_rass_and_lsp_mode() {
    if !common::tool_available("emacs") {
        println!(
            "skipped: Emacs is not installed (`.ci/run` installs emacs-nox, elpa-eglot, elpa-lsp-mode and rassumfrassum)"
        );
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/emacs/check/run.sh");
    let output = Command::new("bash")
        .arg(&script)
        .env("FLAKESENSE", common::binary())
        .output()
        .expect("bash runs the Emacs checks");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The checks' own lines (ok, skipped, FAIL), so that a skipped client shows in the test's output.
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
