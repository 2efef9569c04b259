//! Reads the values a signal depends on from the syntax tree: numbers (with simple arithmetic and
//! the file's own constants), durations with their units, ports, and the hosts that strings name.
//! A sleep of zero is not a wait, a 30-second timeout is not tight and a port 0 is the cure for
//! fixed ports; none of that shows in the words of the code, all of it in its values.

use std::cell::{Cell, RefCell};
use std::ops::Range;

use rustc_hash::{FxHashMap, FxHashSet};
use tree_sitter::Node;

mod clock;
mod hosts;
mod numbers;

pub(crate) use hosts::{host_of, is_local, is_placeholder, string_value};
pub(crate) use numbers::{default_unit_ms, unit_ms};
use numbers::{parse_float, parse_integer};

/// How deep names are followed to their values (`a = b; b = 5`).
const MAX_BINDING_DEPTH: u8 = 4;

/// How many nodes the reading of one match's values may visit ([`Facts::start_reading`]): the
/// evaluations recurse into operands, parentheses, receivers and bound names, and a sum of
/// 20,000 operands inside a `sleep` overflowed the stack. Past it a value is unknown.
const MAX_STEPS: u32 = 256;

/// What the catalogue's fact queries found in one file: which names hold which values, which
/// names are mocks, and which hold hash-ordered collections.
#[derive(Default)]
pub(crate) struct Facts<'tree> {
    /// The values bound to each name in the file, in file order, each with the range of the
    /// outermost function it is bound in (`None` for a field, a constant, a module's name): a
    /// name is looked up in the function being read, then outside every function
    /// ([`Facts::binding`]), so that `url` in one test is never another test's `url`.
    pub bindings: FxHashMap<&'tree str, Vec<Bound<'tree>>>,
    pub mocks: FxHashSet<&'tree str>,
    pub hash_collections: FxHashSet<&'tree str>,
    /// The text the bindings' nodes belong to.
    pub text: &'tree str,
    /// Every name looked up, with where the match that looked it up lies in the file (set in
    /// `reading_at` before each): an edit that changes a fact no match outside it read leaves
    /// the rest of the file's hits as they were ([`rescan`](mod@super::rescan)).
    pub reads: RefCell<Vec<(usize, String)>>,
    pub reading_at: Cell<usize>,
    /// Nodes visited reading the current match's values, up to [`MAX_STEPS`].
    pub steps: Cell<u32>,
}

/// A value bound to a name, with the range of the outermost function it is bound in.
pub(crate) type Bound<'tree> = (Option<Range<usize>>, Node<'tree>);

/// The text of a node, or "" if its range is not in `text`.
pub(crate) fn text_of<'a>(node: Node<'_>, text: &'a str) -> &'a str {
    text.get(node.byte_range()).unwrap_or("")
}

/// The last name of a path or member access: `Thread` of `java.lang.Thread`, `sleep` of
/// `time.sleep`, `timeout` of `self.timeout`; the text itself for an identifier.
pub(crate) fn last_name<'a>(node: Node<'_>, text: &'a str) -> Option<&'a str> {
    // A loop, not recursion: parentheses can nest as deep as the file is long.
    let mut node = node;
    loop {
        node = match node.kind() {
            "identifier" | "field_identifier" | "type_identifier" => {
                return Some(text_of(node, text));
            }
            // Java `a.b`, Python `a.b`, Rust `a::b` and `a.b`.
            "field_access"
            | "attribute"
            | "scoped_identifier"
            | "field_expression"
            | "scoped_type_identifier" => node
                .child_by_field_name("field")
                .or_else(|| node.child_by_field_name("attribute"))
                .or_else(|| node.child_by_field_name("name"))?,
            // `&map`, `(map)`.
            "reference_expression" | "parenthesized_expression" => node
                .child_by_field_name("value")
                .or_else(|| node.named_child(0))?,
            _ => return None,
        };
    }
}

impl<'tree> Facts<'tree> {
    /// Starts reading the values of a match at `at` in the file: lookups are made from there,
    /// and the reading gets its own [`MAX_STEPS`].
    pub fn start_reading(&self, at: usize) {
        self.reading_at.set(at);
        self.steps.set(0);
    }

    /// Counts one node visited; false once the current match has visited [`MAX_STEPS`].
    fn step(&self) -> bool {
        let steps = self.steps.get();
        self.steps.set(steps.saturating_add(1));
        steps < MAX_STEPS
    }

