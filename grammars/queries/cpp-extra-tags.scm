; coder's additions to tree-sitter-cpp's tags query: references (calls, types,
; constructions), namespaces and macros.
(namespace_definition
  name: (namespace_identifier) @name) @definition.module

(preproc_def
  name: (identifier) @name) @definition.constant

(preproc_function_def
  name: (identifier) @name) @definition.macro

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (qualified_identifier name: (identifier) @name)) @reference.call

(call_expression
  function: (field_expression field: (field_identifier) @name)) @reference.call

(new_expression
  type: (type_identifier) @name) @reference.class

(type_identifier) @name @reference.type
