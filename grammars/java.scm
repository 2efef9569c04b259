; Finds the test methods of a Java file: JUnit 3, 4 and 5, TestNG.
;
; Captures read by src/extract/query.rs:
;   @test      the test method                   @name        its name
;   @scope     a class around tests               @scope.name  its name, joined with `$` in ids
;   @package   the package name, prefixing ids    @comment     every comment, for ignore markers
;   @empty     a node that must have no named children, which a query cannot say
; Captures starting with an underscore only feed the predicates.

; JUnit 4 and 5, TestNG: a method carrying a test annotation. Only the last segment of the
; annotation's name counts, so `@Test`, `@org.junit.Test` and `@Test(timeout = 100)` all match.
(method_declaration
  (modifiers
    [
      (marker_annotation
        name: [(identifier) @_annotation (scoped_identifier name: (identifier) @_annotation)])
      (annotation
        name: [(identifier) @_annotation (scoped_identifier name: (identifier) @_annotation)])
    ])
  name: (identifier) @name
  (#any-of? @_annotation
    "Test" "ParameterizedTest" "RepeatedTest" "TestFactory" "TestTemplate")) @test

; JUnit 3: `public void testX()` in a class extending `TestCase`. Project base classes such as
; `AbstractServiceTestCase` usually extend it in turn, so any superclass named `...TestCase` counts.
(class_declaration
  superclass: (superclass
    [(type_identifier) @_superclass (scoped_type_identifier (type_identifier) @_superclass .)])
  body: (class_body
    (method_declaration
      (modifiers "public")
      type: (void_type)
      name: (identifier) @name
      parameters: (formal_parameters) @empty) @test)
  (#match? @_superclass "TestCase$")
  (#match? @name "^test"))

; What ids and ignore markers need.
(package_declaration [(identifier) (scoped_identifier)] @package)

[
  (class_declaration name: (identifier) @scope.name)
  (interface_declaration name: (identifier) @scope.name)
  (enum_declaration name: (identifier) @scope.name)
  (record_declaration name: (identifier) @scope.name)
] @scope

[(line_comment) (block_comment)] @comment
