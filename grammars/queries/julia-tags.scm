; coder's tags query for Julia: modules, types, functions (long and short form), macros, constants, calls.
(module_definition
  (identifier) @name) @definition.module

(abstract_definition
  (type_head [(identifier) @name (binary_expression . (identifier) @name)])) @definition.type

(struct_definition
  (type_head [(identifier) @name (binary_expression . (identifier) @name)])) @definition.class

(function_definition
  (signature
    [(call_expression . (identifier) @name)
     (typed_expression . (call_expression . (identifier) @name))
     (where_expression . (call_expression . (identifier) @name))
     (where_expression . (typed_expression . (call_expression . (identifier) @name)))])) @definition.function

(macro_definition
  (signature
    (call_expression . (identifier) @name))) @definition.macro

(source_file
  (assignment . (call_expression . (identifier) @name)) @definition.function)

(module_definition
  (assignment . (call_expression . (identifier) @name)) @definition.function)

(const_statement
  (assignment . (identifier) @name)) @definition.constant

(call_expression
  . (identifier) @name) @reference.call

(call_expression
  . (field_expression (identifier) @name .)) @reference.call

(macrocall_expression
  (macro_identifier (identifier) @name)) @reference.call

(typed_expression
  (identifier) @name .) @reference.type
