package cairn_test

import (
	"os/exec"
	"strings"
	"testing"
)

// allowed lists, for each package, the Cairn packages it may import, each
// by its exact path (a subpackage is listed on its own). Imports point one
// way (see DESIGN.md): engines never import the server, and leaf packages
// import nothing of ours.
var allowed = map[string][]string{
	"protocol":      {"workspace", "tokencount"},
	"tokencount":    {},
	"workspace":     {},
	"redact":        {},
	"model":         {"tokencount"},
	"trace":         {"redact", "tokencount"},
	"checkpoint":    {"workspace"},
	"repomap":       {"workspace", "tokencount"},
	"search":        {"workspace"},
	"codeindex":     {"repomap", "search", "workspace", "tokencount"},
	"contextengine": {"codeindex", "workspace", "redact", "model", "tokencount"},
	"tools":         {"workspace", "codeindex", "checkpoint", "redact", "model", "tokencount", "tools/shell", "tools/shell/sandbox"},
	"tools/shell":   {"redact", "tools/shell/sandbox", "workspace"},
	"agent":         {"codeindex", "model", "tools", "tools/mcp", "contextengine", "checkpoint", "trace", "protocol", "workspace", "tokencount", "redact"},
	"lspclient":     {"protocol", "workspace"},
	"server":        {"protocol", "agent", "codeindex", "model", "tools", "tools/mcp", "contextengine", "checkpoint", "trace", "workspace", "redact"},
	"acp":           {"codeindex", "agent", "protocol", "tools", "tools/mcp", "contextengine", "checkpoint", "workspace"},
	"evals":         {"server", "lspclient", "protocol", "agent", "model", "checkpoint", "workspace", "redact", "tokencount"},

	// The OS sandbox launcher is linked into every binary: it imports nothing of ours.
	"tools/shell/sandbox": {},

	// Test support: finds the real corpora of the quality sets.
	"internal/corpora": {},
	// Test support: how latency benchmarks report percentiles and CPU time.
	"internal/benchlat": {},
	// Test support: what a test needs from the machine (skip, or fail under CI).
	"internal/testenv": {},
}

const module = "github.com/cairn-dev/cairn/"

func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if !strings.HasPrefix(fields[0], module) || strings.HasPrefix(pkg, "cmd/") {
			continue // the root and commands may import anything
		}
		ok, known := allowed[pkg]
		if !known {
			// Subpackages inherit their parent's rules.
			parent := pkg[:max(0, strings.LastIndex(pkg, "/"))]
			ok, known = allowed[parent]
			if !known {
				t.Errorf("package %s has no import rule: add it to allowed", pkg)
				continue
			}
			ok = append(append([]string(nil), ok...), parent)
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			// Exact: allowing tools does not allow tools/shell.
			permitted := false
			for _, a := range ok {
				if dep == a {
					permitted = true
				}
			}
			if !permitted {
				t.Errorf("%s imports %s, which the layout does not allow", pkg, dep)
			}
		}
	}
}
