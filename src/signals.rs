//! The catalogue of static flakiness signals: code patterns that research links to each cause of
//! flakiness (Luo et al.'s taxonomy and the studies after it; see the design notes). On projects
//! a model has never seen they carry more information than raw token similarity, and they are
//! the clearest explanation to show a user. Mitigations (mocks) are matched too: they count
//! against flakiness and are never shown.

use std::sync::OnceLock;

use regex::Regex;

use crate::category::Category;
use crate::language::Language;

/// One pattern of the catalogue.
struct Pattern {
    language: Language,
    category: Category,
    /// What the pattern means, shown to users: "fixed sleep".
    name: &'static str,
    regex: &'static str,
}

/// A place where a test's code matches a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalHit {
    pub category: Category,
    pub name: &'static str,
    /// The matched code, e.g. `Thread.sleep(`.
    pub text: String,
    /// Byte offset of the match within the test's code.
    pub offset: usize,
}

use Category::*;
use Language::{Java, Python, Rust};

const fn pattern(
    language: Language,
    category: Category,
    name: &'static str,
    regex: &'static str,
) -> Pattern {
    Pattern {
        language,
        category,
        name,
        regex,
    }
}

/// The catalogue. Extrapolations to languages the studies did not cover are marked [x] in the
/// design notes; they are kept only where measurement showed them to carry information.
const CATALOGUE: &[Pattern] = &[
    // Java
    pattern(
        Java,
        AsyncWait,
        "fixed sleep",
        r"Thread\.sleep\s*\(|TimeUnit\.\w+\.sleep\s*\(|SystemClock\.sleep\s*\(|\bsleep\s*\(",
    ),
    pattern(
        Java,
        AsyncWait,
        "wait on a latch, future or condition",
        r"CountDownLatch|\.await\s*\(|Awaitility|\.get\s*\(\s*\d+\s*,\s*TimeUnit|\bwaitFor\w*\s*\(|\.wait\s*\(\s*\d",
    ),
    pattern(
        Java,
        Concurrency,
        "threads or executors",
        r"new\s+Thread\s*\(|ExecutorService|Executors\.|\.submit\s*\(|CompletableFuture|CyclicBarrier|Semaphore|\.invokeAll\s*\(",
    ),
    pattern(
        Java,
        Concurrency,
        "shared concurrent state",
        r"\bsynchronized\b|\bAtomic(?:Integer|Long|Boolean|Reference)\b|ConcurrentHashMap",
    ),
    pattern(
        Java,
        Network,
        "remote connection",
        r"new\s+URL\s*\(|openConnection|HttpURLConnection|new\s+Socket\s*\(|InetAddress|Jsoup\.connect|HttpClient|\.xsd\x22|\.dtd\x22",
    ),
    pattern(Java, Network, "remote URL", r"https?://[A-Za-z0-9.\-]+"),
    pattern(
        Java,
        Network,
        "fixed local port",
        r"new\s+ServerSocket\s*\(|BindException|localhost:\d{2,5}|127\.0\.0\.1:\d{2,5}|\b(?:8080|8443|9090|8081|8888|9000|5000)\b",
    ),
    pattern(
        Java,
        Time,
        "wall-clock time",
        r"System\.currentTimeMillis|System\.nanoTime|new\s+Date\s*\(\s*\)|\b(?:LocalDate|LocalDateTime|LocalTime|Instant|ZonedDateTime|OffsetDateTime)\.now|Calendar\.getInstance|TimeZone|ZoneId",
    ),
    pattern(
        Java,
        UnorderedCollection,
        "hash-ordered collection",
        r"\bHash(?:Map|Set)\b|\.keySet\s*\(|\.entrySet\s*\(|\.values\s*\(\s*\)|getDeclared(?:Methods|Fields|Constructors)|getMethods\s*\(|getFields\s*\(",
    ),
    pattern(
        Java,
        Io,
        "shared files",
        r"new\s+File\s*\(|\bFiles\.|FileOutputStream|FileInputStream|FileWriter|FileReader|createTempFile|createTempDir|deleteOnExit|Paths\.get",
    ),
    pattern(
        Java,
        Timeout,
        "tight timeout",
        r"@Test\s*\(\s*timeout\s*=|@Timeout\b|\btimeout\s*\(",
    ),
    pattern(
        Java,
        Platform,
        "platform-specific",
        r"GraphicsEnvironment|isHeadless|\x22os\.name\x22|File\.separator|SystemUtils\.IS_OS|IS_OS_WINDOWS",
    ),
    // Python
    pattern(
        Python,
        AsyncWait,
        "fixed sleep",
        r"\btime\.sleep\s*\(|\basyncio\.sleep\s*\(|\bsleep\s*\(",
    ),
    pattern(
        Python,
        AsyncWait,
        "wait on an event or condition",
        r"\bwait_for\w*\s*\(|\.wait\s*\(|\bwait_until\w*\s*\(",
    ),
    pattern(
        Python,
        Concurrency,
        "threads, processes or tasks",
        r"\bthreading\.|\bThread\s*\(|concurrent\.futures|\bmultiprocessing\b|ThreadPoolExecutor|ProcessPoolExecutor|\bLock\s*\(\s*\)|asyncio\.gather|create_task|\bsubprocess\.|Popen",
    ),
    pattern(
        Python,
        Network,
        "remote connection",
        r"\brequests\.|\burllib|\bsocket\.|http\.client|\burlopen\b|\baiohttp\b|\bhttpx\b",
    ),
    pattern(Python, Network, "remote URL", r"https?://[A-Za-z0-9.\-]+"),
    pattern(
        Python,
        Network,
        "local server or port",
        r"HTTPServer|TCPServer|\.bind\s*\(|localhost:\d{2,5}|127\.0\.0\.1:\d{2,5}|\bport\s*=\s*\d{3,5}\b",
    ),
    pattern(
        Python,
        Time,
        "wall-clock time",
        r"datetime\.now|datetime\.utcnow|\btime\.time\s*\(|date\.today|\btime\.monotonic|\btime\.perf_counter|timezone|freeze_time",
    ),
    pattern(
        Python,
        UnorderedCollection,
        "set or directory order",
        r"\bset\s*\(|\.keys\s*\(\s*\)|frozenset|glob\.glob|os\.listdir|os\.walk",
    ),
    pattern(
        Python,
        Timeout,
        "timeout",
        r"pytest\.mark\.timeout|\btimeout\s*=",
    ),
    pattern(
        Python,
        Platform,
        "platform-specific",
        r"sys\.platform|\bplatform\.|os\.name|os\.sep\b",
    ),
    // Rust
    pattern(
        Rust,
        AsyncWait,
        "fixed sleep or timeout",
        r"thread::sleep|time::sleep|\bsleep\s*\(|\btimeout\s*\(|sleep_until|Duration::from_(?:secs|millis)\s*\(",
    ),
    pattern(
        Rust,
        Concurrency,
        "threads, tasks or locks",
        r"thread::spawn|tokio::spawn|\bspawn\s*\(|Mutex|RwLock|mpsc::|\bchannel\s*\(|Atomic(?:U|I|Bool)\w*|Barrier|spawn_blocking|join_all|select!",
    ),
    pattern(
        Rust,
        Concurrency,
        "multi-threaded async runtime",
        r"multi_thread|threaded_scheduler|worker_threads",
    ),
    pattern(
        Rust,
        AsyncWait,
        "polling or retrying",
        r"\bretry|\battempts?\b|\bpoll_until|\bwait_for\w*\s*\(",
    ),
    pattern(
        Rust,
        Concurrency,
        "child processes",
        r"Command::new|process::Command|\.spawn\s*\(\s*\)|assert_cmd|cargo_bin",
    ),
    pattern(
        Rust,
        Network,
        "network connection",
        r"reqwest::|TcpStream|hyper::|Client::new|UdpSocket",
    ),
    pattern(
        Rust,
        Concurrency,
        "async test",
        r"\basync\s+fn|#\[tokio::test|#\[async_std::test",
    ),
    pattern(Rust, Network, "remote URL", r"https?://[A-Za-z0-9.\-]+"),
    pattern(
        Rust,
        Network,
        "fixed local port",
        r"TcpListener::bind|127\.0\.0\.1:[1-9]\d{1,4}|localhost:[1-9]\d{1,4}|0\.0\.0\.0:[1-9]\d{1,4}",
    ),
    pattern(
        Rust,
        Time,
        "wall-clock time",
        r"SystemTime::now|Instant::now|Utc::now|Local::now|\bchrono::|elapsed\s*\(",
    ),
    pattern(
        Rust,
        UnorderedCollection,
        "hash-ordered collection",
        r"\bHash(?:Map|Set)\b",
    ),
    pattern(
        Rust,
        Io,
        "shared files",
        r"std::fs::|\bfs::|File::create|File::open|create_dir|remove_file|current_dir",
    ),
    pattern(Rust, Timeout, "timeout", r"\btimeout\b"),
    pattern(
        Rust,
        Platform,
        "platform-specific",
        r"cfg!\s*\(\s*(?:windows|unix|target_os)|#\[cfg\((?:windows|unix|target_os|not\(windows)",
    ),
];

