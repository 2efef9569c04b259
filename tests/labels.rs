//! Labels nothing loses: real `flakesense serve` processes marking tests of one workspace at the
//! same time, with and without `flakesense train --repo --update` rewriting the index meanwhile;
//! afterwards every label is in the index, and a restarted server and `check` agree on it.

mod common;
mod lsp_client;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Child;

use flakesense::index::{Index, Label, Origin};
use lsp_client::LspClient;

const TESTS_FILE: &str = "src/test/java/demo/ManyTest.java";
const MARKS_PER_SERVER: usize = 20;

/// A Java file of `count` tests, each different from the others.
fn many_tests(count: usize) -> String {
    let mut text = String::from("package demo;\n\nimport org.junit.Test;\n\nclass ManyTest {\n");
    for n in 0..count {
        text.push_str(&format!(
            "    @Test\n    public void case{n}() {{\n        Widget widget{n} = new Widget(\"w{n}\");\n        assertEquals({n}, widget{n}.size());\n    }}\n\n"
        ));
    }
    text.push_str("}\n");
    text
}

fn test_id(n: usize) -> String {
    format!("demo.ManyTest#case{n}")
}

/// A workspace with the many tests, the tiny model as its only model (in `flakesense.toml`, so
/// that the server and `check` judge alike) and a second file `train --repo` can name.
fn workspace() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("a temporary directory");
    let write = |relative: &str, text: &str| {
        let path = root.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(TESTS_FILE, &many_tests(2 * MARKS_PER_SERVER));
    write(
        "src/test/java/demo/ClockTest.java",
        "package demo;\n\nclass ClockTest {\n    @Test\n    public void ticks() throws Exception {\n        Thread.sleep(100);\n        assertTrue(clock.ticked());\n    }\n}\n",
    );
    write("known-flaky.txt", "demo.ClockTest#ticks\n");
    write(
        "flakesense.toml",
        &format!(
            "models = [{:?}]\n",
            common::tiny_model().display().to_string()
        ),
    );
    root
}

fn uri(root: &Path) -> String {
    format!("file://{}", root.join(TESTS_FILE).display())
}

/// A real server process on the workspace, initialised, with the test file open and judged.
async fn serve(root: &Path) -> (LspClient, Child) {
    let (mut client, child) = lsp_client::spawn_server(common::binary(), root);
    let root_uri = format!("file://{}", root.display());
    client
        .initialize(json!({
            "processId": null,
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "demo"}],
            "capabilities": {},
            "initializationOptions": {"defaultModels": false, "debounceMs": 10},
        }))
        .await;
    client
        .collect_until(
            "the log line of the workspace's tests",
            lsp_client::read_the_workspace,
            Duration::from_secs(60),
        )
        .await;
    let text = std::fs::read_to_string(root.join(TESTS_FILE)).unwrap();
    client.open(&uri(root), "java", 1, &text).await;
    client.diagnostics(&uri(root), Some(1)).await;
    (client, child)
}

async fn mark(client: &mut LspClient, root: &Path, n: usize) {
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.markFlaky", "arguments": [uri(root), test_id(n), "concurrency"]}),
        )
        .await;
    assert_eq!(response["result"]["flaky"], true, "{response}");
}

/// Two servers mark 20 tests each, one request of each at the same time, alternating.
async fn two_servers_mark_forty_tests(root: &Path) {
    let ((mut first, _first), (mut second, _second)) = tokio::join!(serve(root), serve(root));
    for round in 0..MARKS_PER_SERVER {
        tokio::join!(
            mark(&mut first, root, 2 * round),
            mark(&mut second, root, 2 * round + 1)
        );
    }
    // Each running server reads the index the other wrote: the first warns on all 40 tests.
    let text = std::fs::read_to_string(root.join(TESTS_FILE)).unwrap();
    first
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(root), "version": 2}, "contentChanges": [{"text": text}]}),
        )
        .await;
    let published = first.diagnostics(&uri(root), Some(2)).await;
    assert_eq!(
        warned(&published).len(),
        2 * MARKS_PER_SERVER,
        "the first server sees the second's marks"
    );
    first.shutdown_and_exit().await;
    second.shutdown_and_exit().await;
}

