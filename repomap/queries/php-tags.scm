; Cairn tags query for PHP. Capture conventions: see repomap/lang.go.

(function_definition name: (name) @name) @definition.function
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(method_declaration name: (name) @name) @definition.method
(const_declaration (const_element (name) @name)) @definition.constant

(function_call_expression function: (name) @name) @reference.call
(function_call_expression function: (qualified_name (name) @name)) @reference.call
(member_call_expression name: (name) @name) @reference.call
(scoped_call_expression name: (name) @name) @reference.call
(object_creation_expression (name) @name) @reference.class
(object_creation_expression (qualified_name (name) @name)) @reference.class
(base_clause (name) @name) @reference.class
(class_interface_clause (name) @name) @reference.class
(named_type (name) @name) @reference.type
