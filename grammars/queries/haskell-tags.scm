; coder's tags query for Haskell: functions, bindings, signatures, types, classes.
(declarations
  (function
    name: (variable) @name) @definition.function)

(declarations
  (bind
    name: (variable) @name) @definition.function)

(declarations
  (signature
    name: (variable) @name) @definition.function)

(data_type
  name: (name) @name) @definition.type

(newtype
  name: (name) @name) @definition.type

(type_synomym
  name: (name) @name) @definition.type

(class
  name: (name) @name) @definition.interface

(data_constructor
  constructor: (prefix (constructor) @name)) @definition.constructor

(apply
  function: (variable) @name) @reference.call

(name) @name @reference.type