/// The ids of the tests a publication warns on.
fn warned(published: &Value) -> BTreeSet<String> {
    published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|diagnostic| diagnostic["severity"] == 2)
        .map(|diagnostic| diagnostic["data"]["testId"].as_str().unwrap().to_string())
        .collect()
}

fn assert_all_marks_kept(root: &Path) {
    let index = Index::load(&root.join(".flakesense/index")).expect("the index loads");
    for n in 0..2 * MARKS_PER_SERVER {
        let position = index
            .position(&test_id(n))
            .unwrap_or_else(|| panic!("the mark of {} was lost", test_id(n)));
        let entry = index.entry(position);
        assert_eq!(entry.label(), Label::Flaky, "{}", test_id(n));
        assert_eq!(entry.origin(), Origin::Manual, "{}", test_id(n));
    }
}

/// The tests a fresh server warns on, and those `check` flags: they must be the same.
async fn assert_restarted_server_and_check_agree(root: &Path) {
    let (mut client, _child) = serve(root).await;
    // The file was judged once the workspace was read; judge it again to be sure it saw the index.
    let text = std::fs::read_to_string(root.join(TESTS_FILE)).unwrap();
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(root), "version": 2}, "contentChanges": [{"text": text}]}),
        )
        .await;
    let published = client.diagnostics(&uri(root), Some(2)).await;
    let warned = warned(&published);
    client.shutdown_and_exit().await;

    let output = common::command("flakesense", root)
        .args([
            "check",
            "--no-default-models",
            "--format",
            "json",
            TESTS_FILE,
        ])
        .output()
        .expect("check runs");
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let flagged: BTreeSet<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["id"].as_str().unwrap().to_string())
        .collect();
    let marked: BTreeSet<String> = (0..2 * MARKS_PER_SERVER).map(test_id).collect();
    assert_eq!(flagged, marked, "check flags each marked test");
    assert_eq!(warned, flagged, "the restarted server and check agree");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_marking_at_once_lose_no_label() {
    let root = workspace();
    two_servers_mark_forty_tests(root.path()).await;
    assert_all_marks_kept(root.path());
    assert_restarted_server_and_check_agree(root.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn marks_survive_train_update_running_meanwhile() {
    let root = workspace();
    let training = {
        let root = root.path().to_path_buf();
        std::thread::spawn(move || {
            let mut runs = 0;
            // Until the marks are done (the file below appears), and at least a few times.
            while runs < 3 || !root.join("marks-done").exists() {
                let output = common::command("flakesense", &root)
                    .args(["train", "--repo", ".", "--update", "--flaky-list"])
                    .arg("known-flaky.txt")
                    .output()
                    .expect("train runs");
                assert!(
                    output.status.success(),
                    "{}",
                    String::from_utf8_lossy(&output.stderr)
                );
                runs += 1;
            }
            runs
        })
    };
    two_servers_mark_forty_tests(root.path()).await;
    std::fs::write(root.path().join("marks-done"), "").unwrap();
    let runs = training.join().expect("training never failed");
    assert!(runs >= 3);
    // One more update after every mark: hand labels are kept, the list's label too.
    let output = common::command("flakesense", root.path())
        .args([
            "train",
            "--repo",
            ".",
            "--update",
            "--flaky-list",
            "known-flaky.txt",
        ])
        .output()
        .expect("train runs");
    assert!(output.status.success());
    assert_all_marks_kept(root.path());
    let index = Index::load(&root.path().join(".flakesense/index")).unwrap();
    let ticks = index.entry(index.position("demo.ClockTest#ticks").expect("listed"));
    assert_eq!(ticks.label(), Label::Flaky);
    assert_restarted_server_and_check_agree(root.path()).await;
}
