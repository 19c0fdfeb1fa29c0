package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func writeTree(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func walked(ws *Workspace, opts WalkOptions) []string {
	files, _ := ws.Walk(opts)
	var out []string
	for _, f := range files {
		out = append(out, f.Rel)
	}
	return out
}

// The scope narrows the walk and Ignored alike; exclude wins over include;
// a directory pattern covers what is under it; AllFiles sees past it.
func TestScopeNarrowsWalkAndIgnored(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, "go.mod", "services/api/main.go", "services/api/testdata/big.go", "services/web/app.go",
		"libs/util/util.go", "libs/util/util_test.go", "docs/a.md")
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	all := walked(ws, WalkOptions{})
	changed, err := ws.SetScope(Scope{Include: []string{"services/api", "libs/**/*.go"}, Exclude: []string{"**/testdata", "**/*_test.go"}})
	if err != nil || !changed {
		t.Fatalf("SetScope: %v %v", changed, err)
	}
	want := []string{"libs/util/util.go", "services/api/main.go"}
	if got := walked(ws, WalkOptions{}); !slices.Equal(got, want) {
		t.Errorf("walk in scope = %v, want %v", got, want)
	}
	if got := walked(ws, WalkOptions{AllFiles: true}); !slices.Equal(got, all) {
		t.Errorf("walk of all files = %v, want %v", got, all)
	}
	for rel, ignored := range map[string]bool{
		"services/api/main.go": false, "services/api/testdata/big.go": true, "services/web/app.go": true,
		"libs/util/util.go": false, "libs/util/util_test.go": true, "go.mod": true,
	} {
		if ws.Ignored(rel) != ignored {
			t.Errorf("Ignored(%s) = %v, want %v", rel, !ignored, ignored)
		}
	}
	for dir, ignored := range map[string]bool{"services": false, "services/api": false, "services/api/testdata": true, "services/web": true, "libs": false, "docs": true} {
		if ws.IgnoredDir(dir) != ignored {
			t.Errorf("IgnoredDir(%s) = %v, want %v", dir, !ignored, ignored)
		}
	}
	// The same scope again is no change; a bad pattern changes nothing.
	if changed, _ := ws.SetScope(Scope{Include: []string{"services/api", "libs/**/*.go"}, Exclude: []string{"**/testdata", "**/*_test.go"}}); changed {
		t.Error("the same scope reported as a change")
	}
	for _, bad := range []Scope{{Include: []string{"../other"}}, {Exclude: []string{"/etc/**"}}, {Include: []string{"a/[b"}}} {
		if _, err := ws.SetScope(bad); err == nil {
			t.Errorf("SetScope(%+v) accepted", bad)
		}
	}
	if got := walked(ws, WalkOptions{}); !slices.Equal(got, want) {
		t.Errorf("after refused scopes, walk = %v", got)
	}
	if changed, _ := ws.SetScope(Scope{}); !changed || !slices.Equal(walked(ws, WalkOptions{}), all) {
		t.Error("clearing the scope did not bring every file back")
	}
}

// A scope change makes the watcher watch the directories the scope now
// holds (they were not watched before) and asks for a rescan.
func TestWatcherFollowsScopeChange(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, "a/x.go", "b/y.go")
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.SetScope(Scope{Include: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	wt := ws.NewWatcher(WatchOptions{Debounce: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan Change, 16)
	done := make(chan struct{})
	go func() { defer close(done); wt.Run(ctx, func(c Change) { changes <- c }) }()
	defer func() { cancel(); <-done }()
	waitFor := func(what string, ok func(Change) bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case c := <-changes:
				if ok(c) {
					return
				}
			case <-deadline:
				t.Fatalf("no batch with %s", what)
			}
		}
	}
	// Watches are set up when Run starts: wait until a/ is watched.
	for deadline := time.Now().Add(30 * time.Second); wt.Watches() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("watches = %d, want root and a/", wt.Watches())
		}
	}
	if n := wt.Watches(); n != 2 {
		t.Fatalf("watches = %d before the change, want 2 (b/ is outside the scope)", n)
	}
	if _, err := ws.SetScope(Scope{Include: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	wt.ScopeChanged()
	waitFor("a rescan", func(c Change) bool { return c.Rescan })
	os.WriteFile(filepath.Join(root, "b", "z.go"), []byte("package b\n"), 0o644)
	waitFor("b/z.go", func(c Change) bool { return slices.Contains(c.Paths, "b/z.go") })
}

// TestScopeForFolder: patterns written over the workspace's paths reach a
// folder by its name; a folder the include patterns leave out is excluded
// whole, and a folder added later gets its part at once.
func TestScopeForFolder(t *testing.T) {
	for _, tc := range []struct {
		in   Scope
		want Scope
	}{
		{Scope{}, Scope{}},
		{Scope{Include: []string{"billing/inv", "services"}}, Scope{Include: []string{"inv"}}},
		{Scope{Include: []string{"billing"}}, Scope{Include: []string{"**"}}},
		{Scope{Include: []string{"./billing/"}}, Scope{Include: []string{"**"}}},
		{Scope{Include: []string{"bill*/**/*.go"}}, Scope{Include: []string{"**/*.go"}}},
		{Scope{Include: []string{"services"}}, Scope{Exclude: []string{"**"}}},
		{Scope{Exclude: []string{"**/testdata", "billing/old", "vendor"}}, Scope{Exclude: []string{"**/testdata", "old"}}},
		{Scope{Include: []string{"**/*.go"}, Exclude: []string{"billing"}}, Scope{Include: []string{"**/*.go"}, Exclude: []string{"**"}}},
	} {
		if got := tc.in.ForFolder("billing"); !got.Equal(tc.want) {
			t.Errorf("%+v.ForFolder(billing) = %+v, want %+v", tc.in, got, tc.want)
		}
	}

	first := t.TempDir()
	base := t.TempDir()
	for _, f := range []string{"billing/inv/a.go", "billing/old/b.go", "ledger/book/c.go"} {
		os.MkdirAll(filepath.Join(base, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(base, f), []byte("package x\n"), 0o644)
	}
	w, err := Open(first)
	if err != nil {
		t.Fatal(err)
	}
	billing, err := w.AddFolder(filepath.Join(base, "billing"), "")
	if err != nil {
		t.Fatal(err)
	}
	changed, err := w.SetScope(Scope{Include: []string{"billing/inv", "src"}})
	if err != nil || !changed {
		t.Fatalf("SetScope: %v, %v", changed, err)
	}
	if !billing.WS.InScope("inv/a.go") || billing.WS.InScope("old/b.go") {
		t.Errorf("billing's scope: inv/a.go %v, old/b.go %v", billing.WS.InScope("inv/a.go"), billing.WS.InScope("old/b.go"))
	}
	ledger, err := w.AddFolder(filepath.Join(base, "ledger"), "")
	if err != nil {
		t.Fatal(err)
	}
	if ledger.WS.InScope("book/c.go") {
		t.Error("a folder added later is indexed although index.include names only other folders")
	}
	if changed, _ := w.SetScope(Scope{Include: []string{"billing/inv", "src"}}); changed {
		t.Error("the same scope again reports a change")
	}
	if changed, _ := w.SetScope(Scope{Include: []string{"billing/inv", "src", "ledger"}}); !changed || !ledger.WS.InScope("book/c.go") {
		t.Errorf("including a folder: changed %v, in scope %v", changed, ledger.WS.InScope("book/c.go"))
	}
}
