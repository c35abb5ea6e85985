; coder's tags query for Bash: functions, top-level variables, commands and expansions.
(function_definition
  name: (word) @name) @definition.function

(program
  (variable_assignment
    name: (variable_name) @name) @definition.constant)

(program
  (declaration_command
    (variable_assignment
      name: (variable_name) @name)) @definition.constant)

(command
  name: (command_name (word) @name)) @reference.call

(simple_expansion
  (variable_name) @name) @reference.variable

(expansion
  (variable_name) @name) @reference.variable
