//! Unit tests of the index: building, searching, editing and persisting.

use super::*;

fn entry(id: &str, flaky: bool) -> Entry {
    Entry {
        id: id.to_string(),
        project: "demo".to_string(),
        source: "test".to_string(),
        language: Language::Java,
        label: if flaky { Label::Flaky } else { Label::Stable },
        categories: if flaky {
            vec![Category::AsyncWait]
        } else {
            vec![]
        },
        origin: Origin::Dataset,
        path: None,
        code: None,
        signals: Vec::new(),
    }
}

pub(super) const SLEEPY: &str = "@Test void waits() throws Exception { server.start(); Thread.sleep(500); assertTrue(server.isUp()); }";
const PURE: &str = "@Test void adds() { assertEquals(4, Calculator.add(2, 2)); }";
const PARSE: &str = "@Test void parses() { assertEquals(3, Parser.parse(\"1+2\").evaluate()); }";

fn settings() -> BuildSettings {
    BuildSettings {
        tokenizer: Tokenizer::Code,
        dims: Dims::Fixed(256),
        seed: 7,
        description: "unit test".into(),
    }
}

pub(super) fn small_index() -> Index {
    let tests = [
        ("a#waits", true, SLEEPY),
        ("a#adds", false, PURE),
        ("a#parses", false, PARSE),
    ];
    Index::build(
        &settings(),
        tests.iter().map(|&(id, flaky, code)| {
            (
                entry(id, flaky),
                TokenBag::from_code(Tokenizer::Code, Language::Java, code),
            )
        }),
    )
}

fn nearest_ids(index: &Index, code: &str, k: usize) -> Vec<String> {
    let query = index.embed(&index.bag(Language::Java, code));
    index
        .nearest(&query, k, |_| true)
        .into_iter()
        .map(|(position, _)| index.entry(position).id().to_string())
        .collect()
}

#[test]
fn a_test_finds_itself_first_at_similarity_one() {
    let index = small_index();
    let query = index.embed(&index.bag(Language::Java, SLEEPY));
    let nearest = index.nearest(&query, 3, |_| true);
    assert_eq!(nearest[0], (0, 1.0));
    assert!(nearest[1].1 < 1.0);
}

#[test]
fn similar_code_is_nearer_than_unrelated_code() {
    let index = small_index();
    let nearest = nearest_ids(
        &index,
        "@Test void waitsToo() { client.start(); Thread.sleep(100); assertTrue(client.isUp()); }",
        3,
    );
    assert_eq!(nearest[0], "a#waits");
}

#[test]
fn the_dimension_follows_the_bound_or_the_setting() {
    assert_eq!(small_index().params().projection.dims, 256);
    let by_eps = Index::build(
        &BuildSettings {
            dims: Dims::Eps(0.33),
            ..settings()
        },
        std::iter::empty(),
    );
    assert_eq!(
        by_eps.params().projection.dims,
        Projection::johnson_lindenstrauss_dims(0, 0.33)
    );
}

#[test]
fn tokens_unseen_in_training_do_not_move_the_query() {
    let index = small_index();
    let plain = index.embed(&index.bag(Language::Java, PURE));
    let with_unknown =
        index.embed(&index.bag(Language::Java, &format!("{PURE} zebraQuokkaWombat();")));
    let a = index.nearest(&plain, 3, |_| true);
    let b = index.nearest(&with_unknown, 3, |_| true);
    assert_eq!(a, b);
    let nothing_known = index.embed(&index.bag(Language::Java, "zebra quokka"));
    assert!(nothing_known.is_empty());
    assert!(index.nearest(&nothing_known, 3, |_| true).is_empty());
}

#[test]
fn shared_tokens_list_the_rarest_first() {
    let index = small_index();
    let query = index.embed(&index.bag(
        Language::Java,
        "@Test void other() { Thread.sleep(1); assertEquals(1, 1); }",
    ));
    let shared = index.shared_tokens(&query, 0);
    assert!(shared.contains(&"thread.sleep"), "{shared:?}");
    // `test` is in every entry, `thread.sleep` in one: the rare one comes first.
    let position = |token| shared.iter().position(|t| *t == token).unwrap();
    assert!(position("thread.sleep") < position("test"), "{shared:?}");
}

