package tools

import "github.com/cairn-dev/cairn/workspace"

// The file tools see the whole workspace: index.include/index.exclude
// narrow what is indexed, not what the agent may list or read.
var walkOptions = workspace.WalkOptions{AllFiles: true}

// Builtins returns the built-in tools for the workspace at root; commands
// are confined by sb.
func Builtins(root string, sb *CommandSandbox) []*Tool {
	return []*Tool{ReadFile(), ListFiles(), EditFileIn(root), GetDiagnostics(), RunCommandWith(root, sb), SearchCode(), RepoMap(), UpdatePlan()}
}

// NewBuiltinRegistry returns a registry holding the built-in tools, with
// commands sandboxed in mode auto.
func NewBuiltinRegistry(root string) *Registry {
	return NewBuiltinRegistryWith(root, NewCommandSandbox(root))
}

// NewBuiltinRegistryWith returns a registry holding the built-in tools,
// with commands confined by sb.
func NewBuiltinRegistryWith(root string, sb *CommandSandbox) *Registry {
	r := NewRegistry()
	for _, t := range Builtins(root, sb) {
		if err := r.Register(t); err != nil {
			panic(err) // the built-in schemas are constants: a failure is a programming error
		}
	}
	return r
}
