//! The likely category of a flaky test from words: failure messages of test reports, and the
//! reasons developers gave when they marked a test.
//!
//! Rules run from specific to general, and each blanks out what it matched, so that
//! "Read timed out" from a socket counts as network and not also as a timeout. Categories
//! that failure messages rarely name (order dependency, unordered collections, floating point)
//! have no machine rule: guessing them from an assertion message would be noise.

use std::sync::LazyLock;

use regex::Regex;

use crate::category::Category;

/// The categories a failure message (its type, message and stack trace) names.
pub fn in_failure(text: &str) -> Vec<Category> {
    apply(&FAILURE_RULES, text)
}

/// The categories a developer's reason or comment names: the failure rules, then plain words.
pub fn in_reason(text: &str) -> Vec<Category> {
    let mut categories = apply(&FAILURE_RULES, text);
    categories.extend(apply(&REASON_RULES, text));
    categories.sort();
    categories.dedup();
    categories
}

type Rules = Vec<(Regex, Category)>;

fn rules(table: &[(&str, Category)]) -> Rules {
    table
        .iter()
        .map(|&(pattern, category)| {
            let regex = Regex::new(&format!("(?i){pattern}")).expect("the pattern compiles");
            (regex, category)
        })
        .collect()
}

static FAILURE_RULES: LazyLock<Rules> = LazyLock::new(|| {
    rules(&[
        // A fixed port taken by another test or process.
        (
            r"address already in use|\bbindexception\b|\beaddrinuse\b|\baddrinuse\b|failed to bind",
            Category::Network,
        ),
        (
            concat!(
                r"connection refused|\bconnectexception\b|\beconnrefused\b|connection reset|",
                r"\beconnreset\b|\bunknownhostexception\b|name or service not known|",
                r"temporary failure in name resolution|nodename nor servname|could not resolve host|",
                r"network is unreachable|no route to host|\bsockettimeoutexception\b|",
                r"\bsocket\.timeout\b|(read|connect|connection) timed out|\bsslhandshakeexception\b|",
                r"\bconnectionerror\b|\bconnecttimeout(error)?\b|max retries exceeded with url|",
                r"broken pipe|503 service unavailable|502 bad gateway"
            ),
            Category::Network,
        ),
        // Awaitility's condition timeout is a wait on a condition that did not come in time.
        (
            r"\bconditiontimeoutexception\b|was not fulfilled within",
            Category::AsyncWait,
        ),
        (
            concat!(
                r"\bdeadlock|\bconcurrentmodificationexception\b|data race|race condition|",
                r"\bpoisonerror\b|poisoned lock|threadsanitizer|\billegalmonitorstateexception\b"
            ),
            Category::Concurrency,
        ),
        (
            r"too many open files|\bemfile\b|unable to create (new )?native thread|leak detected|resourcewarning: unclosed",
            Category::ResourceLeak,
        ),
        (
            concat!(
                r"no such file or directory|\bfilenotfound(exception|error)\b|\bnosuchfileexception\b|",
                r"\bfilealreadyexistsexception\b|\bfileexistserror\b|\bdirectorynotemptyexception\b|",
                r"directory not empty|\baccessdeniedexception\b|permission denied|\bpermissionerror\b|",
                r"read-only file system|no space left on device|\benoent\b"
            ),
            Category::Io,
        ),
        (
            r"timed out|times out|\btimeout(exception|error)?\b|deadline exceeded|\btesttimedoutexception\b",
            Category::Timeout,
        ),
    ])
});

static REASON_RULES: LazyLock<Rules> = LazyLock::new(|| {
    rules(&[
        (
            r"\brac(y|es?|ing)\b|\bthreads?\b|concurren|\bparallel\b|\block(s|ing)?\b",
            Category::Concurrency,
        ),
        (
            r"\bnetwork\b|\bconnection\b|\bdns\b|\bsocket\b|\bports?\b|\bproxy\b|\bhttp\b",
            Category::Network,
        ),
        (
            r"\bsleeps?\b|\bwait(s|ing)?\b|\basync\b|\bpoll(s|ing)?\b|too slow to start",
            Category::AsyncWait,
        ),
        (
            r"time ?zones?|daylight saving|\bdst\b|midnight|\bclock\b|\bleap\b|\bcalendar\b",
            Category::Time,
        ),
        (
            r"test order|run order|order[- ]dependen|depends on (the )?order|\bpolluter\b|shared state|\bstatic state\b|\bglobal state\b",
            Category::OrderDependency,
        ),
        (r"\brandom(ness|ly)?\b|\bseed\b", Category::Randomness),
        (
            r"hash order|iteration order|\bunordered\b|\bset order\b|\bdict order\b",
            Category::UnorderedCollection,
        ),
        (
            r"\bwindows\b|\bmacos\b|\bos x\b|\blinux\b|\bplatform\b|\barm64\b",
            Category::Platform,
        ),
        (
            r"file ?system|\bdisk\b|temp(orary)? (dir|directory|file)",
            Category::Io,
        ),
        (
            r"floating[- ]point|\bfloat\b|\bprecision\b|\brounding\b",
            Category::FloatingPoint,
        ),
        (
            r"\bleak(s|ed|ing)?\b|file descriptors?",
            Category::ResourceLeak,
        ),
    ])
});

fn apply(rules: &Rules, text: &str) -> Vec<Category> {
    let mut text = text.to_string();
    let mut categories = Vec::new();
    for (regex, category) in rules {
        let found: Vec<std::ops::Range<usize>> =
            regex.find_iter(&text).map(|found| found.range()).collect();
        if found.is_empty() {
            continue;
        }
        categories.push(*category);
        for range in found {
            text.replace_range(range.clone(), &" ".repeat(range.len()));
        }
    }
    categories.sort();
    categories.dedup();
    categories
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_messages_name_their_cause() {
        let cases: [(&str, &[Category]); 8] = [
            (
                "java.net.ConnectException: Connection refused (Connection refused)",
                &[Category::Network],
            ),
            (
                "java.net.BindException: Address already in use",
                &[Category::Network],
            ),
            (
                "java.net.SocketTimeoutException: Read timed out",
                &[Category::Network],
            ),
            (
                "org.junit.runners.model.TestTimedOutException: test timed out after 2000 milliseconds",
                &[Category::Timeout],
            ),
            ("Failed: Timeout >5.0s", &[Category::Timeout]),
            (
                "org.awaitility.core.ConditionTimeoutException: Condition was not fulfilled within 5 seconds.",
                &[Category::AsyncWait],
            ),
            (
                "java.util.ConcurrentModificationException\n\tat java.util.HashMap$HashIterator",
                &[Category::Concurrency],
            ),
            (
                "assertion `left == right` failed\n  left: 4\n right: 5",
                &[],
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(in_failure(text), expected, "{text}");
        }
    }

    #[test]
    fn stack_frames_do_not_look_like_timeouts() {
        assert!(
            in_failure("at org.junit.internal.runners.statements.FailOnTimeout.evaluate")
                .is_empty()
        );
    }

    #[test]
    fn reasons_use_plain_words_too() {
        assert_eq!(
            in_reason("flaky: races with the eviction thread"),
            [Category::Concurrency]
        );
        assert_eq!(in_reason("fails around midnight UTC"), [Category::Time]);
        assert_eq!(in_reason("intermittent timeout on CI"), [Category::Timeout]);
        assert!(in_reason("needs a licence server").is_empty());
    }
}