/// A pattern that speaks against flakiness: a test whose collaborators are mocks depends less
/// on networks, clocks and other processes (the design notes: mocks "count against"). Measured
/// on the shared data, tests that mention mocks are flaky about half as often as others, in each
/// language. The prior learns how much a mitigation counts; it is never shown as evidence.
struct Mitigation {
    language: Language,
    name: &'static str,
    regex: &'static str,
}

const MITIGATIONS: &[Mitigation] = &[
    Mitigation {
        language: Java,
        name: "mocked collaborators",
        regex: r"[Mm]ock|\bwhen\s*\(|\bverify\s*\(",
    },
    Mitigation {
        language: Python,
        name: "mocked collaborators",
        regex: r"\bmock\b|Mock\s*\(|\bpatch\s*\(",
    },
    Mitigation {
        language: Rust,
        name: "mocked collaborators",
        regex: r"[Mm]ock",
    },
];

/// What the catalogue finds in a test's code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signals {
    /// Patterns linked to a cause of flakiness, in catalogue order, at most one hit each (the
    /// first), so a test that sleeps ten times is not ten times as suspicious.
    pub risks: Vec<SignalHit>,
    /// Names of the mitigations found.
    pub mitigations: Vec<&'static str>,
}

impl Signals {
    /// The names of every risk and mitigation found: the features a signal prior reads.
    pub fn names(&self) -> Vec<&'static str> {
        self.risks
            .iter()
            .map(|hit| hit.name)
            .chain(self.mitigations.iter().copied())
            .collect()
    }
}

