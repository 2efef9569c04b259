//! A generated Java test file of 3,000 lines and 200 tests, every fourth one waiting with a
//! sleep, the same on every run: what the language server's benchmarks open.

#![allow(dead_code)] // each benchmark uses its own part of this module

/// Tests in the generated file.
pub const TESTS: usize = 200;

/// Words that test code is made of, for generated tests that do not all look alike.
const WORDS: [&str; 48] = [
    "order", "customer", "invoice", "payment", "cart", "item", "price", "discount", "tax",
    "shipping", "address", "account", "balance", "transfer", "report", "user", "session", "token",
    "cache", "queue", "event", "message", "channel", "server", "client", "request", "response",
    "file", "buffer", "stream", "parser", "config", "setting", "value", "key", "entry", "record",
    "table", "query", "result", "schedule", "timer", "clock", "random", "thread", "worker", "pool",
    "latch",
];

/// A small seeded generator (xorshift64*), so every run builds the same file.
pub struct Words(pub u64);

impl Words {
    pub fn next(&mut self) -> &'static str {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let value = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        WORDS[(value >> 33) as usize % WORDS.len()]
    }

    pub fn camel(&mut self, parts: usize) -> String {
        let mut name = self.next().to_string();
        for _ in 1..parts {
            let word = self.next();
            name.push_str(&word[..1].to_uppercase());
            name.push_str(&word[1..]);
        }
        name
    }
}

/// One generated test of fifteen lines; every fourth one waits with a sleep, as flaky tests do.
pub fn generated_test(words: &mut Words, i: usize) -> String {
    let (a, b, c) = (words.camel(2), words.camel(2), words.camel(3));
    let wait = if i.is_multiple_of(4) {
        "        Thread.sleep(100);\n        assertTrue(latch.await(1, TimeUnit.SECONDS));"
    } else {
        "        assertNotNull(result);\n        assertFalse(result.isEmpty());"
    };
    format!(
        "    @Test\n    void {c}{i}() throws Exception {{\n        // case {i}\n        int {a} = {i};\n        String {b} = \"{a}-{i}\";\n        List<String> result = service.{c}({a}, {b});\n{wait}\n        assertEquals({i}, {a});\n        assertEquals(\"{a}-{i}\", {b});\n        for (String value : result) {{\n            assertNotNull(value);\n        }}\n    }}\n\n"
    )
}

/// The benchmark's test file: 3,000 lines, 200 tests.
pub fn generated_file() -> String {
    let mut words = Words(0x5eed);
    let mut text = String::from(
        "package org.example.bench;\n\nimport java.util.List;\nimport org.junit.jupiter.api.Test;\n\nclass GeneratedTest {\n",
    );
    for i in 0..TESTS {
        text.push_str(&generated_test(&mut words, i));
    }
    text.push_str("}\n");
    text
}
