; Finds the tests of a Python file as pytest and unittest collect them.
;
; Captures read by src/extract/query.rs:
;   @test      the test: the decorated definition when there are decorators, so that the range
;              starts at the first one                        @name        its name
;   @scope     a class around tests                           @scope.name  its name
;   @comment   every comment, for ignore markers
; Captures starting with an underscore only feed the predicates.
; `async def` is a function_definition too, so async tests need no pattern of their own.

; pytest: module-level functions whose name starts with `test` (`test_x` and `testX`).
(module
  [
    (function_definition name: (identifier) @name) @test
    (decorated_definition definition: (function_definition name: (identifier) @name)) @test
  ]
  (#match? @name "^test"))

; pytest: `test` methods of classes named `Test...`.
(class_definition
  name: (identifier) @_class
  body: (block
    [
      (function_definition name: (identifier) @name) @test
      (decorated_definition definition: (function_definition name: (identifier) @name)) @test
    ])
  (#match? @_class "^Test")
  (#match? @name "^test"))

; unittest: `test` methods of classes deriving from `unittest.TestCase`, `IsolatedAsyncioTestCase`
; or a project base class named `...TestCase`, `...Test` or `...Tests`.
(class_definition
  superclasses: (argument_list
    [(identifier) @_base (attribute attribute: (identifier) @_base)])
  body: (block
    [
      (function_definition name: (identifier) @name) @test
      (decorated_definition definition: (function_definition name: (identifier) @name)) @test
    ])
  (#match? @_base "(TestCase|Tests?)$")
  (#match? @name "^test"))

; What ids and ignore markers need.
(class_definition name: (identifier) @scope.name) @scope

(comment) @comment
