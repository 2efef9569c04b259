//! Reads the values a signal depends on from the syntax tree: numbers (with simple arithmetic and
//! the file's own constants), durations with their units, ports, and the hosts that strings name.
//! A sleep of zero is not a wait, a 30-second timeout is not tight and a port 0 is the cure for
//! fixed ports; none of that shows in the words of the code, all of it in its values.

use std::cell::{Cell, RefCell};

use rustc_hash::{FxHashMap, FxHashSet};
use tree_sitter::Node;

/// How deep names are followed to their values (`a = b; b = 5`).
const MAX_BINDING_DEPTH: u8 = 4;

/// What the catalogue's fact queries found in one file: which names hold which values, which
/// names are mocks, and which hold hash-ordered collections.
#[derive(Default)]
pub(crate) struct Facts<'tree> {
    /// The first value bound to each name anywhere in the file (locals, fields, constants):
    /// flakesense does not resolve scopes, and a test file rarely reuses a name for another value.
    pub bindings: FxHashMap<&'tree str, Node<'tree>>,
    pub mocks: FxHashSet<&'tree str>,
    pub hash_collections: FxHashSet<&'tree str>,
    /// The text the bindings' nodes belong to.
    pub text: &'tree str,
    /// Every name looked up, with where the match that looked it up lies in the file (set in
    /// `reading_at` before each): an edit that changes a fact no match outside it read leaves
    /// the rest of the file's hits as they were ([`super::rescan`]).
    pub reads: RefCell<Vec<(usize, String)>>,
    pub reading_at: Cell<usize>,
}

/// The text of a node, or "" if its range is not in `text`.
pub(crate) fn text_of<'a>(node: Node<'_>, text: &'a str) -> &'a str {
    text.get(node.byte_range()).unwrap_or("")
}

/// The last name of a path or member access: `Thread` of `java.lang.Thread`, `sleep` of
/// `time.sleep`, `timeout` of `self.timeout`; the text itself for an identifier.
pub(crate) fn last_name<'a>(node: Node<'_>, text: &'a str) -> Option<&'a str> {
    match node.kind() {
        "identifier" | "field_identifier" | "type_identifier" => Some(text_of(node, text)),
        // Java `a.b`, Python `a.b`, Rust `a::b` and `a.b`.
        "field_access"
        | "attribute"
        | "scoped_identifier"
        | "field_expression"
        | "scoped_type_identifier" => {
            let name = node
                .child_by_field_name("field")
                .or_else(|| node.child_by_field_name("attribute"))
                .or_else(|| node.child_by_field_name("name"))?;
            last_name(name, text)
        }
        // `&map`, `(map)`.
        "reference_expression" | "parenthesized_expression" => {
            let inner = node
                .child_by_field_name("value")
                .or_else(|| node.named_child(0))?;
            last_name(inner, text)
        }
        _ => None,
    }
}

impl<'tree> Facts<'tree> {
    /// The value bound to the name `node` stands for, if any.
    fn bound(&self, node: Node<'_>, text: &str) -> Option<Node<'tree>> {
        self.binding(last_name(node, text)?)
    }

    /// The value bound to `name`, if any.
    pub fn binding(&self, name: &str) -> Option<Node<'tree>> {
        self.read(name);
        self.bindings.get(name).copied()
    }

    fn read(&self, name: &str) {
        self.reads
            .borrow_mut()
            .push((self.reading_at.get(), name.to_string()));
    }

    /// The name a receiver expression stands for: `client` of `client`, `this.client` or
    /// `self.client`; none for a call or anything else.
    pub fn receiver_name<'a>(node: Node<'_>, text: &'a str) -> Option<&'a str> {
        last_name(node, text)
    }

    /// Whether a receiver is a mock: bound to a mock constructor, annotated as one, or named so.
    pub fn is_mock(&self, node: Node<'_>, text: &str) -> bool {
        Self::receiver_name(node, text).is_some_and(|name| {
            self.read(name);
            self.mocks.contains(name) || name.to_ascii_lowercase().contains("mock")
        })
    }

    /// Whether a receiver holds a hash-ordered collection.
    pub fn is_hash_collection(&self, node: Node<'_>, text: &str) -> bool {
        Self::receiver_name(node, text).is_some_and(|name| {
            self.read(name);
            self.hash_collections.contains(name)
        })
    }

    /// A number: a literal, simple arithmetic on numbers, or a name bound to one.
    pub fn number(&self, node: Node<'_>, text: &str) -> Option<f64> {
        self.number_at(node, text, 0)
    }