#[test]
fn a_writer_adds_relabels_and_removes_entries() {
    let index = small_index();
    let vocabulary_before = index.vocabulary_len();
    let mut writer = IndexWriter::from_index(&index);
    let newcomer =
        "@Test void polls() { Awaitility.await().atMost(Duration.ofSeconds(1)).until(done::get); }";
    let position = writer.upsert(entry("b#polls", true), &index.bag(Language::Java, newcomer));
    assert_eq!(position, 3);
    let index = writer.finish();
    assert!(index.vocabulary_len() > vocabulary_before);
    assert_eq!(nearest_ids(&index, newcomer, 1), ["b#polls"]);
    assert_eq!(index.document_frequency("awaitility"), 1);

    // Replacing by id keeps one entry, in its place.
    let mut writer = IndexWriter::from_index(&index);
    assert_eq!(
        writer.upsert(
            entry("b#polls", false),
            &index.bag(Language::Java, newcomer)
        ),
        3
    );
    assert!(writer.relabel("a#adds", Label::Flaky, vec![Category::Time], Origin::Manual));
    assert!(!writer.relabel("missing", Label::Flaky, vec![], Origin::Manual));
    let index = writer.finish();
    assert_eq!(index.len(), 4);
    assert!(!index.entry(index.position("b#polls").unwrap()).is_flaky());
    let adds = index.entry(index.position("a#adds").unwrap());
    assert!(
        adds.is_flaky() && adds.categories() == [Category::Time] && adds.origin() == Origin::Manual
    );

    let mut writer = IndexWriter::from_index(&index);
    assert!(writer.remove("a#waits"));
    assert!(!writer.remove("a#waits"));
    let index = writer.finish();
    assert_eq!(index.len(), 3);
    assert_ne!(nearest_ids(&index, SLEEPY, 1), ["a#waits"]);
    assert_eq!(index.document_frequency("sleep"), 0);
    assert_eq!(index.position("a#parses"), Some(1));
}

#[test]
fn a_flaky_entry_keeps_its_code_and_signals_and_others_keep_neither() {
    let new = |label| {
        Entry::new(NewEntry {
            id: "a#waits",
            project: "demo",
            source: "editor",
            language: Language::Java,
            label,
            categories: &[Category::Time, Category::AsyncWait, Category::Time],
            origin: Origin::Manual,
            path: Some("src/A.java"),
            code: Some(SLEEPY),
        })
    };
    let flaky = new(Label::Flaky);
    assert_eq!(flaky.code.as_deref(), Some(SLEEPY));
    assert_eq!(flaky.signals, ["fixed-sleep"]);
    assert_eq!(flaky.categories, [Category::AsyncWait, Category::Time]);
    for label in [Label::Stable, Label::Unlabelled] {
        let other = new(label);
        assert_eq!((other.code, other.signals.len()), (None, 0));
    }
    let index = Index::build(
        &settings(),
        [(
            flaky.clone(),
            TokenBag::from_code(Tokenizer::Code, Language::Java, SLEEPY),
        )],
    );
    let stored = index.entry(0);
    assert_eq!(stored.signals(), ["fixed-sleep"]);
    assert_eq!(stored.to_entry(), flaky);
    assert!(index.has_language(Language::Java) && !index.has_language(Language::Rust));
}

#[test]
fn the_file_round_trips_to_the_same_searches_and_bytes() {
    let index = small_index();
    let mut writer = IndexWriter::from_index(&index);
    writer.upsert(
        entry("b#new", true),
        &index.bag(
            Language::Java,
            "@Test void x() { new Socket(\"example.com\", 80); }",
        ),
    );
    let index = writer.finish();
    let bytes = index.to_bytes();
    let loaded = Index::from_bytes(&bytes).unwrap();
    let owned = |index: &Index| {
        index
            .entries()
            .map(|entry| entry.to_entry())
            .collect::<Vec<_>>()
    };
    assert_eq!(owned(&loaded), owned(&index));
    assert_eq!(loaded.params(), index.params());
    for code in [
        SLEEPY,
        PURE,
        PARSE,
        "@Test void y() { new Socket(\"a\", 1); }",
    ] {
        let a = index.nearest(&index.embed(&index.bag(Language::Java, code)), 4, |_| true);
        let b = loaded.nearest(&loaded.embed(&loaded.bag(Language::Java, code)), 4, |_| {
            true
        });
        assert_eq!(a, b);
    }
    assert_eq!(
        loaded.to_bytes(),
        bytes,
        "saving a loaded index changes nothing"
    );
    assert_eq!(
        small_index().to_bytes(),
        small_index().to_bytes(),
        "builds are deterministic"
    );
}

