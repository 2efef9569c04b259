use serde_json::json;

use super::json_rpc::{INVALID_REQUEST, method_of};
use super::*;

fn framed(body: &str) -> Vec<u8> {
    frame(body.as_bytes())
}

fn decode_all(bytes: &[u8]) -> (Vec<Frame>, Option<String>) {
    let mut decoder = Decoder::default();
    let mut frames = Vec::new();
    // One byte at a time: every state must survive a read cut anywhere.
    for byte in bytes {
        decoder.push(std::slice::from_ref(byte));
        while let Some(frame) = decoder.next_frame().expect("recoverable") {
            frames.push(frame);
        }
    }
    (frames, decoder.finish())
}

const SHUTDOWN: &str = r#"{"jsonrpc":"2.0","id":9,"method":"shutdown"}"#;

fn is_shutdown(frame: &Frame) -> bool {
    matches!(frame, Frame::Message { message, .. } if message["id"] == 9)
}

fn replies(frame: &Frame) -> Vec<(Value, i64)> {
    match frame {
        Frame::Rejected { replies, .. } => replies
            .iter()
            .map(|reply| {
                (
                    reply["id"].clone(),
                    reply["error"]["code"].as_i64().unwrap(),
                )
            })
            .collect(),
        Frame::Message { .. } => panic!("not rejected: {frame:?}"),
    }
}

#[test]
fn the_service_output_is_relayed_body_by_body_with_its_method() {
    let publication = r#"{"jsonrpc":"2.0","method":"textDocument\/publishDiagnostics","params":{"uri":"file:///a.java","diagnostics":[]}}"#;
    let response =
        r#"{"jsonrpc":"2.0","result":{"method":"textDocument/publishDiagnostics"},"id":3}"#;
    let mut bytes = b"garbage before".to_vec();
    bytes.extend(framed(publication));
    bytes.extend(framed(response));
    let mut decoder = Decoder::default();
    let mut bodies = Vec::new();
    for byte in &bytes {
        decoder.push(std::slice::from_ref(byte));
        while let Some(body) = decoder.next_body().expect("recoverable") {
            bodies.push(body);
        }
    }
    assert_eq!(bodies, [publication.as_bytes(), response.as_bytes()]);
    // An escaped slash is still the method; a response has none, whatever its result holds.
    assert_eq!(
        method_of(&bodies[0]).as_deref(),
        Some("textDocument/publishDiagnostics")
    );
    assert_eq!(method_of(&bodies[1]), None);
    assert_eq!(method_of(b"[1, 2]"), None);
}

