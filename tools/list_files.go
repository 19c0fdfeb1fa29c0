package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

const listFilesDescription = `List the files of the workspace, every folder of it (ignored, vendored and oversized files are left out). Optional path restricts the listing to a directory; optional glob filters names ("*.go", "internal/**/*_test.go").`

// ListFiles is the list_files tool.
func ListFiles() *Tool {
	return &Tool{
		Name:        "list_files",
		Description: listFilesDescription,
		Schema: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"workspace-relative directory"},
			"glob":{"type":"string"}},
			"additionalProperties":false}`),
		Risk:           RiskRead,
		Idempotent:     true,
		MaxOutputBytes: 32 << 10,
		Run:            runListFiles,
	}
}

func runListFiles(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in struct {
		Path string `json:"path"`
		Glob string `json:"glob"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return errorResult("invalid input: %v", err), nil
	}
	abs, err := env.WS.Resolve(in.Path)
	if err != nil {
		return errorResult("cannot list %q: %v", in.Path, err), nil
	}
	prefix := env.WS.Rel(abs)
	if prefix == "." {
		prefix = ""
	}
	files, _ := env.WS.WalkAll(walkOptions) // every workspace folder
	seen := map[string]bool{}
	var out []string
	add := func(rel string) {
		if seen[rel] {
			return
		}
		if prefix != "" && rel != prefix && !strings.HasPrefix(rel, prefix+"/") {
			return
		}
		if in.Glob != "" && !matchGlob(in.Glob, rel) {
			return
		}
		seen[rel] = true
		out = append(out, rel)
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		add(f.Rel)
	}
	for _, d := range env.Drafts.All() { // files this run proposes to create
		if !d.BaseExists && !d.Deleted {
			add(d.Rel)
		}
	}
	if len(out) == 0 {
		return Result{Content: "no files match", Summary: "no files"}, nil
	}
	return Result{Content: strings.Join(out, "\n") + "\n", Summary: fmt.Sprintf("%d files", len(out))}, nil
}

// matchGlob matches a slash path against a glob where "**" spans directories
// and a pattern without "/" matches the base name.
func matchGlob(glob, rel string) bool {
	if !strings.Contains(glob, "/") {
		ok, _ := path.Match(glob, path.Base(rel))
		return ok
	}
	return matchParts(strings.Split(glob, "/"), strings.Split(rel, "/"))
}

func matchParts(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if matchParts(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, _ := path.Match(g[0], p[0]); !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}