    fn number_at(&self, node: Node<'_>, text: &str, depth: u8) -> Option<f64> {
        match node.kind() {
            "decimal_integer_literal"
            | "hex_integer_literal"
            | "octal_integer_literal"
            | "binary_integer_literal"
            | "integer"
            | "integer_literal" => parse_integer(text_of(node, text)),
            "decimal_floating_point_literal" | "float" | "float_literal" => {
                parse_float(text_of(node, text))
            }
            "parenthesized_expression" => self.number_at(node.named_child(0)?, text, depth),
            "unary_expression" | "unary_operator" => {
                let operand = node
                    .child_by_field_name("operand")
                    .or_else(|| node.child_by_field_name("argument"))
                    .or_else(|| node.named_child(0))?;
                let value = self.number_at(operand, text, depth)?;
                match node.child(0).map(|child| text_of(child, text)) {
                    Some("-") => Some(-value),
                    Some("+") => Some(value),
                    _ => None,
                }
            }
            "binary_expression" | "binary_operator" => {
                let left = self.number_at(node.child_by_field_name("left")?, text, depth)?;
                let right = self.number_at(node.child_by_field_name("right")?, text, depth)?;
                let operator = node
                    .child_by_field_name("operator")
                    .or_else(|| node.child(1))
                    .map(|operator| text_of(operator, text))?;
                match operator {
                    "+" => Some(left + right),
                    "-" => Some(left - right),
                    "*" => Some(left * right),
                    "/" | "//" if right != 0.0 => Some(left / right),
                    _ => None,
                }
            }
            "identifier" | "field_access" | "attribute" | "scoped_identifier"
                if depth < MAX_BINDING_DEPTH =>
            {
                let bound = self.bound(node, text)?;
                self.number_at(bound, self.text, depth + 1)
            }
            _ => None,
        }
    }

    /// A duration in milliseconds: a number in `default_ms` units, or a duration built with its
    /// own unit (`Duration.ofSeconds(5)`, `Duration::from_millis(10)`, `timedelta(seconds=1)`,
    /// `TimeUnit.SECONDS.toMillis(5)`), or a name bound to either.
    pub fn duration_ms(&self, node: Node<'_>, text: &str, default_ms: f64) -> Option<f64> {
        self.duration_at(node, text, default_ms, 0)
    }

    fn duration_at(&self, node: Node<'_>, text: &str, default_ms: f64, depth: u8) -> Option<f64> {
        if let Some(value) = self.constructed_duration(node, text, depth) {
            return Some(value);
        }
        match node.kind() {
            "identifier" | "field_access" | "attribute" | "scoped_identifier"
                if depth < MAX_BINDING_DEPTH =>
            {
                match self.bound(node, text) {
                    Some(bound) => self.duration_at(bound, self.text, default_ms, depth + 1),
                    // `Duration.ZERO`, `Duration::ZERO`.
                    None => match last_name(node, text)? {
                        "ZERO" => Some(0.0),
                        _ => None,
                    },
                }
            }
            _ => Some(self.number_at(node, text, depth)? * default_ms),
        }
    }

    /// A duration built by a call that names its unit.
    fn constructed_duration(&self, node: Node<'_>, text: &str, depth: u8) -> Option<f64> {
        let (callee, arguments) = match node.kind() {
            // Java `Duration.ofSeconds(5)`, `TimeUnit.SECONDS.toMillis(5)`.
            "method_invocation" => (
                node.child_by_field_name("name")?,
                node.child_by_field_name("arguments")?,
            ),
            // Python `timedelta(seconds=5)`, Rust `Duration::from_secs(5)`.
            "call" | "call_expression" => (
                node.child_by_field_name("function")?,
                node.child_by_field_name("arguments")?,
            ),
            _ => return None,
        };
        let name = last_name(callee, text)?;
        let mut cursor = arguments.walk();
        let arguments: Vec<Node> = arguments
            .named_children(&mut cursor)
            .filter(|argument| argument.kind() != "comment")
            .collect();
        let first = |unit_ms: f64| -> Option<f64> {
            Some(self.number_at(*arguments.first()?, text, depth)? * unit_ms)
        };
        match name {
            "ofNanos" | "from_nanos" => first(1e-6),
            "ofMicros" | "from_micros" => first(1e-3),
            "ofMillis" | "from_millis" => first(1.0),
            "ofSeconds" | "from_secs" | "from_secs_f32" | "from_secs_f64" => first(1000.0),
            "ofMinutes" | "from_mins" => first(60_000.0),
            "ofHours" | "from_hours" => first(3_600_000.0),
            "ofDays" => first(86_400_000.0),
            // Rust `Duration::new(secs, nanos)`.
            "new" if last_name(callee_path(callee)?, text) == Some("Duration") => {
                let seconds = self.number_at(*arguments.first()?, text, depth)?;
                let nanos = match arguments.get(1) {
                    Some(nanos) => self.number_at(*nanos, text, depth)?,
                    None => 0.0,
                };
                Some(seconds * 1000.0 + nanos * 1e-6)
            }
            // Java `TimeUnit.SECONDS.toMillis(5)` and friends.
            "toMillis" | "toNanos" | "toMicros" | "toSeconds" => {
                let unit = node.child_by_field_name("object")?;
                first(unit_ms(text_of(unit, text))?)
            }
            "timedelta" => {
                let mut total = 0.0;
                let positional = [86_400_000.0, 1000.0, 1e-3, 1.0, 60_000.0, 3_600_000.0];
                for (position, argument) in arguments.iter().enumerate() {
                    if argument.kind() == "keyword_argument" {
                        let key = text_of(argument.child_by_field_name("name")?, text);
                        let value = argument.child_by_field_name("value")?;
                        let unit = match key {
                            "days" => 86_400_000.0,
                            "seconds" => 1000.0,
                            "microseconds" => 1e-3,
                            "milliseconds" => 1.0,
                            "minutes" => 60_000.0,
                            "hours" => 3_600_000.0,
                            "weeks" => 604_800_000.0,
                            _ => return None,
                        };
                        total += self.number_at(value, text, depth)? * unit;
                    } else {
                        total +=
                            self.number_at(*argument, text, depth)? * positional.get(position)?;
                    }
                }
                Some(total)
            }
            _ => None,
        }
    }
}

