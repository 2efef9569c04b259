//! A confirmation started from the editor: the language server runs it in the background,
//! reports progress, answers meanwhile, and shows the verdict.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::binary;
use crate::lsp_client::{ClientBehaviour, LspClient};
use crate::{PriceService, copy_fixture, have_pytest, serial, several_cpus};

/// A language server on the pytest fixture copied to `root` (its price service on `port`),
/// initialized with the client's `capabilities`, with `test_shop.py` open and judged: the server,
/// the client, the document's URI and its text.
async fn serve_shop(
    root: &std::path::Path,
    port: Option<u16>,
    capabilities: Value,
) -> (tokio::process::Child, LspClient, String, String) {
    let mut command = tokio::process::Command::new(binary());
    command
        .arg("serve")
        // The cache of signal shares of workspaces outside git goes here, not in the user's.
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
        )
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    if let Some(port) = port {
        command.env("CONFIRM_FIXTURE_PORT", port.to_string());
    }
    let mut server = command.spawn().unwrap();
    let mut client = LspClient::new(
        server.stdout.take().unwrap(),
        server.stdin.take().unwrap(),
        ClientBehaviour::default(),
    );
    let root_uri = format!("file://{}", root.display());
    client
        .initialize(json!({
            "processId": null,
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "shop"}],
            "capabilities": capabilities,
        }))
        .await;
    let uri = format!("{root_uri}/test_shop.py");
    let text = std::fs::read_to_string(root.join("test_shop.py")).unwrap();
    client.open(&uri, "python", 1, &text).await;
    client.diagnostics(&uri, None).await;
    (server, client, uri, text)
}

/// A `$/progress` message of a kind (`begin`, `report`, `end`).
fn progress_of(kind: &'static str) -> impl Fn(&Value) -> bool {
    move |message: &Value| {
        message["method"] == "$/progress" && message["params"]["value"]["kind"] == kind
    }
}

#[test]
fn the_editor_confirms_in_the_background_with_progress_and_shows_the_verdict() {
    let _serial = serial();
    if !have_pytest() {
        return;
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(editor_confirms_in_the_background());
}

async fn editor_confirms_in_the_background() {
    let service = PriceService::start();
    let project = copy_fixture("pytest");
    let root = project.path().to_path_buf();
    std::fs::write(
        root.join("flakesense.toml"),
        "[confirm]\nruns = 3\nconditions = [\"plain\", \"cpu1\"]\n",
    )
    .unwrap();
    let (mut server, mut client, uri, text) = serve_shop(
        &root,
        Some(service.port),
        json!({"window": {"workDoneProgress": true}}),
    )
    .await;
    let line = text
        .lines()
        .position(|line| line.contains("def test_prices_the_basket_on_every_cpu"))
        .unwrap();
    let response = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": line, "character": 8}, "end": {"line": line, "character": 8}}, "context": {"diagnostics": []}}),
        )
        .await;
    let actions = response["result"].as_array().unwrap();
    let confirm = actions
        .iter()
        .find(|action| {
            action["title"]
                .as_str()
                .is_some_and(|title| title.starts_with("Confirm: run this test 3 times with `"))
        })
        .unwrap_or_else(|| panic!("no confirm action in {actions:#?}"));
    // The title names what runs, and where that comes from.
    assert!(
        confirm["title"]
            .as_str()
            .is_some_and(|title| title.ends_with("-m pytest` (from flakesense's default)")),
        "{confirm}"
    );
    let asked = Instant::now();
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": confirm["command"]["command"], "arguments": confirm["command"]["arguments"]}),
        )
        .await;
    assert_eq!(started["result"]["runs"], 3, "{started}");
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "answered at once"
    );

    // While the tests run, the server answers.
    client
        .collect_until(
            "the progress's start",
            progress_of("begin"),
            Duration::from_secs(60),
        )
        .await;
    let hover = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": 8}}),
        )
        .await;
    assert!(hover.get("error").is_none(), "{hover}");
    let verdict_shown = |message: &Value| {
        message["method"] == "window/showMessage"
            && message["params"]["message"]
                .as_str()
                .is_some_and(|text| text.contains("test_prices_the_basket_on_every_cpu"))
    };
    assert!(
        !client.received.iter().any(verdict_shown),
        "the hover was answered while the runs went on"
    );
    let shown = client
        .wait_for("the verdict", verdict_shown, Duration::from_secs(180))
        .await;
    let message = shown["params"]["message"].as_str().unwrap();
    // The test splits its work by the CPU count: it fails on one CPU, and only there.
    if several_cpus() {
        assert!(
            message.contains("is flaky (concurrency): failed 3 of 3 runs under cpu1"),
            "{message}"
        );
        assert!(
            message.contains("fails when the process gets one CPU"),
            "{message}"
        );
    } else {
        assert!(message.contains("is broken, not flaky"), "{message}");
    }
    let reports = client
        .received
        .iter()
        .filter(|message| progress_of("report")(message))
        .count();
    assert!(reports >= 1, "progress was reported");
    client
        .collect_until(
            "the progress's end",
            progress_of("end"),
            Duration::from_secs(10),
        )
        .await;
    client.shutdown_and_exit().await;
    let status = tokio::time::timeout(Duration::from_secs(10), server.wait())
        .await
        .expect("the server exits")
        .unwrap();
    assert!(status.success());
}

