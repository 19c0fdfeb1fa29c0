; Cairn tags query for Go. Capture conventions: see repomap/lang.go.

(function_declaration name: (identifier) @name) @definition.function

(method_declaration
  receiver: (parameter_list) @receiver
  name: (field_identifier) @name) @definition.method

(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name) @definition.type
(type_alias name: (type_identifier) @name) @definition.type

(method_elem name: (field_identifier) @name) @definition.method

(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @definition.variable)))

; Qualified references: pkg.Name resolves to the package's definitions when
; pkg is one of the file's imports (repomap/tags.go), not to any Name.
(import_spec) @import
(qualified_type package: (package_identifier) @qualifier name: (type_identifier) @name) @reference.type
(selector_expression operand: (identifier) @qualifier field: (field_identifier) @name) @reference.member

(call_expression function: (identifier) @name) @reference.call
(selector_expression field: (field_identifier) @name) @reference.member
(type_identifier) @reference.type
