//! Clock differences and the hosts a connection goes to: what a tight bound on elapsed time and a
//! request to a host outside the machine are made of, read from the code and the names it binds.

use tree_sitter::Node;

use super::{Facts, hosts, last_name, text_of};

/// How deep names are followed to the expression they hold (`elapsed = end - start`, `end =
/// time.time()`).
const MAX_DEPTH: u8 = 3;

/// Calls that read a clock, by their last name.
const CLOCK_READS: [&str; 14] = [
    "currentTimeMillis",
    "nanoTime",
    "now",
    "time",
    "monotonic",
    "perf_counter",
    "monotonic_ns",
    "perf_counter_ns",
    "time_ns",
    "default_timer",
    "instant",
    "utcnow",
    "Instant",
    "clock",
];

impl Facts<'_> {
    /// When `node` is the difference of two readings of a clock (`System.currentTimeMillis() -
    /// start`, `time.monotonic() - t0`, `start.elapsed()`, `Duration.between(a, b).toMillis()`),
    /// or a name bound to one: how many milliseconds one unit of it is, for a bare number it is
    /// compared with (a Rust `Duration` compared with a `Duration` has its own unit).
    pub fn clock_difference_unit(&self, node: Node<'_>, text: &str) -> Option<f64> {
        self.difference_at(node, text, 0)
    }

    fn difference_at(&self, node: Node<'_>, text: &str, depth: u8) -> Option<f64> {
        if !self.step() {
            return None;
        }
        let code = text_of(node, text);
        match node.kind() {
            "identifier" | "field_access" | "attribute" if depth < MAX_DEPTH => {
                let bound = self.binding(last_name(node, text)?)?;
                self.difference_at(bound, self.text, depth + 1)
            }
            "parenthesized_expression" => self.difference_at(node.named_child(0)?, text, depth),
            "binary_expression" | "binary_operator" => {
                let operator = node
                    .child_by_field_name("operator")
                    .map(|operator| text_of(operator, text))?;
                let left = node.child_by_field_name("left")?;
                let right = node.child_by_field_name("right")?;
                match operator {
                    "-" if self.reads_clock(left, text, depth)
                        || self.reads_clock(right, text, depth) =>
                    {
                        Some(self.unit_of(left, text, depth))
                    }
                    // `(end - start) / 1_000_000`, `elapsed * 1000`.
                    "/" | "*" => {
                        let unit = self.difference_at(left, text, depth)?;
                        let factor = self.number(right, text)?;
                        match operator {
                            "/" if factor != 0.0 => Some(unit * factor),
                            "*" if factor != 0.0 => Some(unit / factor),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            }
            _ => {
                // A call on a difference: `.toMillis()`, `.as_millis()`, `.total_seconds()`.
                let converted = converted_unit(code);
                let elapsed = code.contains("elapsed")
                    || code.contains("Duration.between")
                    || code.contains("duration_since")
                    || code.contains("getTime()") && code.to_lowercase().contains("watch");
                if elapsed {
                    return Some(converted.unwrap_or(default_unit(code)));
                }
                let receiver = receiver_of_call(node)?;
                converted?;
                self.difference_at(receiver, text, depth)
                    .map(|unit| converted.unwrap_or(unit))
            }
        }
    }

    /// Whether an expression reads a clock: a call named like one, or a name bound to one.
    fn reads_clock(&self, node: Node<'_>, text: &str, depth: u8) -> bool {
        if !self.step() {
            return false;
        }
        let code = text_of(node, text);
        if is_clock_read(code) {
            return true;
        }
        depth < MAX_DEPTH
            && matches!(node.kind(), "identifier" | "field_access" | "attribute")
            && last_name(node, text)
                .and_then(|name| self.binding(name))
                .is_some_and(|bound| self.reads_clock(bound, self.text, depth + 1))
    }

    /// The unit of a clock reading or of the name it is kept in.
    fn unit_of(&self, node: Node<'_>, text: &str, depth: u8) -> f64 {
        let code = text_of(node, text);
        if is_clock_read(code) || depth >= MAX_DEPTH || !self.step() {
            return default_unit(code);
        }
        match last_name(node, text).and_then(|name| self.binding(name)) {
            Some(bound) => self.unit_of(bound, self.text, depth + 1),
            None => default_unit(code),
        }
    }
}

impl Facts<'_> {
    /// Whether a receiver holds a thread or a process: bound to `new Thread(...)` or a thread class
    /// of the test's own (`new ReturnerThread(...)`), `Thread.ofPlatform()...`, Python's
    /// `threading.Thread(...)`, `Timer(...)`, `multiprocessing.Process(...)`.
    pub fn holds_thread(&self, node: Node<'_>, text: &str) -> bool {
        let Some(bound) = last_name(node, text).and_then(|name| self.binding(name)) else {
            return false;
        };
        let code = text_of(bound, self.text).trim_start();
        let constructed = code.strip_prefix("new ").unwrap_or(code);
        let class = constructed
            .split(['(', '<', ' '])
            .next()
            .unwrap_or("")
            .rsplit('.')
            .next()
            .unwrap_or("");
        code.contains('(')
            && (["Thread", "Process", "Timer"]
                .iter()
                .any(|kind| class.ends_with(kind))
                || code.starts_with("Thread.of"))
    }

    /// The string a name is bound to.
    fn bound_string(&self, node: Node<'_>, text: &str) -> Option<String> {
        let bound = self.binding(last_name(node, text)?)?;
        hosts::string_value(bound, self.text)
    }
}

/// The object a method is called on: Java's `a` of `a.m()`, Python's of `a.m()`, Rust's of
/// `a.m()`; none for a plain function call.
pub(super) fn receiver_of_call(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "method_invocation" => node.child_by_field_name("object"),
        "call" | "call_expression" => {
            let callee = node.child_by_field_name("function")?;
            callee
                .child_by_field_name("object")
                .or_else(|| callee.child_by_field_name("value"))
        }
        _ => None,
    }
}