    /// The value bound to the name `node` stands for, if any.
    fn bound(&self, node: Node<'_>, text: &str) -> Option<Node<'tree>> {
        self.binding(last_name(node, text)?)
    }

    /// The value bound to `name` where the match being read lies ([`Facts::reading_at`]): the
    /// last binding before it in the same function (the first of that function when it is used
    /// before it is bound), else the first bound outside every function.
    pub fn binding(&self, name: &str) -> Option<Node<'tree>> {
        self.read(name);
        let bound = self.bindings.get(name)?;
        let at = self.reading_at.get();
        let in_function = bound
            .iter()
            .filter(|(scope, _)| scope.as_ref().is_some_and(|scope| scope.contains(&at)));
        let before = in_function
            .clone()
            .rfind(|(_, node)| node.start_byte() <= at);
        before
            .or_else(|| in_function.clone().next())
            .or_else(|| bound.iter().find(|(scope, _)| scope.is_none()))
            .map(|(_, node)| *node)
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

    /// Whether a receiver is a mock or a fake: bound to a mock constructor, annotated as one, or
    /// named so (`mockExecutor`, `fakeClock`);
    /// or made by a mock (`scheduler.createWorker()` of a virtual-time `scheduler`, directly or
    /// through a name bound to it).
    pub fn is_mock(&self, node: Node<'_>, text: &str) -> bool {
        self.is_mock_at(node, text, 0)
    }

    fn is_mock_at(&self, node: Node<'_>, text: &str, depth: u8) -> bool {
        if depth > 3 || !self.step() {
            return false;
        }
        if let Some(maker) = clock::receiver_of_call(node) {
            return self.is_mock_at(maker, text, depth + 1);
        }
        let Some(name) = Self::receiver_name(node, text) else {
            return false;
        };
        self.read(name);
        let lower = name.to_ascii_lowercase();
        if self.mocks.contains(name) || lower.contains("mock") || lower.contains("fake") {
            return true;
        }
        self.binding(name)
            .and_then(clock::receiver_of_call)
            .is_some_and(|maker| self.is_mock_at(maker, self.text, depth + 1))
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
        if !self.step() {
            return None;
        }
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
        if !self.step() {
            return None;
        }
        if let Some(value) = self.constructed_duration(node, text, depth) {
            return Some(value);
        }
        match node.kind() {
            "identifier" | "field_access" | "attribute" | "scoped_identifier"
                if depth < MAX_BINDING_DEPTH =>
            {
                match self.bound(node, text) {
                    Some(bound) => self.duration_at(bound, self.text, default_ms, depth + 1),
                    // `Duration.ZERO`, `Duration::ZERO`, Awaitility's `FIVE_HUNDRED_MILLISECONDS`.
                    None => match last_name(node, text)? {
                        "ZERO" => Some(0.0),
                        name => spelled_duration_ms(name),
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
            // A test's own helpers named for their unit: crossbeam's `ms(100)`.
            "ofMillis" | "from_millis" | "ms" | "millis" => first(1.0),
            "secs" => first(1000.0),
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

/// A duration spelled out in a constant's name, as Awaitility's `Durations` are:
/// `FIVE_HUNDRED_MILLISECONDS`, `ONE_SECOND`, `TWO_MINUTES`.
fn spelled_duration_ms(name: &str) -> Option<f64> {
    let words: Vec<&str> = name.split('_').collect();
    let (unit, count) = words.split_last()?;
    let unit_ms = match unit.trim_end_matches('S') {
        "MILLISECOND" => 1.0,
        "SECOND" => 1000.0,
        "MINUTE" => 60_000.0,
        _ => return None,
    };
    let mut total = 0.0;
    for word in count {
        total = match *word {
            "HUNDRED" => total * 100.0,
            "THOUSAND" => total * 1000.0,
            _ => {
                let digit = match *word {
                    "ONE" => 1.0,
                    "TWO" => 2.0,
                    "THREE" => 3.0,
                    "FIVE" => 5.0,
                    "TEN" => 10.0,
                    "TWENTY" => 20.0,
                    "THIRTY" => 30.0,
                    "FIFTY" => 50.0,
                    _ => return None,
                };
                total + digit
            }
        };
    }
    (total > 0.0).then_some(total * unit_ms)
}

/// The path part of a callee: `Duration` of `Duration::new`.
fn callee_path(callee: Node<'_>) -> Option<Node<'_>> {
    callee
        .child_by_field_name("path")
        .or_else(|| callee.child_by_field_name("object"))
}

/// The range of the outermost function (method, constructor, function) around a node, `None`
/// outside every function: the scope a binding holds in.
pub(crate) fn function_scope(node: Node<'_>) -> Option<Range<usize>> {
    let mut outermost = None;
    let mut ancestor = node.parent();
    while let Some(current) = ancestor {
        if matches!(
            current.kind(),
            "method_declaration"
                | "constructor_declaration"
                | "function_definition"
                | "function_item"
        ) {
            outermost = Some(current.byte_range());
        }
        ancestor = current.parent();
    }
    outermost
}
