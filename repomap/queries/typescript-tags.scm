; Cairn tags query for TypeScript. Capture conventions: see repomap/lang.go.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.function
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(method_definition name: (property_identifier) @name) @definition.method
(method_signature name: (property_identifier) @name) @definition.method
(abstract_method_signature name: (property_identifier) @name) @definition.method
(internal_module name: (identifier) @name) @definition.module
(module name: (identifier) @name) @definition.module

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; Top-level constants with a literal-like value (not require() or other calls).
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(string) (number) (template_string) (object) (array) (true) (false) (regex) (member_expression) (binary_expression) (new_expression)]) @definition.constant))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name value: [(string) (number) (template_string) (object) (array) (true) (false) (regex) (member_expression) (binary_expression) (new_expression)]) @definition.constant)))

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (member_expression property: (property_identifier) @name)) @reference.member

; Export lists name what a module offers: `export { a, b as c }` and the
; re-exports of an index file, `export { a } from './a'`.
(export_statement (export_clause (export_specifier name: (identifier) @name))) @reference.export
(new_expression constructor: (identifier) @name) @reference.class
(extends_clause value: (identifier) @name) @reference.class
(type_identifier) @reference.type
