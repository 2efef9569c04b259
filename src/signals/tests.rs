//! Runs every catalogue's examples: each entry's `matches` must be found, its `ignores` not.

use super::*;

fn found(language: Language, code: &str) -> Vec<&'static str> {
    let signals = detect(language, code);
    signals
        .risks
        .iter()
        .map(|hit| hit.id)
        .chain(signals.mitigations.iter().copied())
        .chain(signals.conditions.iter().copied())
        .chain(signals.mechanisms.iter().map(|mechanism| mechanism.id))
        .chain(parts_found(language, code))
        .collect()
}

/// The parts of mechanisms matched in a test's code: they are not signals, so `detect` keeps
/// none of them.
fn parts_found(language: Language, code: &str) -> Vec<&'static str> {
    let (file, start) = snippet_file(language, code);
    let Some(tree) = crate::extract::parse(language, &file, None) else {
        return Vec::new();
    };
    let catalogue = catalogue(language);
    scan(language, &file, &tree)
        .within(start..start + code.len())
        .map(|hit| &catalogue.entries[hit.entry])
        .filter(|entry| entry.kind() == Kind::Part)
        .map(|entry| entry.id.as_str())
        .collect()
}

#[test]
fn every_catalogue_compiles() {
    for language in Language::ALL {
        if let Err(error) = catalogue::compile(language) {
            panic!("{error}");
        }
    }
}

