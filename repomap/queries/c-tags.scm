; Cairn tags query for C. Capture conventions: see repomap/lang.go.

(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(declaration declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(declaration declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
; File-scope variables (`const struct file_operations ext4_file_operations =
; {...}`, a header's `extern` declaration), at the top level or inside a
; conditional block; not the locals of a function body.
(translation_unit (declaration declarator: [
  (identifier) @name
  (array_declarator declarator: (identifier) @name)
  (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)])]) @definition.variable)
(preproc_ifdef (declaration declarator: [
  (identifier) @name
  (array_declarator declarator: (identifier) @name)
  (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)])]) @definition.variable)
(preproc_if (declaration declarator: [
  (identifier) @name
  (array_declarator declarator: (identifier) @name)
  (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)])]) @definition.variable)

; EXPORT_SYMBOL(name) (and _GPL): the kernel's list of what a file offers
; to the rest of the kernel and to modules, as an export list.
((expression_statement (call_expression function: (identifier) @_export arguments: (argument_list (identifier) @name))) @reference.export
  (#match? @_export "^EXPORT_SYMBOL"))
; A function set in a file-scope operations table (`const struct
; inode_operations ext4_file_inode_operations = { .setattr = ext4_setattr,
; ... }`) is an entry point its subsystem calls through the table: an
; export list too. Lowercase names only: an all-caps value is a constant.
(translation_unit (declaration declarator: (init_declarator value: (initializer_list
  (initializer_pair value: (identifier) @name (#match? @name "^[a-z_][a-z0-9_]*$"))))) @reference.export)
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(type_identifier) @reference.type
; A variable or function whose address is taken (`inode->i_fop =
; &ext4_file_operations`): how a subsystem's operations tables are used.
(pointer_expression argument: (identifier) @name) @reference.value