/// The path part of a callee: `Duration` of `Duration::new`.
fn callee_path(callee: Node<'_>) -> Option<Node<'_>> {
    callee
        .child_by_field_name("path")
        .or_else(|| callee.child_by_field_name("object"))
}

/// Milliseconds per unit named by a Java `TimeUnit` or `ChronoUnit` constant (or a Python or
/// Rust spelling of one): `TimeUnit.SECONDS`, `MILLISECONDS`, `ChronoUnit.MINUTES`.
pub(crate) fn unit_ms(name: &str) -> Option<f64> {
    let name = name.rsplit(['.', ':']).next()?.to_ascii_uppercase();
    let units = [
        ("NANO", 1e-6),
        ("MICRO", 1e-3),
        ("MILLI", 1.0),
        ("SECOND", 1000.0),
        ("MINUTE", 60_000.0),
        ("HOUR", 3_600_000.0),
        ("DAY", 86_400_000.0),
    ];
    units
        .iter()
        .find(|(stem, _)| name.starts_with(stem))
        .map(|(_, ms)| *ms)
}

/// Milliseconds per unit of a catalogue entry's `unit` setting.
pub(crate) fn default_unit_ms(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1e-6),
        "us" => Some(1e-3),
        "ms" => Some(1.0),
        "s" => Some(1000.0),
        "min" => Some(60_000.0),
        _ => None,
    }
}

fn parse_integer(literal: &str) -> Option<f64> {
    let cleaned: String = literal.chars().filter(|c| *c != '_').collect();
    let lower = cleaned.to_ascii_lowercase();
    // Java's `L`, Rust's `u64`, `i32`, `usize`.
    let digits = strip_rust_suffix(lower.trim_end_matches('l'));
    let (radix, body) = if let Some(hex) = digits.strip_prefix("0x") {
        (16, hex)
    } else if let Some(binary) = digits.strip_prefix("0b") {
        (2, binary)
    } else if let Some(octal) = digits.strip_prefix("0o") {
        (8, octal)
    } else {
        (10, digits)
    };
    u64::from_str_radix(body, radix)
        .ok()
        .map(|value| value as f64)
}

fn strip_rust_suffix(literal: &str) -> &str {
    for suffix in [
        "usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8",
    ] {
        if let Some(stripped) = literal.strip_suffix(suffix) {
            return stripped;
        }
    }
    literal
}

fn parse_float(literal: &str) -> Option<f64> {
    let cleaned: String = literal.chars().filter(|c| *c != '_').collect();
    let trimmed = cleaned
        .trim_end_matches("f64")
        .trim_end_matches("f32")
        .trim_end_matches(['f', 'F', 'd', 'D']);
    trimmed.parse().ok()
}

/// The characters of a string literal, without quotes and prefixes: the named children that
/// hold text (Java `string_fragment`, Python and Rust `string_content`), or none for an f-string
/// or anything that is not a literal.
pub(crate) fn string_value(node: Node<'_>, text: &str) -> Option<String> {
    match node.kind() {
        "string_literal" | "string" | "raw_string_literal" => {
            let mut cursor = node.walk();
            let mut value = String::new();
            for child in node.named_children(&mut cursor) {
                match child.kind() {
                    "string_fragment" | "string_content" | "escape_sequence" => {
                        value.push_str(text_of(child, text))
                    }
                    "string_start" | "string_end" => {}
                    _ => return None,
                }
            }
            Some(value)
        }
        _ => None,
    }
}