#[test]
fn new_priors_are_saved() {
    let mut index = small_index();
    let prior = crate::prior::SignalPrior {
        language: Language::Java,
        bias: -1.0,
        weights: vec![("fixed-sleep".to_string(), 2.0)],
        share_weights: Vec::new(),
        typical_shares: Vec::new(),
        information_probability: 0.4,
        warning_probability: 0.8,
        category_evidence: Vec::new(),
    };
    index.set_priors(vec![prior.clone()]);
    let loaded = Index::from_bytes(&index.to_bytes()).unwrap();
    assert_eq!(loaded.prior(Language::Java), Some(&prior));
    assert_eq!(loaded.len(), 3);
}

#[test]
fn a_file_breaking_the_invariants_is_rejected_with_a_valid_checksum() {
    let bytes = small_index().to_bytes();
    // Each of a few bytes of the directory and the tables, changed and signed anew.
    let layout = Layout::read(&bytes, file::HEADER_LEN).unwrap();
    let entries = layout.section(&bytes, kind::ENTRIES).as_ptr() as usize - bytes.as_ptr() as usize;
    let order =
        layout.section(&bytes, kind::VOCABULARY_ORDER).as_ptr() as usize - bytes.as_ptr() as usize;
    for (at, value) in [
        (file::HEADER_LEN, 1000u32),   // more sections than fit
        (file::HEADER_LEN + 8 + 8, 3), // the first section's offset, unaligned
        (entries, u32::MAX - 5),       // the first entry's id outside the text
        (entries + 48, 7),             // a language that is none
        (order, 1_000_000),            // a token that is none
    ] {
        let mut damaged = bytes.clone();
        damaged[at..at + 4].copy_from_slice(&value.to_le_bytes());
        let body = damaged[file::HEADER_LEN..].to_vec();
        damaged[24..28].copy_from_slice(&crc32fast::hash(&body).to_le_bytes());
        let error = Index::from_bytes(&damaged).expect_err("refused");
        assert!(
            matches!(error, FormatError::Undecodable(_)),
            "{at}: {error}"
        );
    }
}

#[test]
fn saving_and_loading_a_file() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join(".flakesense").join("index");
    small_index()
        .save(crate::files::write::Place::Named, &path)
        .unwrap();
    let loaded = Index::load(&path).unwrap();
    assert_eq!(loaded.len(), 3);
    std::fs::write(&path, b"FLKSNSIX\x01\x00").unwrap();
    let error = Index::load(&path).unwrap_err();
    assert!(error.is_corruption(), "{error}");
    assert!(error.to_string().contains("truncated"), "{error}");
}

#[test]
fn an_entry_bag_rebuilds_an_equal_index() {
    let index = small_index();
    assert_eq!(
        index.entry_bag(0),
        Some(TokenBag::from_code(Tokenizer::Code, Language::Java, SLEEPY))
    );
    assert_eq!(index.entry_bag(3), None);
    let rebuilt = Index::build(
        &settings(),
        index.entries().map(|entry| {
            (
                entry.to_entry(),
                index.entry_bag(entry.position()).unwrap_or_default(),
            )
        }),
    );
    assert_eq!(
        nearest_ids(&rebuilt, SLEEPY, 3),
        nearest_ids(&index, SLEEPY, 3)
    );
}

#[test]
fn kept_code_is_cut_on_a_character_boundary() {
    assert_eq!(kept_code("short"), "short");
    let long = "é".repeat(MAX_KEPT_CODE);
    let kept = kept_code(&long);
    assert!(kept.ends_with("\n...") && kept.len() <= MAX_KEPT_CODE + 4);
}
