; Finds the test functions of a Rust file.
;
; Captures read by src/extract/query.rs:
;   @test      the test function                              @name        its name
;   @scope     an inline module around tests                  @scope.name  its name
;   @attached  attributes and doc comments: siblings of the function in the tree, not its
;              children, so src/extract widens a test over the ones directly before it
;   @comment   every comment, for ignore markers
; Captures starting with an underscore only feed the predicates.

; A function preceded by a test attribute, possibly with other attributes and comments between:
; `#[test]`, `#[rstest]`, `#[test_case(...)]`, and any attribute whose path ends in `test`
; (`#[tokio::test]`, `#[sqlx::test]`, `#[test_log::test]`, `#[wasm_bindgen_test]`).
(
  (attribute_item
    (attribute . [(identifier) @_attribute (scoped_identifier name: (identifier) @_attribute)]))
  .
  [(attribute_item) (line_comment) (block_comment)]*
  .
  (function_item name: (identifier) @name) @test
  (#match? @_attribute "^(test|rstest|test_case)$|_test$")
)

; What ids, ranges and ignore markers need. Modules without a body (`mod x;`) hold nothing here.
(mod_item name: (identifier) @scope.name body: (declaration_list)) @scope

(attribute_item) @attached
(line_comment outer: (outer_doc_comment_marker)) @attached
(block_comment outer: (outer_doc_comment_marker)) @attached

[(line_comment) (block_comment)] @comment