/// Hosts that do not leave the machine: a URL naming one is not a remote dependency.
const LOCAL_HOSTS: [&str; 4] = ["localhost", "127.0.0.1", "0.0.0.0", "[::1]"];

/// Compiles patterns, keeping each one's position in its list.
fn compile(regexes: impl Iterator<Item = &'static str>) -> Vec<(usize, Regex)> {
    regexes
        .enumerate()
        .filter_map(|(position, regex)| Regex::new(regex).ok().map(|regex| (position, regex)))
        .collect()
}

fn compiled() -> &'static [(usize, Regex)] {
    static COMPILED: OnceLock<Vec<(usize, Regex)>> = OnceLock::new();
    COMPILED.get_or_init(|| compile(CATALOGUE.iter().map(|pattern| pattern.regex)))
}

fn compiled_mitigations() -> &'static [(usize, Regex)] {
    static COMPILED: OnceLock<Vec<(usize, Regex)>> = OnceLock::new();
    COMPILED.get_or_init(|| compile(MITIGATIONS.iter().map(|mitigation| mitigation.regex)))
}

/// Every catalogue match in a test's code: its risks, in the order of the catalogue, and its
/// mitigations.
pub fn detect(language: Language, code: &str) -> Signals {
    let mut risks = Vec::new();
    for (position, regex) in compiled() {
        let pattern = &CATALOGUE[*position];
        if pattern.language != language {
            continue;
        }
        let found = regex.find_iter(code).find(|found| {
            !(pattern.name == "remote URL"
                && LOCAL_HOSTS.iter().any(|host| found.as_str().contains(host)))
        });
        if let Some(found) = found {
            risks.push(SignalHit {
                category: pattern.category,
                name: pattern.name,
                text: found.as_str().trim_end_matches(['(', ' ']).to_string(),
                offset: found.start(),
            });
        }
    }
    let mitigations = compiled_mitigations()
        .iter()
        .map(|(position, regex)| (&MITIGATIONS[*position], regex))
        .filter(|(mitigation, regex)| mitigation.language == language && regex.is_match(code))
        .map(|(mitigation, _)| mitigation.name)
        .collect();
    Signals { risks, mitigations }
}

