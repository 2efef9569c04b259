//! The context of Java tests: in their own file, and across the files of the workspace.

use crate::context::tests::units_by_test;
use crate::context::{ContextUnit, Resolver, SourceFile, Wanted};
use crate::extract::{extract_tests_from_tree, parse};
use crate::language::Language;

fn units_of(source: &str, test: &str) -> Vec<String> {
    let found = units_by_test(Language::Java, source, &[]);
    let units = found.into_iter().find(|(name, _)| name == test);
    units.map(|(_, units)| units).unwrap_or_default()
}

#[test]
fn an_unqualified_call_reaches_only_methods_in_scope() {
    // `Other.cleanUp` is no method of `T`'s scope: `cleanUp()` is inherited from `Base`.
    let source = "class T extends Base {\n  @Test void t() { cleanUp(); }\n}\n\
                  class Other {\n  void cleanUp() {}\n}\n";
    assert!(units_of(source, "t").is_empty());
}

#[test]
fn a_superclass_cycle_ends() {
    let source = "class A extends B {\n  @Before void a() {}\n  @Test void t() {}\n}\n\
                  class B extends A {\n  @Before void b() {}\n}\n";
    assert_eq!(units_of(source, "t"), ["SetUp a 1", "SetUp b 1"]);
}

#[test]
fn calls_on_other_classes_and_sources_of_other_files_are_not_followed() {
    // `run` and `cases` exist in the file, but the calls name classes the file does not have.
    let source = "class T {\n  @ParameterizedTest @MethodSource(\"Other#cases\")\n  \
                  void t(int x) { Executors.run(); }\n  void run() {}\n  \
                  static Stream<Integer> cases() { return null; }\n}\n";
    assert!(units_of(source, "t").is_empty());
}

#[test]
fn an_enum_s_members_and_a_method_reference_count() {
    let source = "enum Mode {\n  FAST, SLOW;\n  private final Clock clock = Clock.systemUTC();\n  \
                  @Test void t() { list.forEach(this::check); }\n  void check(Object o) {}\n}\n";
    assert_eq!(units_of(source, "t"), ["Field clock 1", "Helper check 1"]);
}

/// A test's units when its file `source` reaches the Java files `others` (nearest first).
fn context_with(source: &str, others: &[&str], test: &str) -> Vec<ContextUnit> {
    let parse = |source: &str| parse(Language::Java, source, None).expect("the grammar loads");
    let tree = parse(source);
    let other_trees: Vec<tree_sitter::Tree> = others.iter().map(|other| parse(other)).collect();
    let other_files: Vec<(&str, SourceFile)> = others
        .iter()
        .zip(&other_trees)
        .map(|(source, tree)| ("Other.java", SourceFile { source, tree }))
        .collect();
    let tests = extract_tests_from_tree(Language::Java, "T.java", source, &tree).tests;
    let file = SourceFile {
        source,
        tree: &tree,
    };
    let resolver = Resolver::new(Language::Java, file, &[], &other_files, &tests);
    let test = tests.iter().find(|found| found.name == test);
    test.map(|test| resolver.context(test)).unwrap_or_default()
}

/// As [`context_with`], each unit as `Kind name depth`, then `file i` for the i-th other file.
fn units_with(source: &str, others: &[&str], test: &str) -> Vec<String> {
    let describe = |unit: &ContextUnit| {
        let place = unit.file.map(|file| format!(" file {file}"));
        let place = place.unwrap_or_default();
        format!("{:?} {} {}{place}", unit.kind, unit.name, unit.depth)
    };
    context_with(source, others, test)
        .iter()
        .map(describe)
        .collect()
}

fn wanted_types(source: &str) -> Vec<String> {
    let tree = parse(Language::Java, source, None).expect("the grammar loads");
    let file = SourceFile {
        source,
        tree: &tree,
    };
    let wanted = crate::context::wanted(Language::Java, "T.java", file);
    wanted
        .into_iter()
        .map(|wanted| match wanted {
            Wanted::Type(name) => name,
            other => panic!("a Java file wants classes, not {other:?}"),
        })
        .collect()
}

const CLUSTER_TEST: &str = "class ClusterTest extends ClusterTestBase {\n  \
                            @Test void replicates() { startCluster(); }\n}\n";

const CLUSTER_TEST_BASE: &str = "abstract class ClusterTestBase {\n  \
                                 protected Cluster cluster = new Cluster();\n  \
                                 @BeforeEach void startServer() { Server.start(8080); }\n  \
                                 @AfterEach void stopServer() { Server.stop(); }\n  \
                                 @BeforeAll static void once() {}\n  \
                                 void startCluster() { cluster.start(); }\n}\n";

const CLUSTER: &str = "class Cluster {\n  \
                       private final Thread thread = new Thread(this::run);\n  \
                       void start() { thread.start(); }\n  void run() {}\n}\n";

