//! A small LSP client for the language server's tests and benchmark: JSON-RPC over any byte
//! streams, answering the server's requests the way an editor would.

#![allow(dead_code)] // each test binary uses its own part of this module

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

type Writer = Arc<Mutex<Box<dyn AsyncWrite + Unpin + Send>>>;

/// What the client answers to the server's own requests.
#[derive(Debug, Clone)]
pub struct ClientBehaviour {
    /// The answer to `workspace/configuration` (one item).
    pub configuration: Value,
}

impl Default for ClientBehaviour {
    fn default() -> ClientBehaviour {
        ClientBehaviour {
            configuration: Value::Null,
        }
    }
}

pub struct LspClient {
    writer: Writer,
    /// The answer to `workspace/configuration`, changeable while the server runs.
    configuration: Arc<std::sync::Mutex<Value>>,
    incoming: mpsc::UnboundedReceiver<Value>,
    /// Messages received and not yet consumed, in arrival order.
    pub received: VecDeque<Value>,
    next_id: i64,
}

/// Frames a JSON-RPC message.
pub fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// Reads one framed message; `None` at the end of the stream. Panics on anything that is not a
/// well-formed frame: standard output must carry the protocol only.
async fn read_frame(reader: &mut (impl AsyncBufReadExt + Unpin)) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("not a header line on the protocol stream: {line:?}"));
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.trim().parse::<usize>().expect("a numeric length"));
        }
    }
    let mut body = vec![0; length.expect("a Content-Length header")];
    reader.read_exact(&mut body).await.ok()?;
    Some(serde_json::from_slice(&body).expect("a JSON body"))
}

impl LspClient {
    pub fn new(
        input: impl AsyncRead + Unpin + Send + 'static,
        output: impl AsyncWrite + Unpin + Send + 'static,
        behaviour: ClientBehaviour,
    ) -> LspClient {
        let writer: Writer = Arc::new(Mutex::new(Box::new(output)));
        let (sender, incoming) = mpsc::unbounded_channel();
        let answering = writer.clone();
        let configuration = Arc::new(std::sync::Mutex::new(behaviour.configuration));
        let answer_configuration = configuration.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(input);
            while let Some(message) = read_frame(&mut reader).await {
                if let (Some(id), Some(method)) = (message.get("id"), message.get("method")) {
                    let result = match method.as_str() {
                        Some("workspace/configuration") => {
                            json!([answer_configuration.lock().expect("not poisoned").clone()])
                        }
                        Some("window/showDocument") => json!({"success": true}),
                        Some("workspace/applyEdit") => json!({"applied": true}),
                        _ => Value::Null,
                    };
                    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                    let mut writer = answering.lock().await;
                    let _ = writer.write_all(&frame(&answer)).await;
                    let _ = writer.flush().await;
                }
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        LspClient {
            writer,
            configuration,
            incoming,
            received: VecDeque::new(),
            next_id: 0,
        }
    }

    /// Changes what the client answers to `workspace/configuration` from now on.
    pub fn set_configuration(&self, value: Value) {
        *self.configuration.lock().expect("not poisoned") = value;
    }

    pub async fn send(&self, message: Value) {
        self.send_raw(&frame(&message)).await;
    }

    /// Writes bytes as they are: several frames in one write arrive together.
    pub async fn send_raw(&self, bytes: &[u8]) {
        let mut writer = self.writer.lock().await;
        writer.write_all(bytes).await.expect("the server reads");
        writer.flush().await.expect("the server reads");
    }

    pub async fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Sends a request and returns its response (with `result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.wait_for(
            &format!("the response to {method}"),
            |message| message.get("id") == Some(&json!(id)) && message.get("method").is_none(),
            Duration::from_secs(20),
        )
        .await
    }

    /// The first message, received or to come, that `matches`; the others stay queued.
    pub async fn wait_for(
        &mut self,
        what: &str,
        matches: impl Fn(&Value) -> bool,
        timeout: Duration,
    ) -> Value {
        if let Some(position) = self.received.iter().position(&matches) {
            return self.received.remove(position).expect("just found");
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.incoming.recv()).await {
                Ok(Some(message)) if matches(&message) => return message,
                Ok(Some(message)) => self.received.push_back(message),
                Ok(None) => panic!("the server closed the connection while waiting for {what}"),
                Err(_) => panic!(
                    "no {what} within {timeout:?}; received meanwhile: {:#?}",
                    self.received
                ),
            }
        }
    }

    /// Queues everything that arrives until a message that `matches`, which is queued too: the
    /// queue keeps the order of arrival.
    pub async fn collect_until(
        &mut self,
        what: &str,
        matches: impl Fn(&Value) -> bool,
        timeout: Duration,
    ) {
        if self.received.iter().any(&matches) {
            return;
        }
        let message = self.wait_for(what, matches, timeout).await;
        self.received.push_back(message);
    }

    /// Queues everything that arrives within `duration`.
    pub async fn collect_for(&mut self, duration: Duration) {
        let deadline = Instant::now() + duration;
        while let Ok(Some(message)) = tokio::time::timeout(
            deadline.saturating_duration_since(Instant::now()),
            self.incoming.recv(),
        )
        .await
        {
            self.received.push_back(message);
        }
    }

    /// Removes and returns the queued messages of a method.
    pub fn take(&mut self, method: &str) -> Vec<Value> {
        let (taken, kept): (Vec<Value>, Vec<Value>) = self
            .received
            .drain(..)
            .partition(|message| message["method"] == method);
        self.received = kept.into();
        taken
    }

    /// The next `publishDiagnostics` for a document (of a given version when `Some`).
    pub async fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Value {
        let uri = uri.to_string();
        self.wait_for(
            &format!("diagnostics for {uri} at version {version:?}"),
            move |message| {
                message["method"] == "textDocument/publishDiagnostics"
                    && message["params"]["uri"] == uri.as_str()
                    && version.is_none_or(|version| message["params"]["version"] == version)
            },
            Duration::from_secs(20),
        )
        .await["params"]
            .clone()
    }

    /// `initialize` then `initialized`; returns the initialize result.
    pub async fn initialize(&mut self, params: Value) -> Value {
        let response = self.request("initialize", params).await;
        self.notify("initialized", json!({})).await;
        response["result"].clone()
    }

    pub async fn open(&self, uri: &str, language: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}}),
        )
        .await;
    }

    pub async fn shutdown_and_exit(&mut self) {
        let response = self.request("shutdown", Value::Null).await;
        assert!(response.get("error").is_none(), "{response}");
        self.notify("exit", Value::Null).await;
    }
}

/// A real `flakesense serve` process (`binary`) working in `root`, with a client on its standard
/// input and output; its standard error is dropped, and the process dies with its handle.
pub fn spawn_server(
    binary: impl AsRef<std::ffi::OsStr>,
    root: &Path,
) -> (LspClient, tokio::process::Child) {
    let mut child = tokio::process::Command::new(binary)
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
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    (
        LspClient::new(stdout, stdin, ClientBehaviour::default()),
        child,
    )
}

/// The server's log line saying it has read the workspace's tests (after which it judges the
/// open documents again).
pub fn read_the_workspace(message: &Value) -> bool {
    message["method"] == "window/logMessage"
        && message["params"]["message"]
            .as_str()
            .is_some_and(|text| text.starts_with("read the"))
}
