package tools

import "github.com/cairn-dev/cairn/workspace"

var walkOptions = workspace.WalkOptions{}

// Builtins returns the built-in tools for the workspace at root.
func Builtins(root string) []*Tool {
	return []*Tool{ReadFile(), ListFiles(), EditFile(), GetDiagnostics(), RunCommand(root), SearchCode(), RepoMap()}
}

// NewBuiltinRegistry returns a registry holding the built-in tools.
func NewBuiltinRegistry(root string) *Registry {
	r := NewRegistry()
	for _, t := range Builtins(root) {
		if err := r.Register(t); err != nil {
			panic(err) // the built-in schemas are constants: a failure is a programming error
		}
	}
	return r
}
