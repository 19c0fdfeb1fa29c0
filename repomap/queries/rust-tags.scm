; Cairn tags query for Rust. Capture conventions: see repomap/lang.go.

(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.variable
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro

(impl_item type: (type_identifier) @name) @scope
(impl_item type: (generic_type type: (type_identifier) @name)) @scope
(impl_item type: (scoped_type_identifier name: (type_identifier) @name)) @scope

; `pub use self::buffered::{BufReader, BufWriter}`: a module's re-exports
; name what it offers, as an export list (not pub(crate)).
((use_declaration (visibility_modifier) @_vis argument: (scoped_use_list list: (use_list (identifier) @name))) @reference.export
  (#eq? @_vis "pub"))
((use_declaration (visibility_modifier) @_vis argument: (scoped_use_list list: (use_list (use_as_clause alias: (identifier) @name)))) @reference.export
  (#eq? @_vis "pub"))
((use_declaration (visibility_modifier) @_vis argument: (scoped_identifier name: (identifier) @name)) @reference.export
  (#eq? @_vis "pub"))
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(macro_invocation macro: (identifier) @name) @reference.macro
(type_identifier) @reference.type