#[test]
fn fix_and_confirm_runs_the_test_before_and_after_its_fix() {
    let _serial = serial();
    if !have_pytest() {
        return;
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(fix_and_confirm());
}

async fn fix_and_confirm() {
    let project = copy_fixture("pytest");
    let root = project.path().to_path_buf();
    std::fs::write(
        root.join("flakesense.toml"),
        "[confirm]\nruns = 3\nconditions = [\"plain\"]\n",
    )
    .unwrap();
    let (mut server, mut client, uri, text) =
        serve_shop(&root, None, json!({"workspace": {"applyEdit": true}})).await;
    let line = text
        .lines()
        .position(|line| line.contains("def test_refreshes_the_cache_in_the_background"))
        .unwrap();
    let response = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": line, "character": 8}, "end": {"line": line, "character": 8}}, "context": {"diagnostics": []}}),
        )
        .await;
    let actions = response["result"].as_array().unwrap();
    let action = actions
        .iter()
        .find(|action| {
            action["title"].as_str().is_some_and(|title| {
                title.starts_with(
                    "Fix and confirm: run the test 3 times before and after the fix with `",
                )
            })
        })
        .unwrap_or_else(|| panic!("no fix-and-confirm action in {actions:#?}"));
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": action["command"]["command"], "arguments": action["command"]["arguments"]}),
        )
        .await;
    assert_eq!(started["result"]["fix"], "wait-for-assertion", "{started}");

    let shown = client
        .wait_for(
            "both verdicts",
            |message| {
                message["method"] == "window/showMessage"
                    && message["params"]["message"]
                        .as_str()
                        .is_some_and(|text| text.contains("before the fix"))
            },
            Duration::from_secs(180),
        )
        .await;
    let message = shown["params"]["message"].as_str().unwrap();
    // Before, the sleep races the refresh (how often it loses depends on the machine); after,
    // the test waits for it.
    assert!(
        message.contains("test_refreshes_the_cache_in_the_background: before the fix failed "),
        "{message}"
    );
    assert!(
        message.ends_with("after it failed 0 of 3 under plain (no flakiness seen)"),
        "{message}"
    );
    // The editor was asked to apply the fix, and the file holds it.
    assert!(
        client
            .received
            .iter()
            .any(|message| message["method"] == "workspace/applyEdit"),
        "no workspace/applyEdit"
    );
    let saved = std::fs::read_to_string(root.join("test_shop.py")).unwrap();
    assert!(saved.contains("except AssertionError:"), "{saved}");
    assert!(!saved.contains("    time.sleep(0.1)\n    assert refreshed.is_set()"));
    client.shutdown_and_exit().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), server.wait()).await;
}
