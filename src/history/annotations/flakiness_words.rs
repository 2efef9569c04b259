//! Whether a text calls a test flaky: the words that say so, and the words shortly before them
//! that turn them around.
//!
//! A reason (a skip marker's arguments and the comments attached to it) mentions flakiness when it
//! says flaky, flake, intermittent, racy, race, timing, nondeterministic, sporadic, unstable or
//! unreliable, unless the words before it in the same clause negate it ("not flaky", "to avoid
//! flakiness"). A comment on its own must say one of the stronger words (flaky, flake,
//! intermittent, racy): "timing" alone says too little there.

use std::sync::LazyLock;

use regex::Regex;

/// How much a text must say to count as calling a test flaky.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strength {
    /// The reason of a skip marker: it already says the test is not run, and why.
    Reason,
    /// A comment on its own.
    Comment,
}

static REASON_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(flak(y|ey|iness|iest|ing|es|e)|intermittent(ly)?|rac(y|es?|ing)|race[ -]conditions?|timing|non-?deterministic(ally)?|sporadic(ally)?|unstable|unreliable)\b",
    )
    .expect("the pattern compiles")
});

static COMMENT_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(flak(y|ey|iness|ing|es|e)|intermittent(ly)?|racy)\b")
        .expect("the pattern compiles")
});

/// Words shortly before a mention that turn it around: "not flaky", "avoids flakiness".
const NEGATIONS: [&str; 14] = [
    "not ",
    "n't ",
    "no longer",
    "non-",
    "non ",
    "never ",
    "avoid",
    "prevent",
    "reduc",
    "without ",
    "less ",
    "fixed",
    "fixes ",
    "to fix",
];

/// Whether a text says the test is flaky (see the module documentation).
pub fn mentions_flakiness(text: &str, strength: Strength) -> bool {
    let words = match strength {
        Strength::Reason => &*REASON_WORDS,
        Strength::Comment => &*COMMENT_WORDS,
    };
    let lowered = text.to_lowercase();
    words.find_iter(&lowered).any(|found| {
        let mut start = found.start().saturating_sub(24);
        while !lowered.is_char_boundary(start) {
            start -= 1;
        }
        let before = &lowered[start..found.start()];
        // Only the same clause counts: "Flaky. Not run on CI" is still flaky.
        let clause = before.rsplit(['.', ';', ':', ',']).next().unwrap_or(before);
        !NEGATIONS.iter().any(|negation| clause.contains(negation))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negations_and_clauses() {
        for text in [
            "flaky",
            "FIXME: flaky on CI",
            "Fails intermittently",
            "Flaky. Not run on CI",
        ] {
            assert!(mentions_flakiness(text, Strength::Comment), "{text}");
        }
        for text in [
            "not flaky",
            "seed the generator to avoid flakiness",
            "isn't flaky anymore",
            "deflaked in #12",
            "timing",
        ] {
            assert!(!mentions_flakiness(text, Strength::Comment), "{text}");
        }
        assert!(mentions_flakiness("timing-dependent", Strength::Reason));
    }
}
