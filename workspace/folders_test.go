package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFoldersResolveRelAbs(t *testing.T) {
	base := t.TempDir()
	first, second := filepath.Join(base, "app"), filepath.Join(base, "lib")
	for _, d := range []string{first, second, filepath.Join(first, "lib"), filepath.Join(base, "other")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(second, "util.go"), []byte("package lib\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := Open(first)
	if err != nil {
		t.Fatal(err)
	}
	// "lib" is a directory of the first folder: the folder gets another name.
	f, err := ws.AddFolder(second, "")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "lib-2" {
		t.Fatalf("folder name = %q, want lib-2 (the first folder has a lib/ entry)", f.Name)
	}
	realSecond, _ := filepath.EvalSymlinks(second)
	abs, err := ws.Resolve("lib-2/util.go")
	if err != nil || abs != filepath.Join(realSecond, "util.go") {
		t.Fatalf("Resolve(lib-2/util.go) = %q, %v", abs, err)
	}
	if rel := ws.Rel(abs); rel != "lib-2/util.go" {
		t.Fatalf("Rel = %q, want lib-2/util.go", rel)
	}
	if got := ws.Abs("lib-2/util.go"); got != abs {
		t.Fatalf("Abs = %q, want %q", got, abs)
	}
	if got, err := ws.Resolve(filepath.Join(second, "util.go")); err != nil || got != abs {
		t.Fatalf("Resolve(absolute in second) = %q, %v", got, err)
	}
	// The first folder's paths are unchanged.
	if abs, err := ws.Resolve("lib/x.go"); err != nil || ws.Rel(abs) != "lib/x.go" {
		t.Fatalf("Resolve(lib/x.go) = %q, %v", abs, err)
	}
	for _, p := range []string{"lib-2/../../other/x", "../other/x", filepath.Join(base, "other", "x")} {
		if _, err := ws.Resolve(p); !errors.Is(err, ErrOutside) {
			t.Errorf("Resolve(%q) = %v, want ErrOutside", p, err)
		}
	}
	if _, err := ws.ResolveWritable("lib-2/.git/config"); !errors.Is(err, ErrOutside) {
		t.Errorf("ResolveWritable into the second folder's .git = %v, want refused", err)
	}
	if why, ok := ws.Protected("lib-2/.vscode/settings.json"); !ok || why == "" {
		t.Errorf("Protected(lib-2/.vscode/settings.json) = %q, %v", why, ok)
	}
	if _, err := ws.AddFolder(filepath.Join(first, "lib"), ""); !errors.Is(err, ErrNestedFolder) {
		t.Errorf("AddFolder(inside the first) = %v, want ErrNestedFolder", err)
	}
	files, _ := ws.WalkAll(WalkOptions{})
	found := false
	for _, f := range files {
		found = found || f.Rel == "lib-2/util.go"
	}
	if !found {
		t.Errorf("WalkAll lists %v, want lib-2/util.go among them", files)
	}
	if _, ok := ws.RemoveFolder(second); !ok {
		t.Fatal("RemoveFolder: not found")
	}
	if _, err := ws.Resolve("lib-2/util.go"); err != nil {
		t.Fatal(err) // now a plain (nonexistent) path of the first folder
	} else if _, err := ws.Resolve(filepath.Join(second, "util.go")); !errors.Is(err, ErrOutside) {
		t.Errorf("after removal, the second folder's file resolves: %v", err)
	}
}
