; Cairn tags query for C#. Capture conventions: see repomap/lang.go.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
(property_declaration name: (identifier) @name) @definition.property
(delegate_declaration name: (identifier) @name) @definition.type

(namespace_declaration name: (_) @name) @scope.namespace
(file_scoped_namespace_declaration name: (_) @name) @scope.namespace

(invocation_expression function: (identifier) @name) @reference.call
(invocation_expression function: (member_access_expression name: (identifier) @name)) @reference.call
(object_creation_expression type: (identifier) @name) @reference.class
(base_list (identifier) @name) @reference.class
(variable_declaration type: (identifier) @name) @reference.type
(parameter type: (identifier) @name) @reference.type
(generic_name (identifier) @name) @reference.type
(method_declaration returns: (identifier) @name) @reference.type
(property_declaration type: (identifier) @name) @reference.type