#[test]
fn every_example_of_every_entry_holds() {
    let mut failures = Vec::new();
    for language in Language::ALL {
        for entry in &catalogue(language).entries {
            if entry.matches.is_empty() || entry.ignores.is_empty() {
                failures.push(format!(
                    "{language} {}: needs examples that match and that do not",
                    entry.id
                ));
            }
            for code in &entry.matches {
                if !found(language, code).contains(&entry.id.as_str()) {
                    failures.push(format!("{language} {} does not match:\n{code}", entry.id));
                }
            }
            for code in &entry.ignores {
                if found(language, code).contains(&entry.id.as_str()) {
                    failures.push(format!("{language} {} matches:\n{code}", entry.id));
                }
            }
        }
    }
    for language in Language::ALL {
        for mechanism in &catalogue(language).mechanisms {
            let entry = &mechanism.entry;
            if entry.matches.is_empty() || entry.ignores.is_empty() {
                failures.push(format!(
                    "{language} {}: needs examples that match and that do not",
                    entry.id
                ));
            }
            let has = |code: &str| {
                detect(language, code)
                    .mechanisms
                    .iter()
                    .any(|found| found.id == entry.id)
            };
            for code in &entry.matches {
                if !has(code) {
                    failures.push(format!("{language} {} does not match:\n{code}", entry.id));
                }
            }
            for code in &entry.ignores {
                if has(code) {
                    failures.push(format!("{language} {} matches:\n{code}", entry.id));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn every_entry_is_documented() {
    for language in Language::ALL {
        for entry in &catalogue(language).entries {
            let fields = if entry.kind() == Kind::Part { 2 } else { 4 };
            for (field, text) in [
                ("message", &entry.message),
                ("what", &entry.what),
                ("why", &entry.why),
                ("fix", &entry.fix),
            ]
            .into_iter()
            .take(fields)
            {
                assert!(
                    !text.trim().is_empty(),
                    "{language} {}: empty {field}",
                    entry.id
                );
            }
        }
        for mechanism in &catalogue(language).mechanisms {
            let entry = &mechanism.entry;
            for (field, text) in [
                ("message", &entry.message),
                ("what", &entry.what),
                ("why", &entry.why),
                ("fix", &entry.fix),
                ("evidence", &entry.evidence),
            ] {
                assert!(
                    !text.trim().is_empty(),
                    "{language} {}: empty {field}",
                    entry.id
                );
            }
        }
    }
}

#[test]
fn a_hit_names_its_code_and_line() {
    let code = "@Test void t() throws Exception {\n  start();\n  Thread.sleep(500);\n}";
    let signals = detect(Language::Java, code);
    let sleep = signals
        .risks
        .iter()
        .find(|hit| hit.id == "fixed-sleep")
        .expect("a sleep is found");
    assert_eq!(sleep.category, Category::AsyncWait);
    assert_eq!(sleep.text, "Thread.sleep(500)");
    assert_eq!(sleep.line, 3);
    assert_eq!(sleep.message, "fixed sleep");
}

#[test]
fn an_address_held_by_a_name_is_shown_with_the_address() {
    let code = "def test_index():\n    url = \"https://pypi.org/simple/\"\n    response = requests.get(url)\n    assert response.ok\n";
    let signals = detect(Language::Python, code);
    let address = signals
        .risks
        .iter()
        .find(|hit| hit.id == "remote-address")
        .expect("the address behind `url` is found");
    assert_eq!(address.text, r#"url = "https://pypi.org/simple/""#);
    assert_eq!(address.line, 3, "the line where the call uses it");
}

#[test]
fn a_call_at_the_end_of_a_chain_is_shown_with_the_chain_s_head_on_its_own_line() {
    let code = "@Test\nvoid starts() throws Exception {\n    try (Service service = builder\n            .setOrigin(origin())\n            .awaitRunning(2, ChronoUnit.SECONDS)\n            .get()) {\n        read(service);\n    }\n}";
    let signals = detect(Language::Java, code);
    let wait = signals
        .risks
        .iter()
        .find(|hit| hit.id == "tight-wait")
        .expect("the two-second bound is read");
    assert_eq!(wait.text, "builder….awaitRunning(2, ChronoUnit.SECONDS)");
    assert_eq!(
        wait.line, 5,
        "the line of the call, not of the chain's first word"
    );
}

#[test]
fn inside_a_rust_macro_the_code_is_read_with_its_line() {
    let code = "#[test]\nfn fast() {\n    let start = Instant::now();\n    run();\n    assert!(\n        start.elapsed() < Duration::from_millis(100)\n    );\n}";
    let signals = detect(Language::Rust, code);
    let timing = signals
        .risks
        .iter()
        .find(|hit| hit.id == "timing-assertion")
        .expect("the assertion is read");
    assert_eq!(timing.line, 5);
    let duration = signals
        .risks
        .iter()
        .find(|hit| hit.id == "fixed-duration")
        .expect("the duration inside the macro is read");
    assert_eq!(duration.line, 6);
    assert_eq!(duration.text, "Duration::from_millis(100)");
}

#[test]
fn a_plain_test_has_no_signal() {
    assert_eq!(
        detect(
            Language::Java,
            "@Test void adds() { assertEquals(4, Calculator.add(2, 2)); }"
        ),
        Signals::default()
    );
    assert_eq!(
        detect(
            Language::Python,
            "def test_add():\n    assert add(2, 2) == 4\n"
        ),
        Signals::default()
    );
    assert_eq!(
        detect(
            Language::Rust,
            "#[test]\nfn adds() { assert_eq!(add(2, 2), 4); }"
        ),
        Signals::default()
    );
}

#[test]
fn hits_in_context_become_context_features() {
    let source = "class T {\n  @Before public void setUp() throws Exception { Thread.sleep(100); }\n  @Test public void t() { run(); }\n}\n";
    let Some(tree) = crate::extract::parse(Language::Java, source, None) else {
        panic!("the Java grammar loads");
    };
    let scanned = scan(Language::Java, source, &tree);
    let set_up = source.find("@Before").unwrap_or(0)..source.find("\n  @Test").unwrap_or(0);
    let test = source.find("@Test").unwrap_or(0)..source.rfind('}').unwrap_or(0);
    let signals = detect_regions(
        Language::Java,
        &[
            Region {
                scan: &scanned,
                range: test,
                place: Place::Test,
                called_at: None,
                cleanup: false,
                under_test: false,
                receiver: None,
                runs_in: None,
            },
            Region {
                scan: &scanned,
                range: set_up,
                place: Place::Context {
                    kind: "set-up",
                    name: "setUp".to_string(),
                    path: None,
                },
                called_at: None,
                cleanup: false,
                under_test: false,
                receiver: None,
                runs_in: None,
            },
        ],
    );
    assert_eq!(signals.features(), ["fixed-sleep@context"]);
    assert_eq!(signals.risks[0].whereabouts(), "in set-up `setUp` (line 2)");
}

#[test]
fn a_mitigation_in_what_the_test_runs_cancels_the_risks_that_name_it() {
    // The fixture seeds the generator the test draws from: its values repeat from run to run.
    let source = "import random\n\n@pytest.fixture\ndef seeded():\n    random.seed(0)\n\n\
                  def test_draws(seeded):\n    assert pick(random.random())\n";
    let Some(tree) = crate::extract::parse(Language::Python, source, None) else {
        panic!("the Python grammar loads");
    };
    let scanned = scan(Language::Python, source, &tree);
    let fixture = source.find("@pytest").unwrap_or(0)..source.find("\n\ndef test").unwrap_or(0);
    let test = source.find("def test").unwrap_or(0)..source.len();
    let test_region = Region {
        scan: &scanned,
        range: test,
        place: Place::Test,
        called_at: None,
        cleanup: false,
        under_test: false,
        receiver: None,
        runs_in: None,
    };
    let alone = detect_regions(Language::Python, std::slice::from_ref(&test_region));
    assert_eq!(alone.features(), ["randomness"]);
    let with_fixture = detect_regions(
        Language::Python,
        &[
            test_region,
            Region {
                scan: &scanned,
                range: fixture,
                place: Place::Context {
                    kind: "fixture",
                    name: "seeded".to_string(),
                    path: None,
                },
                called_at: None,
                cleanup: false,
                under_test: false,
                receiver: None,
                runs_in: None,
            },
        ],
    );
    assert!(with_fixture.risks.is_empty(), "{:?}", with_fixture.risks);
    assert_eq!(with_fixture.mitigations, ["seeded-random"]);
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

#[test]
fn a_test_s_size_counts_its_non_blank_lines() {
    let body = |lines: usize| {
        let statements = "    check();\n\n".repeat(lines.saturating_sub(2));
        format!("def test_a():\n{statements}    done()\n")
    };
    assert_eq!(size_features(&body(19)), Vec::<&str>::new());
    assert_eq!(size_features(&body(20)), ["lines>=20"]);
    assert_eq!(size_features(&body(45)), ["lines>=20", "lines>=40"]);
    // What a test judged out of its file and one judged in it read alike.
    let long = detect(Language::Python, &body(45));
    assert_eq!(long.size, ["lines>=20", "lines>=40"]);
    assert!(long.features().contains(&"lines>=40"));
    let in_file = crate::analysis::read_tests(
        Language::Python,
        "test_a.py",
        &body(45),
        &crate::analysis::Surroundings::default(),
    );
    assert_eq!(in_file.tests.len(), 1);
    assert_eq!(in_file.signals[0].size, long.size);
    // A size is never evidence.
    assert!(long.risks.is_empty());
}

#[test]
fn a_fact_declared_below_the_test_still_applies() {
    // The facts (here a mock field) and the signals are found in one walk of the file; a field
    // declared after the test that uses it must still make its wait a mock's.
    let hits = |source: &str| -> Vec<&'static str> {
        let tree = crate::extract::parse(Language::Java, source, None).expect("parses");
        let catalogue = catalogue::catalogue(Language::Java);
        scan(Language::Java, source, &tree)
            .hits
            .iter()
            .map(|hit| catalogue.entries[hit.entry].id.as_str())
            .collect()
    };
    let test = "    @Test void waits() throws Exception { assertEquals(1, future.get(1, TimeUnit.SECONDS)); }\n";
    let real = format!("class OrdersTest {{\n{test}    Future<Integer> future;\n}}\n");
    let mocked = format!("class OrdersTest {{\n{test}    @Mock Future<Integer> future;\n}}\n");
    assert!(hits(&real).contains(&"tight-wait"), "{:?}", hits(&real));
    assert!(
        !hits(&mocked).contains(&"tight-wait"),
        "{:?}",
        hits(&mocked)
    );
}

#[test]
fn a_helper_runs_where_the_test_calls_it() {
    // The write happens in `enable`, the restore in `disable`: put where the test calls them,
    // the write is restored when `disable` runs after it, not when it runs before.
    let source_of = |order: &str| {
        format!(
            "class T {{\n  @Test void t() {{\n    {order}\n    check();\n  }}\n  static void enable() {{ System.setProperty(\"mode\", \"a\"); }}\n  static void disable() {{ System.clearProperty(\"mode\"); }}\n}}\n"
        )
    };
    let found = |order: &str| -> (Vec<&'static str>, Vec<String>) {
        let source = source_of(order);
        let tree = crate::extract::parse(Language::Java, &source, None).expect("parses");
        let scanned = scan(Language::Java, &source, &tree);
        let span = |from: &str, to: &str| {
            let start = source.find(from).unwrap_or(0);
            start..start + source[start..].find(to).unwrap_or(0) + to.len()
        };
        let helper = |name: &str, range: Range<usize>, called: &str| Region {
            scan: &scanned,
            range,
            place: Place::Context {
                kind: "helper",
                name: name.to_string(),
                path: None,
            },
            called_at: source.find(called),
            cleanup: false,
            under_test: false,
            receiver: None,
            runs_in: None,
        };
        let regions = vec![
            Region {
                scan: &scanned,
                range: span("@Test", "    check();\n  }"),
                place: Place::Test,
                called_at: None,
                cleanup: false,
                under_test: false,
                receiver: None,
                runs_in: None,
            },
            helper("enable", span("static void enable", "}"), "enable();"),
            helper("disable", span("static void disable", "}"), "disable();"),
        ];
        let mechanisms = detect_regions(Language::Java, &regions).mechanisms;
        (
            mechanisms.iter().map(|mechanism| mechanism.id).collect(),
            mechanisms
                .iter()
                .map(|mechanism| mechanism.evidence())
                .collect(),
        )
    };
    assert_eq!(found("enable(); disable();").0, Vec::<&str>::new());
    let (ids, evidence) = found("disable(); enable();");
    assert_eq!(ids, ["unrestored-global-state"]);
    assert_eq!(
        evidence[0],
        "changes `System.setProperty(\"mode\", \"a\")` in helper `enable` (line 6) and never restores it"
    );
}
