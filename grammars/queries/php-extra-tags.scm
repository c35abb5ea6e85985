; coder's additions to tree-sitter-php's tags query: plain function calls (the
; package's pattern expects a qualified name), and `new` with a bare class name.
(function_call_expression
  function: (name) @name) @reference.call

(object_creation_expression
  (name) @name) @reference.class
