package codeindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/workspace"
)

func newIndex(t *testing.T) (*workspace.Workspace, *Index, string) {
	t.Helper()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "pkg"), 0o755)
	os.WriteFile(filepath.Join(root, "pkg/tax.go"), []byte("package pkg\n\n// VATRate is the value added tax.\nconst VATRate = 20\n\n// Gross adds the tax to a net price.\nfunc Gross(net int) int { return net * (100 + VATRate) / 100 }\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nimport \"x/pkg\"\n\nfunc main() { println(pkg.Gross(10)) }\n"), 0o644)
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	var events []Progress
	ix, err := Open(ws, Options{StateDir: state, NoWatch: true, Progress: func(p Progress) { events = append(events, p) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ix.Start(ctx)
	if err := ix.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return ws, ix, state
}

func TestIndexesServeToolsAndFollowSaves(t *testing.T) {
	ws, ix, state := newIndex(t)
	ctx := context.Background()
	out, err := ix.SearchText(ctx, "value added tax", 5)
	if err != nil || !strings.Contains(out, "pkg/tax.go:") {
		t.Fatalf("search: %q %v", out, err)
	}
	m, err := ix.RenderMap(ctx, []string{"main.go"}, 256)
	if err != nil || !strings.Contains(m, "func Gross(net int) int") {
		t.Fatalf("map: %q %v", m, err)
	}
	// A save reaches both indexes.
	abs := ws.Abs("pkg/tax.go")
	os.WriteFile(abs, []byte("package pkg\n\n// Discount lowers a price for loyal customers.\nfunc Discount(p int) int { return p - 1 }\n"), 0o644)
	ix.DocumentSaved(abs)
	deadline := time.Now().Add(time.Minute)
	for {
		out, _ := ix.SearchText(ctx, "loyal customers", 5)
		if strings.Contains(out, "pkg/tax.go:") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search after save: %q", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if defs := ix.Map.DefinitionsOf([]string{"Discount"}); len(defs) != 1 {
		t.Errorf("map after save: %+v", defs)
	}
	// A second server on the same state directory runs without search.
	ix2, err := Open(ws, Options{StateDir: state, NoWatch: true})
	if err == nil || ix2 == nil || ix2.Search != nil || ix2.Map == nil {
		t.Fatalf("second open: %v %+v", err, ix2)
	}
}

func TestSearchReusesTheMapsParse(t *testing.T) {
	ws, ix, _ := newIndex(t)
	content, _ := os.ReadFile(ws.Abs("pkg/tax.go"))
	decls := ix.decls("pkg/tax.go", "go", content)
	if len(decls) != 2 || decls[0].Symbol != "VATRate" || decls[1].Symbol != "Gross" {
		t.Fatalf("decls: %+v", decls)
	}
	if got := ix.decls("notes.txt", "", []byte("plain text")); got != nil {
		t.Errorf("a file without a grammar should be chunked by windows: %+v", got)
	}
}

func TestUnsavedTextReachesTheMapAfterAPause(t *testing.T) {
	ws, ix, _ := newIndex(t)
	abs := ws.Abs("pkg/tax.go")
	for i := 0; i < 20; i++ { // a burst of keystrokes
		ix.DocumentChanged(abs, fmt.Sprintf("package pkg\n\nfunc Typed%d() {}\n", i))
	}
	deadline := time.Now().Add(time.Minute)
	for len(ix.Map.DefinitionsOf([]string{"Typed19"})) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the unsaved text never reached the map")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if defs := ix.Map.DefinitionsOf([]string{"Typed3"}); len(defs) != 0 {
		t.Errorf("an intermediate keystroke's text was indexed: %+v", defs)
	}
}
