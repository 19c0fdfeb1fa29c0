package cairn_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers is the package order of DESIGN.md ("Packages and what they may
// import") as layers, lowest first: a package imports only packages of
// lower layers. DESIGN.md's table lists each package's allowed imports
// rather than one strict row order (tools, listed below codeindex, imports
// it), so the layers are what those lists imply.
var layers = [][]string{
	{"workspace", "redact", "tokencount", "tools/shell/sandbox", "internal/corpora", "internal/benchlat", "internal/testenv", "internal/mcptest", "internal/gcroom"},
	{"model", "protocol", "checkpoint", "trace", "repomap", "search", "tools/shell"},
	{"codeindex", "lspclient"},
	{"contextengine", "tools"},
	{"tools/mcp"},
	{"agent"},
	{"server", "acp"},
	{"evals"},
	{"cmd/cairn", "."},
}

// anyBelow, as a package's whole entry, allows every package of a lower
// layer (the commands).
const anyBelow = "any package below"

// allowed lists, for each package, the Cairn packages it may import, each
// by its exact path. Every package of the module has its own entry (a
// subpackage inherits nothing from its directory's parent), and every
// entry must name a lower layer. "." is the module's root package.
var allowed = map[string][]string{
	"workspace":           {},
	"redact":              {},
	"tokencount":          {},
	"tools/shell/sandbox": {}, // linked into every binary as the OS sandbox launcher
	"internal/corpora":    {}, // test support: finds the real corpora of the quality sets
	"internal/benchlat":   {}, // test support: how latency benchmarks report percentiles and CPU time
	"internal/testenv":    {}, // test support: what a test needs from the machine (skip, or fail under CI)
	"internal/mcptest":    {}, // test support: a real MCP server over HTTP or SSE behind a header check
	"internal/gcroom":     {}, // the GC target from the live heap, for the processes that own their runtime

	"model":       {"tokencount"},
	"protocol":    {"workspace", "tokencount"},
	"checkpoint":  {"workspace"},
	"trace":       {"redact", "tokencount"},
	"repomap":     {"workspace", "tokencount"},
	"search":      {"workspace"},
	"tools/shell": {"redact", "tools/shell/sandbox", "workspace"},

	"codeindex": {"repomap", "search", "workspace", "tokencount"},
	"lspclient": {"protocol", "workspace"},

	"contextengine": {"codeindex", "workspace", "redact", "model", "tokencount"},
	"tools":         {"workspace", "codeindex", "checkpoint", "redact", "model", "tokencount", "tools/shell", "tools/shell/sandbox"},

	"tools/mcp": {"tools", "tools/shell"},

	"agent": {"codeindex", "model", "tools", "tools/mcp", "contextengine", "checkpoint", "trace", "protocol", "workspace", "tokencount", "redact", "internal/gcroom"},

	"server": {"protocol", "agent", "codeindex", "model", "tools", "tools/mcp", "contextengine", "trace", "workspace"},
	"acp":    {"codeindex", "agent", "protocol", "tools", "tools/mcp", "contextengine", "checkpoint", "workspace"},

	"evals": {"server", "lspclient", "protocol", "agent", "model", "checkpoint", "workspace", "redact", "tokencount"},

	"cmd/cairn": {anyBelow},
	".":         {},
}

const module = "github.com/cairn-dev/cairn"

func layerOf() map[string]int {
	m := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			m[p] = i
		}
	}
	return m
}

// The rules themselves point down: every allowed import is of a lower
// layer, and every name in them is a package in the layers.
func TestImportRulesPointDown(t *testing.T) {
	layer := layerOf()
	for pkg, deps := range allowed {
		l, ok := layer[pkg]
		if !ok {
			t.Errorf("%s has import rules but no layer", pkg)
		}
		for _, d := range deps {
			if d == anyBelow {
				continue
			}
			dl, ok := layer[d]
			if !ok {
				t.Errorf("%s may import %s, which has no layer", pkg, d)
			} else if dl >= l {
				t.Errorf("%s (layer %d) may import %s (layer %d): imports point down only", pkg, l, d, dl)
			}
		}
	}
}

func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	layer := layerOf()
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := ours(fields[0])
		if !ok {
			continue
		}
		seen[pkg] = true
		rules, known := allowed[pkg]
		l, layered := layer[pkg]
		if !known || !layered {
			t.Errorf("package %s has no import rule or layer: add it to allowed and layers (nothing is inherited from a parent)", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := ours(imp)
			if !ok {
				continue
			}
			dl, layered := layer[dep]
			switch {
			case !layered:
				t.Errorf("%s imports %s, which has no layer", pkg, dep)
			case dl >= l:
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point down only", pkg, l, dep, dl)
			case !slices.Contains(rules, dep) && !slices.Contains(rules, anyBelow):
				// Exact: allowing tools does not allow tools/shell.
				t.Errorf("%s imports %s, which its rules do not allow", pkg, dep)
			}
		}
	}
	for pkg := range allowed {
		if !seen[pkg] {
			t.Errorf("allowed has rules for %s, which is not a package of the module", pkg)
		}
	}
}

// ours returns the module-relative path of a Cairn package ("." for the
// root); ok is false for every other import.
func ours(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}
