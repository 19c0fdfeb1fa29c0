; Cairn tags query for Ruby. Capture conventions: see repomap/lang.go.

(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(class name: (constant) @name) @definition.class
(class name: (scope_resolution name: (constant) @name)) @definition.class
(module name: (constant) @name) @definition.module
(module name: (scope_resolution name: (constant) @name)) @definition.module
(assignment left: (constant) @name) @definition.constant
; attr_reader :code defines the method code (and attr_writer code=).
((call method: (identifier) @_attr arguments: (argument_list (simple_symbol) @name)) @definition.method
  (#match? @_attr "^attr_(reader|writer|accessor)$"))

(call method: (identifier) @name) @reference.call
(superclass (constant) @name) @reference.class
(scope_resolution name: (constant) @name) @reference.constant
(call receiver: (constant) @name) @reference.class
