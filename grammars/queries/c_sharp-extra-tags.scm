; coder's additions to tree-sitter-c-sharp's tags query: unqualified calls and
; type names in parameters, fields and generics.
(invocation_expression
  function: (identifier) @name) @reference.call

(parameter
  type: (identifier) @name) @reference.type

(generic_name
  (identifier) @name) @reference.type
