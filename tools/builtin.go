package tools

import "github.com/cairn-dev/cairn/workspace"

var walkOptions = workspace.WalkOptions{}

// Builtins returns the built-in tools that need nothing but the workspace.
func Builtins() []*Tool {
	return []*Tool{ReadFile(), ListFiles(), EditFile()}
}

// NewBuiltinRegistry returns a registry holding the built-in tools.
func NewBuiltinRegistry() *Registry {
	r := NewRegistry()
	for _, t := range Builtins() {
		if err := r.Register(t); err != nil {
			panic(err) // the built-in schemas are constants: a failure is a programming error
		}
	}
	return r
}
