; Cairn tags query for TSX: the TypeScript query (typescript-tags.scm, which
; the loader puts first) plus JSX. Capture conventions: see repomap/lang.go.

(jsx_opening_element name: (identifier) @name) @reference.class
(jsx_self_closing_element name: (identifier) @name) @reference.class
