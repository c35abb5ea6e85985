; coder's tags query for Dart: classes, mixins, enums, extensions, functions, methods, constructors.
(class_definition
  name: (identifier) @name) @definition.class

(mixin_declaration
  (identifier) @name) @definition.class

(enum_declaration
  name: (identifier) @name) @definition.enum

(extension_declaration
  name: (identifier) @name) @definition.class

(type_alias
  (type_identifier) @name) @definition.type

(function_signature
  name: (identifier) @name) @definition.function

(getter_signature
  name: (identifier) @name) @definition.method

(setter_signature
  name: (identifier) @name) @definition.method

(constructor_signature
  name: (identifier) @name) @definition.method

(program
  (static_final_declaration_list
    (static_final_declaration
      (identifier) @name)) @definition.constant)

((identifier) @name @reference.call
  .
  (selector (argument_part)))

((selector
  (unconditional_assignable_selector
    (identifier) @name @reference.call))
  .
  (selector (argument_part)))

(type_identifier) @name @reference.type