/// A host named by a string: the host of a URL (`https://example.com/x`), of `host:port`, or a
/// bare IPv4 address; `None` when the string names no host.
pub(crate) fn host_of(value: &str) -> Option<(&str, Option<u32>)> {
    let value = value.trim();
    let authority = match value.split_once("://") {
        Some((scheme, rest)) if !scheme.is_empty() && scheme.chars().all(is_scheme_char) => {
            rest.split(['/', '?', '#']).next()?
        }
        Some(_) => return None,
        None => value,
    };
    let authority = authority.rsplit('@').next()?;
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => {
            let (host, rest) = bracketed.split_once(']')?;
            (host, rest.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host, Some(port)),
            Some(_) => return None,
            None => (authority, None),
        },
    };
    let port = match port {
        Some(port) => Some(port.parse::<u32>().ok()?),
        None => None,
    };
    let is_host = if value.contains("://") {
        !host.is_empty()
    } else {
        // Without a scheme only an address with a port, or an IPv4 address, surely names a host:
        // `example.com` alone could as well be a file or a class name.
        is_ipv4(host) || port.is_some() && (is_local(host) || is_domain(host))
    };
    if !is_host {
        return None;
    }
    Some((host, port))
}

/// A dotted name ending in an alphabetic top-level domain: `example.com`, `db.internal.net`.
fn is_domain(host: &str) -> bool {
    host.contains('.')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && host
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
}

fn is_scheme_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.'
}

fn is_ipv4(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4 && parts.iter().all(|part| part.parse::<u8>().is_ok())
}

/// Hosts that do not leave the machine: connecting to one is not a remote dependency.
pub(crate) fn is_local(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host.starts_with("127.")
        || host == "0.0.0.0"
        || host == "::1"
        || host == "::"
        || host.is_empty()
        // Reserved for documentation and tests (RFC 2606, RFC 6761): never reached.
        || host.ends_with(".test")
        || host.ends_with(".invalid")
        || host.ends_with(".example")
}

/// The domains reserved as examples (RFC 2606): `example.com`, `www.example.org`. A test names
/// one as data (a request built and inspected, a URL parsed); a call that connects to one is
/// still a remote connection, which [`is_local`] decides.
pub(crate) fn is_placeholder(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    ["example.com", "example.net", "example.org"]
        .iter()
        .any(|domain| {
            host.strip_suffix(domain)
                .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_floats_of_every_language_parse() {
        assert_eq!(parse_integer("1_000L"), Some(1000.0));
        assert_eq!(parse_integer("0x10"), Some(16.0));
        assert_eq!(parse_integer("250u64"), Some(250.0));
        assert_eq!(parse_integer("0b101"), Some(5.0));
        assert_eq!(parse_float("0.5f"), Some(0.5));
        assert_eq!(parse_float("1e3"), Some(1000.0));
        assert_eq!(parse_float("2.5f64"), Some(2.5));
    }

    #[test]
    fn units_are_read_from_their_names() {
        assert_eq!(unit_ms("TimeUnit.MILLISECONDS"), Some(1.0));
        assert_eq!(unit_ms("SECONDS"), Some(1000.0));
        assert_eq!(unit_ms("ChronoUnit.MINUTES"), Some(60_000.0));
        assert_eq!(unit_ms("TimeUnit.FOO"), None);
    }

    #[test]
    fn hosts_are_found_in_urls_authorities_and_addresses() {
        assert_eq!(
            host_of("https://example.com/data"),
            Some(("example.com", None))
        );
        assert_eq!(host_of("example.com:80"), Some(("example.com", Some(80))));
        assert_eq!(host_of("10.1.1.1"), Some(("10.1.1.1", None)));
        assert_eq!(host_of("localhost:8080"), Some(("localhost", Some(8080))));
        assert_eq!(
            host_of("http://127.0.0.1:9000/x"),
            Some(("127.0.0.1", Some(9000)))
        );
        assert_eq!(host_of("hello world"), None);
        assert_eq!(host_of("a.txt"), None);
        assert_eq!(host_of("java.lang.String"), None);
        assert_eq!(host_of("key:value"), None);
    }

    #[test]
    fn local_hosts_are_recognised() {
        assert!(is_local("localhost"));
        assert!(is_local("127.0.0.1"));
        assert!(is_local("api.test"));
        assert!(!is_local("example.com"));
        assert!(is_placeholder("www.Example.org"));
        assert!(!is_placeholder("notexample.com"));
        assert!(!is_placeholder("example.community"));
        assert!(!is_local("10.1.1.1"));
    }
}
