//! The connection between the client's byte streams and tower-lsp-server's service.
//!
//! Standard input is read through [`framing`], which rejects what the service cannot decode
//! and finds the next message after it; the few protocol rules tower-lsp-server gets wrong
//! are settled here before a message reaches it (see [`admit`]). Everything for the client,
//! the service's own output and this layer's error replies and log messages, goes through one
//! writer, frame by frame, in the order they were queued: a command's reply follows the
//! publications the relay counted before it (see [`super::published`]).
//!
//! The server ends on `exit`, at the end of its input, when its output is closed, or when its
//! input cannot be followed any more; [`Outcome::exit_code`] says how the process should exit.

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use super::framing::json_rpc::{self, METHOD_NOT_FOUND};
use super::framing::{self, Decoder, Frame};
use super::published::Publications;

/// How a session with a client ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The client sent `exit`.
    Exit,
    /// The client closed the server's input.
    InputClosed,
    /// The client stopped reading the server's output.
    OutputClosed,
    /// The input could not be followed any more: why.
    Unrecoverable(String),
}

/// The end of a session and whether the client asked for a `shutdown` before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub ending: Ending,
    pub shutdown_requested: bool,
}

impl Outcome {
    /// 0 after a `shutdown`, 1 without one (the LSP specification's rule for `exit`, applied to
    /// every ending), 2 when the input could not be followed.
    pub fn exit_code(&self) -> u8 {
        match (&self.ending, self.shutdown_requested) {
            (Ending::Unrecoverable(_), _) => 2,
            (_, true) => 0,
            (_, false) => 1,
        }
    }
}

/// What the protocol state says about one message from the client.
#[derive(Debug, PartialEq)]
enum Admission {
    /// Hand the message on; `Some` when it had to be rewritten first.
    Forward(Option<Value>),
    /// Answer it here and hand nothing on.
    Answer(Value),
}

#[derive(Debug, Default)]
struct ProtocolState {
    initialize_seen: bool,
    shutdown_requested: bool,
}

/// Settles what tower-lsp-server would get wrong:
///
/// - `shutdown` takes no params, and tower-lsp-server refuses any but `null`; lsp-mode sends
///   `{}`. An empty object or array is dropped.
/// - A `$/` request it does not know, tower-lsp-server leaves unanswered; the specification
///   asks for MethodNotFound when the message has an id. The server knows no `$/` request.
fn admit(message: &Value, state: &mut ProtocolState) -> Admission {
    let method = message.get("method").and_then(Value::as_str);
    match method {
        Some("initialize") => state.initialize_seen = true,
        Some("shutdown") => {
            state.shutdown_requested = true;
            let empty = match message.get("params") {
                Some(Value::Object(params)) => params.is_empty(),
                Some(Value::Array(params)) => params.is_empty(),
                _ => false,
            };
            if empty {
                let mut rewritten = message.clone();
                if let Some(object) = rewritten.as_object_mut() {
                    object.remove("params");
                }
                return Admission::Forward(Some(rewritten));
            }
        }
        Some(method) if method.starts_with("$/") => {
            if let Some(id) = json_rpc::request_id(message) {
                return Admission::Answer(json_rpc::reply_error(
                    id,
                    METHOD_NOT_FOUND,
                    &format!("unknown method {method}"),
                ));
            }
        }
        _ => {}
    }
    Admission::Forward(None)
}

/// Serves one client: `input` and `output` are its streams; `server` is tower-lsp-server's loop,
/// reading what is written to `service_input` and writing what is read from `service_output`;
/// `publications` counts the diagnostics relayed.
pub async fn connect(
    input: impl AsyncRead + Unpin,
    output: impl AsyncWrite + Unpin,
    service_input: impl AsyncWrite + Unpin,
    service_output: impl AsyncRead + Unpin,
    server: impl Future<Output = ()>,
    publications: &Publications,
) -> Outcome {
    let (to_client, for_client) = mpsc::unbounded_channel::<Vec<u8>>();
    let (output_closed, output_closed_seen) = oneshot::channel::<()>();
    let writer = write_to_client(output, for_client, output_closed);
    let relay = relay_service_output(service_output, to_client.clone(), publications);
    let reader = read_from_client(input, service_input, to_client, output_closed_seen);
    let ((), (), (), outcome) = tokio::join!(server, writer, relay, reader);
    outcome
}

