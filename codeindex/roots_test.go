package codeindex

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/workspace"
)

// newRootsWithBilling is newIndex's workspace with a second folder,
// billing, holding files, both indexed and ready; closed by the test's end.
func newRootsWithBilling(t *testing.T, files map[string]string) (*workspace.Workspace, *Roots, workspace.Folder) {
	t.Helper()
	ws, primary, state := newIndex(t, false)
	second := filepath.Join(t.TempDir(), "billing")
	for f, text := range files {
		os.MkdirAll(filepath.Join(second, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(second, f), []byte(text), 0o644)
	}
	r := NewRoots(ws, primary, Options{StateDir: state, Watch: primary.opts.Watch})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { r.Close(); cancel() })
	r.Start(ctx)
	f, err := ws.AddFolder(second, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(f); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Ready():
	case <-time.After(60 * time.Second):
		t.Fatal("the folders' indexes never became ready")
	}
	return ws, r, f
}

func TestRootsSearchMapAndRemove(t *testing.T) {
	ws, r, f := newRootsWithBilling(t, map[string]string{
		"inv/invoice.go": "package inv\n\n// Surcharge is the late payment penalty.\nfunc Surcharge(days int) int { return days * 3 }\n",
	})
	ctx := context.Background()
	second := f.Root
	if !searchHas(r, "late payment penalty", "billing/inv/invoice.go")() {
		out, err := SearchText(ctx, r, "late payment penalty", 5)
		t.Fatalf("search misses billing/inv/invoice.go: %q %v", out, err)
	}
	if !searchHas(r, "value added tax", "pkg/tax.go")() {
		t.Fatal("search misses the first folder's pkg/tax.go")
	}
	// path: filters are written over the paths the user sees, the
	// folder's name first.
	for _, tc := range []struct {
		q, path string
		want    bool
	}{
		{"payment path:billing/inv", "billing/inv/invoice.go", true},
		{"payment path:billing", "billing/inv/invoice.go", true},
		{"payment path:ing/inv/inv", "billing/inv/invoice.go", true},
		{"payment path:inv/invoice.go", "billing/inv/invoice.go", true},
		{"payment path:billing/*.go", "billing/inv/invoice.go", true},
		{"payment path:*/inv/*.go", "billing/inv/invoice.go", true},
		{"payment path:billing/inv/invoice.go", "billing/inv/invoice.go", true},
		{"payment path:pkg", "billing/inv/invoice.go", false},
		{"payment path:other/inv", "billing/inv/invoice.go", false},
		{"payment path:billing/pkg", "billing/inv/invoice.go", false},
		{"tax path:billing", "pkg/tax.go", false},
		{"tax path:pkg/", "pkg/tax.go", true},
	} {
		if got := searchHas(r, tc.q, tc.path)(); got != tc.want {
			out, err := SearchText(ctx, r, tc.q, 5)
			t.Errorf("search %q has %s: %v, want %v (%q %v)", tc.q, tc.path, got, tc.want, out, err)
		}
	}
	m := MapText(r, []string{"billing/inv/invoice.go"}, 512)
	if !strings.Contains(m, "billing/inv/invoice.go:") || !strings.Contains(m, "func Surcharge") || !strings.Contains(m, "pkg/tax.go:") {
		t.Fatalf("map misses a folder:\n%s", m)
	}
	if _, st := r.RenderMap(Focus{}, 40); st.Tokens > 40 {
		t.Errorf("map of 40 tokens took %d", st.Tokens)
	}
	defs := r.Definitions([]string{"Surcharge"})
	if len(defs) != 1 || defs[0].Path != "billing/inv/invoice.go" {
		t.Fatalf("Definitions(Surcharge) = %+v", defs)
	}
	if s, ok := r.EnclosingSymbol("billing/inv/invoice.go", 4); !ok || s.Name() != "Surcharge" || s.Path != "billing/inv/invoice.go" {
		t.Fatalf("EnclosingSymbol = %+v, %v", s, ok)
	}
	// A save in the second folder reaches its index through the editor path.
	os.WriteFile(filepath.Join(f.Root, "inv/invoice.go"), []byte("package inv\n\n// Rebate is the early payment discount.\nfunc Rebate(days int) int { return days }\n"), 0o644)
	r.DocumentSaved(filepath.Join(f.Root, "inv/invoice.go"))
	eventually(t, "the saved file searchable", searchHas(r, "early payment discount", "billing/inv/invoice.go"))

	ws.RemoveFolder(second)
	r.Remove(f.Root)
	if out, _ := SearchText(ctx, r, "early payment discount", 5); strings.Contains(out, "billing/") {
		t.Fatalf("a removed folder is still searched: %q", out)
	}
	if m := MapText(r, nil, 512); strings.Contains(m, "billing/") {
		t.Fatalf("a removed folder is still mapped:\n%s", m)
	}
}

// TestRootsScopeReachesEveryFolder: index.include and index.exclude are
// written over the workspace's paths; each folder rescans under its part.
func TestRootsScopeReachesEveryFolder(t *testing.T) {
	ws, r, _ := newRootsWithBilling(t, map[string]string{
		"inv/invoice.go": "package inv\n\n// Surcharge is the late payment penalty.\nfunc Surcharge(days int) int { return days * 3 }\n",
		"old/legacy.go":  "package old\n\n// Dunning sends the late payment reminder.\nfunc Dunning() {}\n",
	})
	eventually(t, "both billing files searchable", func() bool {
		return searchHas(r, "late payment", "billing/inv/invoice.go")() && searchHas(r, "late payment", "billing/old/legacy.go")()
	})
	rescan := func(s workspace.Scope) {
		t.Helper()
		changed, err := ws.SetScope(s)
		if err != nil || !changed {
			t.Fatalf("SetScope(%+v): %v, %v", s, changed, err)
		}
		done := make(chan struct{}, 2)
		for _, l := range r.Locals() {
			l.ScopeChanged(func() { done <- struct{}{} })
		}
		for range r.Locals() {
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("a folder never finished rescanning")
			}
		}
	}
	rescan(workspace.Scope{Exclude: []string{"billing/old"}})
	if !searchHas(r, "late payment", "billing/inv/invoice.go")() || searchHas(r, "late payment", "billing/old/legacy.go")() {
		t.Error("exclude billing/old: the folder's old/ is still searched, or inv/ is not")
	}
	if !searchHas(r, "value added tax", "pkg/tax.go")() {
		t.Error("exclude billing/old took the first folder's files")
	}
	rescan(workspace.Scope{Include: []string{"billing"}})
	if searchHas(r, "value added tax", "pkg/tax.go")() || !searchHas(r, "late payment", "billing/old/legacy.go")() {
		t.Error("include billing: the first folder is still searched, or billing is not")
	}
	rescan(workspace.Scope{Include: []string{"pkg"}})
	if !searchHas(r, "value added tax", "pkg/tax.go")() || searchHas(r, "late payment", "billing/inv/invoice.go")() {
		t.Error("include pkg: billing is still searched, or pkg is not")
	}
}
