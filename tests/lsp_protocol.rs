//! The language server against clients that break the protocol, over the real binary's standard
//! input and output: each malformed message gets its error reply (or a logged skip when its id
//! is unknown) and the next valid request is served; the exit code follows the specification.

mod lsp_client;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Child;

use lsp_client::{ClientBehaviour, LspClient, frame};

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;

/// The binary serving an empty workspace, with a client on its standard streams.
async fn start() -> (LspClient, Child, tempfile::TempDir) {
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flakesense"))
        .arg("serve")
        // The cache of signal shares of workspaces outside git goes here, not in the user's.
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
        )
        .current_dir(workspace.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let mut client = LspClient::new(stdout, stdin, ClientBehaviour::default());
    let root = format!("file://{}", workspace.path().display());
    client
        .initialize(json!({
            "processId": null,
            "rootUri": root,
            "capabilities": {},
            "initializationOptions": {"defaultModels": false},
        }))
        .await;
    (client, child, workspace)
}

/// A request any server answers; proves it still reads and serves.
async fn served(client: &mut LspClient) {
    let response = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": "file:///nowhere/T.java"}, "position": {"line": 0, "character": 0}}),
        )
        .await;
    assert!(response.get("error").is_none(), "{response}");
}

async fn error_reply(client: &mut LspClient, id: Value) -> Value {
    client
        .wait_for(
            &format!("the error reply to {id}"),
            move |message| message["id"] == id && message.get("error").is_some(),
            Duration::from_secs(20),
        )
        .await["error"]
        .clone()
}

