use super::*;

fn tokens(language: Language, code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    code_tokens(language, code, &mut |token| tokens.push(token.to_string()));
    tokens
}

#[test]
fn splits_identifiers_and_joins_call_paths() {
    let found = tokens(Language::Java, "new CountDownLatch(1); Thread.sleep(500);");
    assert_eq!(
        found,
        [
            "new",
            "countdownlatch",
            "count",
            "down",
            "latch",
            "thread",
            "sleep",
            "thread.sleep",
            "500"
        ]
    );
}

#[test]
fn acronyms_and_snake_case_split_into_words() {
    assert_eq!(
        tokens(Language::Python, "HTTPServer"),
        ["httpserver", "http", "server"]
    );
    assert_eq!(
        tokens(Language::Python, "wait_for_it"),
        ["wait_for_it", "wait", "for", "it"]
    );
    assert_eq!(tokens(Language::Rust, "x"), Vec::<String>::new());
}

#[test]
fn identifier_parts_follow_case_digits_and_underscores() {
    assert_eq!(
        identifier_parts("getHTTPResponse2Code"),
        ["get", "HTTP", "Response", "2", "Code"]
    );
    assert_eq!(identifier_parts("__init__"), ["init"]);
    assert_eq!(identifier_parts("ÜberTest"), ["Über", "Test"]);
    assert_eq!(identifier_parts("x"), ["x"]);
}

#[test]
fn rust_paths_and_receivers() {
    let found = tokens(Language::Rust, "std::thread::sleep(d); self.client.get()");
    assert!(found.contains(&"std.thread".to_string()), "{found:?}");
    assert!(found.contains(&"thread.sleep".to_string()), "{found:?}");
    assert!(found.contains(&"client.get".to_string()), "{found:?}");
    assert!(!found.iter().any(|t| t.starts_with("self.")), "{found:?}");
}

#[test]
fn strings_and_comments_give_words_not_paths() {
    let found = tokens(
        Language::Java,
        "get(\"http://example.com/a.b\"); // Wait.for it\nx",
    );
    assert_eq!(
        found,
        [
            "get", "<url>", "http", "example", "com", "wait", "for", "it"
        ]
    );
    let found = tokens(Language::Python, "s = r'a\\b' + f\"{name}\" # note");
    assert_eq!(found, ["name", "note"]);
}

#[test]
fn lifetimes_are_not_char_literals() {
    let found = tokens(Language::Rust, "fn f<'a>(x: &'a str) -> char { 'z' }");
    assert!(found.contains(&"str".to_string()), "{found:?}");
    assert!(found.contains(&"char".to_string()), "{found:?}");
}

#[test]
fn broken_input_never_panics() {
    for code in [
        "\"unterminated",
        "/* open",
        "r#\"raw",
        "'",
        "b'",
        "é.ü::",
        "1.2.3.",
        "a.",
        "::b",
    ] {
        for language in Language::ALL {
            let _ = tokens(language, code);
        }
    }
}
