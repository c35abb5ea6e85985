; coder's extra tags for TSX: components used as JSX elements are references.
((jsx_opening_element
  name: (identifier) @name) @reference.class
  (#match? @name "^[A-Z]"))

((jsx_self_closing_element
  name: (identifier) @name) @reference.class
  (#match? @name "^[A-Z]"))