async fn write_to_client(
    mut output: impl AsyncWrite + Unpin,
    mut frames: mpsc::UnboundedReceiver<Vec<u8>>,
    closed: oneshot::Sender<()>,
) {
    while let Some(bytes) = frames.recv().await {
        let written = async {
            output.write_all(&bytes).await?;
            output.flush().await
        };
        if written.await.is_err() {
            let _ = closed.send(());
            return;
        }
    }
}

/// Copies the service's frames to the client's writer, whole, so that this layer's own
/// messages can go between them, and counts the publications of diagnostics among them once
/// they are queued.
async fn relay_service_output(
    mut service_output: impl AsyncRead + Unpin,
    to_client: mpsc::UnboundedSender<Vec<u8>>,
    publications: &Publications,
) {
    let mut decoder = Decoder::default();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        while let Ok(Some(body)) = decoder.next_body() {
            let publication =
                json_rpc::method_of(&body).as_deref() == Some("textDocument/publishDiagnostics");
            if to_client.send(framing::frame(&body)).is_err() {
                return;
            }
            if publication {
                publications.count_relayed();
            }
        }
        match service_output.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => decoder.push(&buffer[..read]),
        }
    }
}

async fn read_from_client(
    mut input: impl AsyncRead + Unpin,
    mut service_input: impl AsyncWrite + Unpin,
    to_client: mpsc::UnboundedSender<Vec<u8>>,
    mut output_closed: oneshot::Receiver<()>,
) -> Outcome {
    let mut state = ProtocolState::default();
    let mut decoder = Decoder::default();
    let mut buffer = vec![0u8; 1 << 16];
    let ending = 'session: loop {
        loop {
            let frame = match decoder.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(error) => {
                    let reason = format!("cannot read the client's messages any more: {error}");
                    report(&to_client, &state, &reason);
                    break 'session Ending::Unrecoverable(reason);
                }
            };
            match frame {
                Frame::Message { message, body } => {
                    let exit = message.get("method").and_then(Value::as_str) == Some("exit");
                    let forward = match admit(&message, &mut state) {
                        Admission::Answer(reply) => {
                            let _ = to_client.send(framing::frame(reply.to_string().as_bytes()));
                            continue;
                        }
                        Admission::Forward(None) => framing::frame(&body),
                        Admission::Forward(Some(rewritten)) => {
                            framing::frame(rewritten.to_string().as_bytes())
                        }
                    };
                    let sent = async {
                        service_input.write_all(&forward).await?;
                        service_input.flush().await
                    };
                    if sent.await.is_err() || exit {
                        break 'session Ending::Exit;
                    }
                }
                Frame::Rejected { reason, replies } => {
                    report(&to_client, &state, &format!("skipped a message: {reason}"));
                    for reply in replies {
                        let _ = to_client.send(framing::frame(reply.to_string().as_bytes()));
                    }
                }
            }
        }
        let read = tokio::select! {
            read = input.read(&mut buffer) => read,
            _ = &mut output_closed => break 'session Ending::OutputClosed,
        };
        match read {
            Ok(0) => {
                if let Some(left) = decoder.finish() {
                    report(&to_client, &state, &format!("skipped a message: {left}"));
                }
                break 'session Ending::InputClosed;
            }
            Ok(read) => decoder.push(&buffer[..read]),
            Err(error) => {
                let reason = format!("cannot read standard input: {error}");
                report(&to_client, &state, &reason);
                break 'session Ending::Unrecoverable(reason);
            }
        }
    };
    // Closing the service's input ends tower-lsp-server's loop, then its output, then the relay.
    let _ = service_input.shutdown().await;
    Outcome {
        ending,
        shutdown_requested: state.shutdown_requested,
    }
}

