; Cairn tags query for JavaScript. Capture conventions: see repomap/lang.go.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (identifier) @name) @definition.class
(method_definition name: (property_identifier) @name) @definition.method

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(variable_declarator
  name: (identifier) @name
  value: (class)) @definition.class

(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function

; Top-level constants with a literal-like value (not require() or other calls).
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(string) (number) (template_string) (object) (array) (true) (false) (regex) (member_expression) (binary_expression) (new_expression)]) @definition.constant))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name value: [(string) (number) (template_string) (object) (array) (true) (false) (regex) (member_expression) (binary_expression) (new_expression)]) @definition.constant)))

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (member_expression property: (property_identifier) @name)) @reference.member

; Export lists name what a module offers: `export { a, b as c }` and the
; re-exports of an index file, `export { a } from './a'`.
(export_statement (export_clause (export_specifier name: (identifier) @name))) @reference.export
(new_expression constructor: (identifier) @name) @reference.class
(class_heritage (identifier) @name) @reference.class
(jsx_opening_element name: (identifier) @name) @reference.class
(jsx_self_closing_element name: (identifier) @name) @reference.class
