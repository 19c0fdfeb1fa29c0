package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/workspace"
)

// The files a question is about come first: the asked file, the files the
// question names, the asked file's package, then the packages of the module
// it imports; nothing else of the workspace.
func TestPriorityFiles(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":           "module example.com/m\n\ngo 1.22\n",
		"api/handler.go":   "package api\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/store\"\n)\n\nfunc H() { fmt.Println(store.Get()) }\n",
		"api/routes.go":    "package api\n",
		"api/api_test.go":  "package api\n",
		"store/store.go":   "package store\n\nfunc Get() int { return 1 }\n",
		"store/cache.go":   "package store\n",
		"unrelated/x.go":   "package unrelated\n",
		"web/app.ts":       "import { f } from './util'\n",
		"web/util.ts":      "export function f() {}\n",
		"docs/notes.md":    "# notes\n",
		"config/limits.go": "package config\n",
	}
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{m: &Manager{ws: ws}, req: AskRequest{Abs: filepath.Join(ws.Root(), "api", "handler.go"),
		Question: "Why does H ignore config/limits.go?"}}
	got := r.priorityFiles()
	want := []string{"api/handler.go", "config/limits.go", "api/routes.go", "store/cache.go", "store/store.go"}
	if !slices.Equal(got, want) {
		t.Errorf("priority files = %v, want %v", got, want)
	}
	r.req = AskRequest{Abs: filepath.Join(ws.Root(), "web", "app.ts"), Question: "what does f do?"}
	if got := r.priorityFiles(); !slices.Equal(got, []string{"web/app.ts", "web/util.ts"}) {
		t.Errorf("priority files of a TypeScript file = %v", got)
	}
}

func TestIndexWaitMessage(t *testing.T) {
	if got := thousands(1234567); got != "1,234,567" {
		t.Errorf("thousands = %q", got)
	}
	if got := thousands(-1234); got != "-1,234" {
		t.Errorf("thousands(-1234) = %q", got)
	}
}
