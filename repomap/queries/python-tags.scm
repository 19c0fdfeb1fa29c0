; Cairn tags query for Python. Capture conventions: see repomap/lang.go.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

(module (expression_statement (assignment left: (identifier) @name) @definition.variable))

(call function: (identifier) @name) @reference.call
(call function: (attribute attribute: (identifier) @name)) @reference.member
(class_definition superclasses: (argument_list (identifier) @name)) @reference.class
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @name))) @reference.member

; __all__ names what a module offers (and what `from m import *` takes).
(module (expression_statement (assignment
  left: (identifier) @_all
  right: [(list (string (string_content) @name)) (tuple (string (string_content) @name))]) @reference.export)
  (#eq? @_all "__all__"))
(type (identifier) @reference.type)
(decorator (identifier) @reference.call)
