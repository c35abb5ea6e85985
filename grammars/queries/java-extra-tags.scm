; coder's addition to tree-sitter-java's tags query: type names used in
; declarations and parameters are references too.
(type_identifier) @name @reference.type
