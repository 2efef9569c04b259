; Finds the test functions of a Rust file.
;
; Captures read by src/extract: @test is the test function, @name its name, @comment every
; comment (for ignore markers). Captures starting with an underscore only feed the predicates.
; Attributes are siblings of the function in the tree, not children: src/extract widens the range
; to the first attribute or doc comment.

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

[(line_comment) (block_comment)] @comment
