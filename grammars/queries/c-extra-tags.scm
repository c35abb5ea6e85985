; coder's additions to tree-sitter-c's tags query: it has no references, which the
; repo map's graph is built from. Also macros and global variables.
(preproc_def
  name: (identifier) @name) @definition.constant

(preproc_function_def
  name: (identifier) @name) @definition.macro

(translation_unit
  (declaration
    declarator: [(identifier) @name (init_declarator declarator: (identifier) @name)]) @definition.variable)

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression field: (field_identifier) @name)) @reference.call

(type_identifier) @name @reference.type