async fn exit_status(child: Child) -> (i32, String) {
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("the server exits")
        .expect("waited");
    (
        output.status.code().expect("an exit code, not a signal"),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn body_frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

#[tokio::test]
async fn every_malformed_message_is_answered_or_skipped_and_the_next_request_served() {
    let (mut client, child, _workspace) = start().await;

    // Malformed JSON whose id can still be read: answered, and the skip logged.
    client
        .send_raw(&body_frame(br#"{"jsonrpc":"2.0","id":101,"method":"#))
        .await;
    assert_eq!(
        error_reply(&mut client, json!(101)).await["code"],
        PARSE_ERROR
    );
    client
        .wait_for(
            "the logged skip",
            |message| {
                message["method"] == "window/logMessage"
                    && message["params"]["message"]
                        .as_str()
                        .is_some_and(|text| text.contains("malformed JSON"))
            },
            Duration::from_secs(20),
        )
        .await;
    served(&mut client).await;

    // Invalid UTF-8.
    client
        .send_raw(&body_frame(
            b"{\"jsonrpc\":\"2.0\",\"id\":102,\"method\":\"x\xff\xfe\"}",
        ))
        .await;
    assert_eq!(
        error_reply(&mut client, json!(102)).await["code"],
        PARSE_ERROR
    );
    served(&mut client).await;

    // A lone surrogate escape: U+FFFD in its place, and the request served.
    client
        .send_raw(&body_frame(
            br#"{"jsonrpc":"2.0","id":103,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///nowhere/T.java"},"position":{"line":0,"character":0},"workDoneToken":"\udc00"}}"#,
        ))
        .await;
    let answer = client
        .wait_for(
            "the answer to 103",
            |message| message["id"] == 103,
            Duration::from_secs(20),
        )
        .await;
    assert!(answer.get("error").is_none(), "{answer}");

    // Two Content-Length headers that differ, the second one long enough to swallow the request
    // after the body: the body is answered, the next request served.
    let body = r#"{"jsonrpc":"2.0","id":107,"method":"textDocument/hover"}"#;
    let mut both = format!(
        "Content-Length: {}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len(),
        body.len() + 150
    )
    .into_bytes();
    both.extend(frame(&json!({"jsonrpc": "2.0", "id": 108, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///nowhere/T.java"}, "position": {"line": 0, "character": 0}}})));
    client.send_raw(&both).await;
    assert_eq!(
        error_reply(&mut client, json!(107)).await["code"],
        PARSE_ERROR
    );
    let answer = client
        .wait_for(
            "the answer to 108",
            |message| message["id"] == 108,
            Duration::from_secs(20),
        )
        .await;
    assert!(answer.get("error").is_none(), "{answer}");

    // A JSON array (a JSON-RPC batch; LSP has none).
    client
        .send_raw(&body_frame(
            br#"[{"jsonrpc":"2.0","id":104,"method":"textDocument/hover"}]"#,
        ))
        .await;
    assert_eq!(
        error_reply(&mut client, json!(104)).await["code"],
        INVALID_REQUEST
    );
    served(&mut client).await;

    // A misspelt Content-Length header.
    let body = r#"{"jsonrpc":"2.0","id":105,"method":"textDocument/hover"}"#;
    client
        .send_raw(format!("Content-Lenght: {}\r\n\r\n{body}", body.len()).as_bytes())
        .await;
    assert_eq!(
        error_reply(&mut client, json!(105)).await["code"],
        PARSE_ERROR
    );
    served(&mut client).await;

    // Bytes that are no message at all, then a valid one in the same write.
    let mut garbage = b"\x00\x01garbage\r\n\r\n".to_vec();
    garbage.extend(frame(
        &json!({"jsonrpc": "2.0", "id": 106, "method": "$/unknownRequest"}),
    ));
    client.send_raw(&garbage).await;
    // An unknown `$/` request with an id is answered, not ignored.
    assert_eq!(
        error_reply(&mut client, json!(106)).await["code"],
        METHOD_NOT_FOUND
    );
    served(&mut client).await;

    // lsp-mode's shutdown carries `{}`.
    let response = client.request("shutdown", json!({})).await;
    assert!(response.get("error").is_none(), "{response}");
    client.notify("exit", Value::Null).await;
    let (code, stderr) = exit_status(child).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches("skipped a message").count(), 6, "{stderr}");
    assert!(
        stderr.contains("two Content-Length headers that differ"),
        "{stderr}"
    );
}

#[tokio::test]
async fn exit_without_shutdown_exits_with_1() {
    let (client, child, _workspace) = start().await;
    client.notify("exit", Value::Null).await;
    assert_eq!(exit_status(child).await.0, 1);
}

#[tokio::test]
async fn shutdown_with_null_params_then_the_end_of_input_exits_with_0() {
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flakesense"))
        .arg("serve")
        // The cache of signal shares of workspaces outside git goes here, not in the user's.
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
        )
        .current_dir(workspace.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = child.stdout.take().expect("piped");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": {},
                   "initializationOptions": {"defaultModels": false}}});
    stdin
        .write_all(&frame(&initialize))
        .await
        .expect("the server reads");
    let mut received = Vec::new();
    while !String::from_utf8_lossy(&received).contains(r#""id":1"#) {
        let mut buffer = [0u8; 4096];
        let read = stdout.read(&mut buffer).await.expect("the server writes");
        assert!(read > 0, "the server answers initialize");
        received.extend_from_slice(&buffer[..read]);
    }
    let mut messages = frame(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    messages.extend(frame(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null}),
    ));
    stdin.write_all(&messages).await.expect("the server reads");
    // Closing standard input ends the session.
    drop(stdin);
    stdout
        .read_to_end(&mut received)
        .await
        .expect("the server writes");
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits at the end of its input")
        .expect("waited");
    let stdout = String::from_utf8_lossy(&received);
    assert!(
        stdout.contains(r#""id":2,"jsonrpc":"2.0","result":null"#)
            || stdout.contains(r#""jsonrpc":"2.0","result":null,"id":2"#),
        "{stdout}"
    );
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn a_stream_that_cannot_be_followed_ends_the_server_with_2_and_a_reason() {
    let (client, child, _workspace) = start().await;
    client
        .send_raw(b"Content-Length: 99999999999\r\n\r\n{}")
        .await;
    let (code, stderr) = exit_status(child).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("over the limit"), "{stderr}");
}

/// An edit holding a lone surrogate escape (half of an emoji, as some editors send it) is kept,
/// the surrogate as U+FFFD: one UTF-16 code unit, so the edits after it land where the client
/// put them, and the server's text stays the client's.
#[tokio::test]
async fn a_lone_surrogate_in_an_edit_keeps_the_document_in_step() {
    let (mut client, child, workspace) = start().await;
    let uri = format!("file://{}/test_edits.py", workspace.path().display());
    client
        .open(&uri, "python", 1, "def test_a():\n    assert True\n")
        .await;
    // Before the test, a line with a lone surrogate; then, on the same line after it, text whose
    // place counts the surrogate as one UTF-16 code unit.
    let change = format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didChange","params":{{"textDocument":{{"uri":"{uri}","version":2}},"contentChanges":[{{"range":{{"start":{{"line":0,"character":0}},"end":{{"line":0,"character":0}}}},"text":"x = '\ud800'\n"}}]}}}}"#
    );
    client.send_raw(&body_frame(change.as_bytes())).await;
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"range": {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 7}}, "text": "\n\n"}]}),
        )
        .await;
    // The test is now on line 3 (0-based), where the client sees it.
    let hover = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 6}}),
        )
        .await;
    assert_eq!(
        hover["result"]["range"]["start"],
        json!({"line": 3, "character": 4}),
        "{hover:#}"
    );
    client.shutdown_and_exit().await;
    let (code, stderr) = exit_status(child).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("skipped a message"), "{stderr}");
}

#[tokio::test]
async fn files_that_once_overflowed_the_stack_or_never_finished_are_judged_and_the_server_serves() {
    let (mut client, child, workspace) = start().await;
    let sum = vec!["x"; 20_000].join("+");
    let mut nested = String::from("class A0 {");
    for level in 1..20_000 {
        nested.push_str(&format!(" class A{level} {{"));
    }
    nested.push_str(" @Test void waits() throws Exception { Thread.sleep(10); } ");
    nested.push_str(&"}".repeat(20_000));
    let files = [
        (
            "test_sum.py",
            "python",
            format!("import time\n\ndef test_waits():\n    time.sleep({sum})\n"),
        ),
        (
            "SumTest.java",
            "java",
            format!(
                "class SumTest {{ @Test void waits() throws Exception {{ Thread.sleep({sum}); }} }}\n"
            ),
        ),
        (
            "sum.rs",
            "rust",
            format!("#[test]\nfn waits() {{ std::thread::sleep({sum}); }}\n"),
        ),
        ("A0.java", "java", nested),
    ];
    for (name, language, text) in &files {
        let uri = format!("file://{}/{name}", workspace.path().display());
        client.open(&uri, language, 1, text).await;
        let published = client.diagnostics(&uri, Some(1)).await;
        assert!(published["diagnostics"].is_array(), "{published}");
    }
    served(&mut client).await;
    client.shutdown_and_exit().await;
    let (code, stderr) = exit_status(child).await;
    assert_eq!(code, 0, "{stderr}");
}