fn is_clock_read(code: &str) -> bool {
    let code = code.trim();
    let Some(call) = code.strip_suffix("()") else {
        return false;
    };
    let name = call.rsplit(['.', ':']).next().unwrap_or(call);
    CLOCK_READS.contains(&name)
}

/// The unit of a clock's own reading: nanoseconds for `nanoTime` and the `_ns` functions,
/// seconds for Python's `time.time()` and its kin, milliseconds otherwise.
fn default_unit(code: &str) -> f64 {
    if code.contains("nanoTime") || code.contains("_ns(") {
        1e-6
    } else if code.contains("currentTimeMillis") || code.contains("Millis") {
        1.0
    } else if code.contains("time()")
        || code.contains("monotonic(")
        || code.contains("perf_counter(")
        || code.contains("default_timer(")
    {
        1000.0
    } else {
        1.0
    }
}

/// The unit a conversion at the end of the code gives: `toMillis()`, `as_secs_f64()`.
fn converted_unit(code: &str) -> Option<f64> {
    let tail = code.trim().rsplit('.').next().unwrap_or("");
    let name = tail.split('(').next().unwrap_or("");
    match name {
        "toMillis" | "as_millis" | "getTime" => Some(1.0),
        "toNanos" | "as_nanos" => Some(1e-6),
        "toMicros" | "as_micros" => Some(1e-3),
        "toSeconds" | "getSeconds" | "as_secs" | "as_secs_f64" | "as_secs_f32"
        | "total_seconds" => Some(1000.0),
        _ => None,
    }
}

/// The host a connection goes to when the code names one outside the machine: a string (a URL,
/// `host:port`, an address), a name bound to one, a value built from one (`new URL(...)`,
/// `URI.create(...)`, `"...".parse()`, a `(host, port)` tuple). Example domains count: a call
/// that reaches one leaves the machine.
impl Facts<'_> {
    pub fn remote_host(&self, node: Node<'_>, text: &str) -> Option<String> {
        self.remote_at(node, text, 0)
    }

    fn remote_at(&self, node: Node<'_>, text: &str, depth: u8) -> Option<String> {
        if !self.step() {
            return None;
        }
        if let Some(value) = hosts::string_value(node, text) {
            // A bare name handed to a call that connects (`connector.connect("github.com",
            // stream)`) names a host as much as a URL does.
            let authority = format!("{value}:1");
            let (host, _) = hosts::host_of(&value).or_else(|| {
                hosts::is_public_domain(&value)
                    .then(|| hosts::host_of(&authority))
                    .flatten()
            })?;
            return (!hosts::is_local(host) && hosts::is_reachable(host)).then(|| host.to_string());
        }
        if depth >= MAX_DEPTH {
            return None;
        }
        match node.kind() {
            "identifier" | "field_access" | "attribute" => {
                let bound = self.binding(last_name(node, text)?)?;
                self.remote_at(bound, self.text, depth + 1)
            }
            // A `(host, port)` tuple: the host alone names no host until the port is beside it.
            "tuple" | "tuple_expression" => {
                let first = node.named_child(0)?;
                let host =
                    hosts::string_value(first, text).or_else(|| self.bound_string(first, text))?;
                let authority = format!("{host}:1");
                let (host, _) = hosts::host_of(&authority)?;
                (!hosts::is_local(host)).then(|| host.to_string())
            }
            "argument_list" | "arguments" => {
                let first = node.named_child(0)?;
                self.remote_at(first, text, depth + 1)
            }
            "object_creation_expression" | "call" | "call_expression" | "method_invocation" => {
                // A fake or a mock of an address reaches nothing.
                let lower = text_of(node, text).to_ascii_lowercase();
                if ["fake", "mock", "stub", "dummy"]
                    .iter()
                    .any(|word| lower.contains(word))
                {
                    return None;
                }
                let arguments = node.child_by_field_name("arguments")?;
                if let Some(found) = arguments
                    .named_child(0)
                    .and_then(|first| self.remote_at(first, text, depth + 1))
                {
                    return Some(found);
                }
                // `"192.0.2.1:81".parse()`: the receiver holds it.
                self.remote_at(receiver_of_call(node)?, text, depth + 1)
            }
            "parenthesized_expression" | "reference_expression" | "try_expression" => {
                self.remote_at(node.named_child(0)?, text, depth)
            }
            _ => None,
        }
    }
}