#[test]
fn a_base_class_of_another_file_brings_its_set_up_fields_and_tear_down() {
    let units = units_with(CLUSTER_TEST, &[CLUSTER_TEST_BASE], "replicates");
    assert_eq!(
        units,
        [
            "Field cluster 1 file 0",
            "SetUp startServer 1 file 0",
            "TearDown stopServer 1 file 0",
            "Helper startCluster 1 file 0",
        ]
    );
}

#[test]
fn an_inherited_helper_reaches_the_class_of_the_field_it_calls_in_a_third_file() {
    let units = units_with(CLUSTER_TEST, &[CLUSTER_TEST_BASE, CLUSTER], "replicates");
    assert_eq!(
        units,
        [
            "Field cluster 1 file 0",
            "SetUp startServer 1 file 0",
            "TearDown stopServer 1 file 0",
            "Helper startCluster 1 file 0",
            "Helper new Cluster 2 file 1",
            "Helper Cluster.start 2 file 1",
            "Helper Cluster.run 3 file 1",
        ]
    );
    // What the helper runs, runs where the test calls it.
    let call = CLUSTER_TEST
        .find("startCluster")
        .expect("the test calls it");
    let units = context_with(CLUSTER_TEST, &[CLUSTER_TEST_BASE, CLUSTER], "replicates");
    let start = units.iter().find(|unit| unit.name == "Cluster.start");
    assert_eq!(
        start.and_then(|unit| unit.anchor).map(|anchor| anchor.at),
        Some(call)
    );
}

#[test]
fn a_static_helper_of_another_file_and_what_it_calls_in_its_file() {
    let test = "class T {\n  @Test void t() { int port = Ports.free(); }\n}\n";
    let ports = "final class Ports {\n  static int free() { return scan(); }\n  \
                 static int scan() { return 0; }\n  static int unused() { return 1; }\n}\n";
    assert_eq!(
        units_with(test, &[ports], "t"),
        ["Helper Ports.free 1 file 0", "Helper Ports.scan 2 file 0"]
    );
}

#[test]
fn what_a_test_creates_and_calls_on_a_class_of_another_file_runs() {
    let worker = "class Worker {\n  private final Executor pool = Executors.newFixedThreadPool(2);\n  \
                  Worker() { pool.execute(this::work); }\n  void start() { new Thread().start(); }\n  \
                  void work() {}\n}\n";
    let cases = [
        "class T {\n  @Test void t() { new Worker().start(); }\n}\n",
        "class T {\n  @Test void t() { Worker worker = new Worker(); worker.start(); }\n}\n",
        "class T {\n  @Test void t() { var worker = new Worker(); worker.start(); }\n}\n",
        "class T {\n  private Worker worker = new Worker();\n  \
         @Test void t() { worker.start(); }\n}\n",
        "class T {\n  private Worker worker;\n  @Before void setUp() { this.worker = new Worker(); }\n  \
         @Test void t() { this.worker.start(); }\n}\n",
    ];
    for test in cases {
        let units = units_with(test, &[worker], "t");
        let helpers: Vec<&str> = units
            .iter()
            .map(String::as_str)
            .filter(|unit| unit.contains("file 0"))
            .collect();
        let depth = |name| helpers.iter().find(|unit| unit.starts_with(name));
        // Creating a worker runs its field's initialiser and its constructor, which calls `work`.
        assert!(depth("Helper new Worker").is_some(), "{test}: {units:#?}");
        assert!(depth("Helper Worker.start").is_some(), "{test}: {units:#?}");
        assert!(depth("Helper Worker.work").is_some(), "{test}: {units:#?}");
    }
    // The first case exactly: the field and the constructor are both `new Worker`.
    assert_eq!(
        units_with(cases[0], &[worker], "t"),
        [
            "Helper new Worker 1 file 0",
            "Helper new Worker 1 file 0",
            "Helper Worker.start 1 file 0",
            "Helper Worker.work 2 file 0",
        ]
    );
}

#[test]
fn a_local_variable_hides_a_class_of_its_name_and_an_unknown_type_runs_nothing() {
    let test = "class T {\n  @Test void t() { Client Worker = connect(); Worker.start(); }\n  \
                Client connect() { return null; }\n}\n";
    let worker = "class Worker {\n  static void start() {}\n}\n";
    assert_eq!(units_with(test, &[worker], "t"), ["Helper connect 1"]);
}

#[test]
fn a_nearer_class_shadows_a_life_cycle_method_of_another_file() {
    let test = "class T extends Middle {\n  @BeforeEach void setUp() {}\n  @Test void t() {}\n}\n\
                class Middle extends Base {\n  @AfterEach void tearDown() {}\n}\n";
    let base = "class Base {\n  @BeforeEach void setUp() { Thread.sleep(100); }\n  \
                @AfterEach void tearDown() {}\n  @AfterEach void close() {}\n}\n";
    assert_eq!(
        units_with(test, &[base], "t"),
        [
            "SetUp setUp 1",
            "TearDown tearDown 1",
            "TearDown close 1 file 0"
        ]
    );
}

