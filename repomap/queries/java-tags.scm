; Cairn tags query for Java. Capture conventions: see repomap/lang.go.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field

(method_invocation name: (identifier) @name) @reference.call
(object_creation_expression type: (type_identifier) @name) @reference.class
(type_identifier) @reference.type
; A capitalized receiver or qualifier names a class by Java's convention:
; `Collections.sort(l)`, `Arrays.asList(a)`, `TimeUnit.SECONDS` use the
; class (a utility class is used only this way, never as a type).
(method_invocation object: (identifier) @name (#match? @name "^[A-Z][a-z]")) @reference.type
(field_access object: (identifier) @name (#match? @name "^[A-Z][a-z]")) @reference.type