/// A language's patterns as `(name, category)`, in catalogue order.
pub fn patterns(language: Language) -> impl Iterator<Item = (&'static str, Category)> {
    CATALOGUE
        .iter()
        .filter(move |pattern| pattern.language == language)
        .map(|pattern| (pattern.name, pattern.category))
}

/// The names of a language's risks, in catalogue order, then of its mitigations: the features of
/// a signal prior. Names are unique within a language.
pub fn feature_names(language: Language) -> Vec<&'static str> {
    CATALOGUE
        .iter()
        .filter(|pattern| pattern.language == language)
        .map(|pattern| pattern.name)
        .chain(
            MITIGATIONS
                .iter()
                .filter(|mitigation| mitigation.language == language)
                .map(|mitigation| mitigation.name),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(compiled().len(), CATALOGUE.len());
        assert_eq!(compiled_mitigations().len(), MITIGATIONS.len());
    }

    #[test]
    fn finds_a_fixed_sleep_with_its_place() {
        let code = "@Test void t() throws Exception {\n  start();\n  Thread.sleep(500);\n}";
        let hits = detect(Java, code).risks;
        let sleep = hits
            .iter()
            .find(|hit| hit.name == "fixed sleep")
            .expect("a sleep is found");
        assert_eq!(sleep.category, AsyncWait);
        assert_eq!(sleep.text, "Thread.sleep");
        assert_eq!(&code[sleep.offset..sleep.offset + 12], "Thread.sleep");
    }

    #[test]
    fn local_urls_are_not_remote() {
        assert!(
            detect(Python, "requests_mock.get('http://localhost:8000/x')")
                .risks
                .iter()
                .all(|hit| hit.name != "remote URL")
        );
        assert!(
            detect(Python, "fetch('https://example.org/data')")
                .risks
                .iter()
                .any(|hit| hit.name == "remote URL")
        );
    }

    #[test]
    fn a_plain_test_has_no_signal() {
        assert!(
            detect(
                Java,
                "@Test void adds() { assertEquals(4, Calculator.add(2, 2)); }"
            )
            .risks
            .is_empty()
        );
        assert_eq!(
            detect(Python, "def test_add():\n    assert add(2, 2) == 4\n"),
            Signals::default()
        );
        assert_eq!(
            detect(Rust, "#[test]\nfn adds() { assert_eq!(add(2, 2), 4); }"),
            Signals::default()
        );
    }

    #[test]
    fn each_language_detects_its_own_idioms() {
        assert!(
            detect(Rust, "std::thread::spawn(move || tx.send(1));")
                .risks
                .iter()
                .any(|hit| hit.category == Concurrency)
        );
        assert!(
            detect(Python, "t = threading.Thread(target=f)")
                .risks
                .iter()
                .any(|hit| hit.category == Concurrency)
        );
        assert!(
            detect(Rust, "let now = Instant::now();")
                .risks
                .iter()
                .any(|hit| hit.category == Time)
        );
        assert!(feature_names(Rust).contains(&"shared files"));
        assert!(!feature_names(Python).contains(&"shared files"));
    }

    #[test]
    fn mocks_are_found_as_mitigations_not_risks() {
        let found = detect(
            Python,
            "@patch('app.fetch')\ndef test_fetch(fetch):\n    fetch.return_value = 1\n",
        );
        assert_eq!(found.mitigations, ["mocked collaborators"]);
        assert!(found.risks.is_empty());
        let found = detect(Java, "@Test void t() { Service s = mock(Service.class); }");
        assert_eq!(found.names(), ["mocked collaborators"]);
        assert!(
            detect(Python, "def test_dispatch():\n    dispatch(event)\n")
                .mitigations
                .is_empty()
        );
    }

    #[test]
    fn feature_names_are_unique_within_a_language() {
        for language in Language::ALL {
            let mut names = feature_names(language);
            let count = names.len();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), count, "{language}");
        }
    }
}
