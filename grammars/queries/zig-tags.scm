; coder's tags query for Zig: functions, top-level constants and containers, fields, tests, calls.
(function_declaration
  name: (identifier) @name) @definition.function

(source_file
  (variable_declaration
    (identifier) @name) @definition.constant)

(variable_declaration
  (identifier) @name
  [(struct_declaration) (enum_declaration) (union_declaration) (opaque_declaration)]) @definition.class

(container_field
  name: (identifier) @name) @definition.field

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression member: (identifier) @name)) @reference.call