#[test]
fn good_messages_pass_whole_whatever_the_reads() {
    let mut bytes = framed(SHUTDOWN);
    bytes.extend(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
    bytes.extend(framed(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    let (frames, left) = decode_all(&bytes);
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert!(is_shutdown(&frames[0]));
    assert_eq!(left, None);
}

#[test]
fn each_malformed_body_is_answered_when_its_id_is_known() {
    // A body, and the (id, code) of each error reply it is owed.
    type Case<'a> = (&'a [u8], Vec<(Value, i64)>);
    let cases: [Case; 8] = [
        // Malformed JSON: the id read as far as the body goes, never one inside `params`.
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"#,
            vec![(json!(1), PARSE_ERROR)],
        ),
        (
            br#"{"jsonrpc":"2.0","method":"id","params":{"id":7},"id":"eight",}"#,
            vec![(json!("eight"), PARSE_ERROR)],
        ),
        (
            br#"{"jsonrpc":"2.0","method":"x","params":{"id":7},"#,
            vec![],
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\xff\"}",
            vec![(json!(2), PARSE_ERROR)],
        ),
        (
            br#"[{"jsonrpc":"2.0","id":4,"method":"a"},{"jsonrpc":"2.0","method":"b"}]"#,
            vec![(json!(4), INVALID_REQUEST)],
        ),
        (br#"{"jsonrpc":"2.0","id":1.5,"method":"a"}"#, vec![]),
        (
            br#"{"jsonrpc":"1.0","id":"six","method":"a"}"#,
            vec![(json!("six"), INVALID_REQUEST)],
        ),
        (b"17", vec![]),
    ];
    for (body, expected) in cases {
        let mut bytes = frame(body);
        bytes.extend(framed(SHUTDOWN));
        let (frames, left) = decode_all(&bytes);
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!(replies(&frames[0]), expected, "{frames:?}");
        assert!(is_shutdown(&frames[1]), "{frames:?}");
        assert_eq!(left, None);
    }
}

#[test]
fn lone_surrogates_become_replacement_characters_and_pairs_stay() {
    let body = br#"{"jsonrpc":"2.0","id":3,"method":"hover","params":{"a":"\ud800x\\ud800\ud83d\ude00\udc00"}}"#;
    let (frames, _) = decode_all(&frame(body));
    let [Frame::Message { message, .. }] = &frames[..] else {
        panic!("{frames:?}");
    };
    assert_eq!(message["params"]["a"], "\u{fffd}x\\ud800\u{1f600}\u{fffd}");
}

#[test]
fn two_content_lengths_that_differ_swallow_nothing() {
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"hover"}"#;
    let mut bytes = format!(
        "Content-Length: {}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len(),
        body.len() + SHUTDOWN.len() + 30
    )
    .into_bytes();
    bytes.extend(framed(SHUTDOWN));
    let (frames, _) = decode_all(&bytes);
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(replies(&frames[0]), vec![(json!(5), PARSE_ERROR)]);
    assert!(is_shutdown(&frames[1]));
}

#[test]
fn a_misspelt_content_length_is_answered_and_passed() {
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"hover"}"#;
    let mut bytes = format!("Content-Lenght: {}\r\n\r\n{body}", body.len()).into_bytes();
    bytes.extend(framed(SHUTDOWN));
    let (frames, _) = decode_all(&bytes);
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(
        replies(&frames[0]),
        vec![(json!(5), PARSE_ERROR)],
        "{frames:?}"
    );
    assert!(is_shutdown(&frames[1]));
}

#[test]
fn garbage_is_skipped_up_to_the_next_header() {
    for garbage in [
        &b"hello world\r\n\r\n"[..],
        b"Content-Length: abc\r\n\r\n{{{{",
        b"\x00\x01\x02\xff",
        b"{\"unterminated",
    ] {
        let mut bytes = garbage.to_vec();
        bytes.extend(framed(SHUTDOWN));
        let (frames, left) = decode_all(&bytes);
        assert!(
            frames.last().is_some_and(is_shutdown),
            "{garbage:?}: {frames:?}"
        );
        assert_eq!(left, None);
    }
}

#[test]
fn a_huge_length_cannot_be_followed() {
    let mut decoder = Decoder::default();
    decoder.push(b"Content-Length: 99999999999\r\n\r\n{}");
    assert!(decoder.next_frame().is_err());
}

#[test]
fn endless_garbage_ends_the_stream() {
    let mut decoder = Decoder::default();
    let chunk = vec![b'x'; 1 << 20];
    let mut ended = false;
    for _ in 0..80 {
        decoder.push(&chunk);
        match decoder.next_frame() {
            Err(_) => {
                ended = true;
                break;
            }
            Ok(frame) => assert!(matches!(frame, None | Some(Frame::Rejected { .. }))),
        }
        assert!(decoder.buffer.len() < 1 << 21, "garbage is not kept");
    }
    assert!(ended);
}

#[test]
fn a_truncated_message_is_reported_at_the_end() {
    let bytes = framed(SHUTDOWN);
    let (frames, left) = decode_all(&bytes[..bytes.len() - 3]);
    assert!(frames.is_empty());
    assert!(left.unwrap().contains("inside a message"));
}
