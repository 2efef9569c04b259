//! A generated repository of 1,000 test files holding 10,000 tests (Java, Python and Rust;
//! sleeps, threads, clocks, sockets and plain assertions), the same on every run, for the
//! benchmarks of `flakesense check` and of start-up.

#![allow(dead_code)] // each benchmark uses its own part of this module

use std::fmt::Write as _;
use std::path::Path;

pub const FILES: usize = 1_000;
pub const TESTS_PER_FILE: usize = 10;

/// A small deterministic generator (xorshift64*): the tree is the same on every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const NOUNS: &[&str] = &[
    "order", "account", "invoice", "customer", "session", "cache", "queue", "report", "ledger",
    "token", "payment", "shipment", "profile", "catalog", "message", "job", "server", "worker",
];
const VERBS: &[&str] = &[
    "creates",
    "updates",
    "rejects",
    "loads",
    "saves",
    "expires",
    "retries",
    "sorts",
    "merges",
    "publishes",
    "parses",
    "renders",
    "closes",
    "opens",
    "waits_for",
    "counts",
];

/// Statement lines of a Java test body: plain assertions most of the time, now and then a
/// pattern that flaky tests share.
fn java_body(random: &mut Random, noun: &str) -> String {
    let mut body = String::new();
    let class = capitalise(noun);
    writeln!(
        body,
        "        {class} {noun} = new {class}(\"id-{}\");",
        random.below(1000)
    )
    .unwrap();
    for _ in 0..3 + random.below(6) {
        let line = match random.below(12) {
            0 => "        Thread.sleep(500);".to_string(),
            1 => "        executor.submit(() -> counter.incrementAndGet());".to_string(),
            2 => "        long started = System.currentTimeMillis();".to_string(),
            3 => "        Socket socket = new Socket(\"localhost\", 8080);".to_string(),
            4 => format!(
                "        assertTrue(latch.await({}, TimeUnit.SECONDS));",
                random.below(10)
            ),
            5 => format!(
                "        Map<String, Integer> counts = new HashMap<>();\n        counts.put(\"{noun}\", {});",
                random.below(50)
            ),
            _ => format!(
                "        assertEquals({}, {noun}.{}());",
                random.below(100),
                lower_camel(random.pick(VERBS))
            ),
        };
        body.push_str(&line);
        body.push('\n');
    }
    body
}

fn python_body(random: &mut Random, noun: &str) -> String {
    let mut body = format!("    {noun} = make_{noun}({})\n", random.below(1000));
    for _ in 0..3 + random.below(6) {
        let line = match random.below(12) {
            0 => "    time.sleep(0.5)".to_string(),
            1 => "    worker = threading.Thread(target=job.run)\n    worker.start()".to_string(),
            2 => "    started = datetime.now()".to_string(),
            3 => "    response = requests.get(\"http://example.com/api\")".to_string(),
            4 => format!("    assert random.randint(0, {}) >= 0", random.below(100)),
            _ => format!(
                "    assert {noun}.{}() == {}",
                random.pick(VERBS),
                random.below(100)
            ),
        };
        body.push_str(&line);
        body.push('\n');
    }
    body
}

fn rust_body(random: &mut Random, noun: &str) -> String {
    let mut body = format!(
        "    let {noun} = {}::new({});\n",
        capitalise(noun),
        random.below(1000)
    );
    for _ in 0..3 + random.below(6) {
        let line = match random.below(12) {
            0 => "    std::thread::sleep(std::time::Duration::from_millis(100));".to_string(),
            1 => "    let handle = std::thread::spawn(move || work());\n    handle.join().unwrap();".to_string(),
            2 => "    let started = std::time::Instant::now();".to_string(),
            3 => "    let listener = std::net::TcpListener::bind(\"127.0.0.1:8080\").unwrap();".to_string(),
            4 => "    let map: std::collections::HashMap<u32, u32> = (0..10).map(|i| (i, i)).collect();".to_string(),
            _ => format!(
                "    assert_eq!({noun}.{}(), {});",
                random.pick(VERBS),
                random.below(100)
            ),
        };
        body.push_str(&line);
        body.push('\n');
    }
    body
}

fn capitalise(word: &str) -> String {
    let mut characters = word.chars();
    characters
        .next()
        .map(|first| first.to_uppercase().chain(characters).collect())
        .unwrap_or_default()
}

fn lower_camel(snake: &str) -> String {
    let mut parts = snake.split('_');
    let first = parts.next().unwrap_or_default().to_string();
    parts.fold(first, |mut name, part| {
        name.push_str(&capitalise(part));
        name
    })
}

/// Writes the tree: 40% Java, 30% Python, 30% Rust files, each with its tests.
pub fn generate(root: &Path) {
    let mut random = Random(0x5eed_f1a4_e5e1_u64);
    for file in 0..FILES {
        let noun = random.pick(NOUNS);
        let (path, text) = match file % 10 {
            0..=3 => {
                let class = format!("{}{file}Test", capitalise(noun));
                let mut text = format!(
                    "package com.example.{noun};\n\nimport org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\n\nclass {class} {{\n"
                );
                for test in 0..TESTS_PER_FILE {
                    let name = lower_camel(&format!("{}_{noun}_{test}", random.pick(VERBS)));
                    write!(
                        text,
                        "\n    @Test\n    void {name}() throws Exception {{\n{}    }}\n",
                        java_body(&mut random, noun)
                    )
                    .unwrap();
                }
                text.push_str("}\n");
                (
                    format!("src/test/java/com/example/{noun}/{class}.java"),
                    text,
                )
            }
            4..=6 => {
                let mut text =
                    "import random\nimport threading\nimport time\nfrom datetime import datetime\n\nimport requests\n"
                        .to_string();
                for test in 0..TESTS_PER_FILE {
                    write!(
                        text,
                        "\n\ndef test_{}_{noun}_{test}():\n{}",
                        random.pick(VERBS),
                        python_body(&mut random, noun)
                    )
                    .unwrap();
                }
                (format!("tests/{noun}/test_{noun}_{file}.py"), text)
            }
            _ => {
                let mut text = "use super::*;\n".to_string();
                for test in 0..TESTS_PER_FILE {
                    write!(
                        text,
                        "\n#[test]\nfn {}_{noun}_{test}() {{\n{}}}\n",
                        random.pick(VERBS),
                        rust_body(&mut random, noun)
                    )
                    .unwrap();
                }
                (format!("crates/{noun}/tests/{noun}_{file}.rs"), text)
            }
        };
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}