/// Reports a problem with the client's messages on standard error (an editor's server log)
/// and, once the client has begun the session, as a `window/logMessage` warning.
fn report(to_client: &mpsc::UnboundedSender<Vec<u8>>, state: &ProtocolState, message: &str) {
    eprintln!("flakesense: {message}");
    if state.initialize_seen {
        let log = json!({
            "jsonrpc": "2.0",
            "method": "window/logMessage",
            "params": {"type": 2, "message": format!("flakesense: {message}")},
        });
        let _ = to_client.send(framing::frame(log.to_string().as_bytes()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::published::relayed_soon;

    fn admitted(message: Value) -> (Admission, ProtocolState) {
        let mut state = ProtocolState::default();
        (admit(&message, &mut state), state)
    }

    #[test]
    fn shutdown_accepts_absent_null_or_empty_params() {
        for params in [None, Some(Value::Null)] {
            let mut message = json!({"jsonrpc": "2.0", "id": 1, "method": "shutdown"});
            if let Some(params) = params {
                message["params"] = params;
            }
            let (admission, state) = admitted(message);
            assert_eq!(admission, Admission::Forward(None));
            assert!(state.shutdown_requested);
        }
        for params in [json!({}), json!([])] {
            let (admission, _) = admitted(
                json!({"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": params}),
            );
            assert_eq!(
                admission,
                Admission::Forward(Some(
                    json!({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
                ))
            );
        }
    }

    #[test]
    fn unknown_dollar_requests_get_method_not_found_and_notifications_pass() {
        let (admission, _) = admitted(json!({"jsonrpc": "2.0", "id": 3, "method": "$/weird"}));
        let Admission::Answer(reply) = admission else {
            panic!("not answered")
        };
        assert_eq!(reply["id"], 3);
        assert_eq!(reply["error"]["code"], METHOD_NOT_FOUND);
        let (admission, _) =
            admitted(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}}));
        assert_eq!(admission, Admission::Forward(None));
    }

    /// The relay counts the publications of diagnostics it queues for the client, and only those,
    /// and keeps the service's order.
    #[tokio::test]
    async fn the_relay_counts_the_publications_it_queues() {
        let messages = [
            json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": "x"}}),
            json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///a", "diagnostics": []}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": null}),
        ];
        let service_output: Vec<u8> = messages
            .iter()
            .flat_map(|message| framing::frame(message.to_string().as_bytes()))
            .collect();
        let publications = Publications::default();
        let (to_client, mut queued) = mpsc::unbounded_channel();
        relay_service_output(&service_output[..], to_client, &publications).await;
        for message in &messages {
            let frame = queued.try_recv().expect("queued");
            assert_eq!(frame, framing::frame(message.to_string().as_bytes()));
        }
        publications.count_handed();
        assert!(relayed_soon(&publications).await, "one relayed");
        publications.count_handed();
        assert!(!relayed_soon(&publications).await, "only one");
    }

    #[test]
    fn exit_codes_follow_the_shutdown() {
        let outcome = |ending, shutdown_requested| Outcome {
            ending,
            shutdown_requested,
        };
        assert_eq!(outcome(Ending::Exit, true).exit_code(), 0);
        assert_eq!(outcome(Ending::Exit, false).exit_code(), 1);
        assert_eq!(outcome(Ending::InputClosed, false).exit_code(), 1);
        assert_eq!(outcome(Ending::InputClosed, true).exit_code(), 0);
        assert_eq!(
            outcome(Ending::Unrecoverable("x".into()), true).exit_code(),
            2
        );
    }
}
