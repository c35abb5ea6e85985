; coder's addition for OCaml interfaces (.mli): `val` specifications are the definitions there.
(value_specification
  (value_name) @name) @definition.function