#[test]
fn a_hierarchy_goes_on_through_several_files_and_a_cycle_across_files_ends() {
    let test = "class A extends B {\n  @Before void a() {}\n  @Test void t() { helper(); }\n}\n";
    let b = "class B extends C {\n  @Before void b() {}\n  void helper() { helper(); }\n}\n";
    let c = "class C extends A {\n  @Before void c() {}\n}\n";
    // `A` of the third file is another class than the test's, and it extends `B` again.
    let a = "class A extends B {\n  @Before void a2() {}\n}\n";
    assert_eq!(
        units_with(test, &[b, c, a], "t"),
        [
            "SetUp a 1",
            "SetUp b 1 file 0",
            "Helper helper 1 file 0",
            "SetUp c 1 file 1",
            "SetUp a2 1 file 2",
        ]
    );
}

#[test]
fn a_class_several_files_declare_is_the_first_file_s() {
    let test = "class T {\n  @Test void t() { Ports.free(); }\n}\n";
    let near = "class Ports {\n  static int free() { return 1; }\n}\n";
    let far = "class Ports {\n  static int free() { return 2; }\n}\n";
    assert_eq!(
        units_with(test, &[near, far], "t"),
        ["Helper Ports.free 1 file 0"]
    );
}

#[test]
fn a_class_of_the_test_s_file_comes_before_one_of_another_file() {
    let test = "class T {\n  @Test void t() { Fake.tick(); new Fake(); }\n  \
                static class Fake {\n    Fake() {}\n    static void tick() {}\n  }\n}\n";
    let other = "class Fake {\n  Fake() {}\n  static void tick() {}\n}\n";
    assert_eq!(
        units_with(test, &[other], "t"),
        ["Helper new Fake 1", "Helper Fake.tick 1"]
    );
}

#[test]
fn broken_and_empty_other_files_give_what_they_hold() {
    let test = "class T extends Base {\n  @Test void t() { helper(); Util.run(); }\n}\n";
    let broken = "class Base {\n  void helper() { }\n  void broken( {\n}\n";
    // Unclosed, the class is no class to tree-sitter: its methods stay inside an error node.
    let unclosed = "class Util {\n  static void run() { }\n  void broken( {\n";
    assert_eq!(
        units_with(test, &["", broken, "class {", unclosed], "t"),
        ["Helper helper 1 file 1"]
    );
}

#[test]
fn wanted_lists_the_classes_a_test_file_uses_and_does_not_declare() {
    let source = "package org.example.cluster;\n\n\
                  import java.util.*;\n\n\
                  class ClusterTest extends ClusterTestBase<Node> {\n  \
                  private static final Server SERVER = Server.create();\n  \
                  private final Client client = new Client(SERVER.address());\n  \
                  private Journal journal;\n  \
                  private final List<String> names = new ArrayList<>();\n\n  \
                  @BeforeEach void setUp() { journal = Journals.open(); names.add(\"a\"); }\n\n  \
                  @Test void replicates() throws Exception {\n    \
                  Worker worker = new Worker();\n    worker.start();\n    \
                  var queue = new org.example.Queue<String>();\n    queue.poll();\n    \
                  Thread.sleep(100);\n    journal.flush();\n    \
                  String text = \"x\";\n    text.trim();\n    \
                  Local local = new Local();\n    local.run();\n    \
                  helper();\n    this.client.send(text);\n    \
                  Assertions.assertEquals(1, Counters.count(client));\n  }\n\n  \
                  @ParameterizedTest @MethodSource(\"org.example.Cases#sizes\") void sizes(int n) {}\n\n  \
                  void helper() { unknown.call(); }\n\n  \
                  static class Local { void run() {} }\n}\n";
    assert_eq!(
        wanted_types(source),
        [
            "ClusterTestBase",
            "Client",
            "Server",
            "Journals",
            "Worker",
            "Queue",
            "Journal",
            "Counters",
            "Cases",
        ]
    );
}

#[test]
fn a_file_that_declares_everything_it_uses_wants_nothing() {
    let source = "class T extends Base {\n  @Test void t() { new Helper().run(); Helper.check(); }\n}\n\
                  class Base {}\nclass Helper {\n  void run() {}\n  static void check() {}\n}\n";
    assert!(wanted_types(source).is_empty());
}

#[test]
fn parameter_sources_of_other_files_count() {
    let test = "class T extends Base {\n  \
                @ParameterizedTest @MethodSource(\"org.example.Cases#sizes\") void a(int n) {}\n  \
                @Test(dataProvider = \"zones\") void b(String zone) {}\n}\n";
    let base =
        "class Base {\n  @DataProvider(name = \"zones\") Object[][] load() { return null; }\n}\n";
    let cases = "class Cases {\n  static Stream<Integer> sizes() { return null; }\n}\n";
    assert_eq!(
        units_with(test, &[base, cases], "a"),
        ["ParameterSource Cases.sizes 1 file 1"]
    );
    assert_eq!(
        units_with(test, &[base, cases], "b"),
        ["ParameterSource load 1 file 0"]
    );
}
