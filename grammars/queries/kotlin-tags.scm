; coder's tags query for Kotlin: classes, interfaces, objects, functions, properties, calls, types.
(class_declaration
  name: (identifier) @name) @definition.class

(object_declaration
  name: (identifier) @name) @definition.class

(function_declaration
  name: (identifier) @name) @definition.function

(type_alias
  (identifier) @name) @definition.type

(source_file
  (property_declaration
    (variable_declaration (identifier) @name)) @definition.constant)

(class_body
  (property_declaration
    (variable_declaration (identifier) @name)) @definition.field)

(call_expression
  . (identifier) @name) @reference.call

(call_expression
  . (navigation_expression (identifier) @name .)) @reference.call

(user_type
  . (identifier) @name) @reference.type
