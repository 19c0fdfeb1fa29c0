package codeindex

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRootsSearchMapAndRemove(t *testing.T) {
	ws, primary, state := newIndex(t, false)
	second := filepath.Join(t.TempDir(), "billing")
	os.MkdirAll(filepath.Join(second, "inv"), 0o755)
	os.WriteFile(filepath.Join(second, "inv/invoice.go"), []byte("package inv\n\n// Surcharge is the late payment penalty.\nfunc Surcharge(days int) int { return days * 3 }\n"), 0o644)
	r := NewRoots(ws, primary, Options{StateDir: state, Watch: primary.opts.Watch})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.Start(ctx)
	f, err := ws.AddFolder(second, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(f); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	select {
	case <-r.Ready():
	case <-wctx.Done():
		t.Fatal("the folders' indexes never became ready")
	}
	if !searchHas(r, "late payment penalty", "billing/inv/invoice.go")() {
		out, err := SearchText(ctx, r, "late payment penalty", 5)
		t.Fatalf("search misses billing/inv/invoice.go: %q %v", out, err)
	}
	if !searchHas(r, "value added tax", "pkg/tax.go")() {
		t.Fatal("search misses the first folder's pkg/tax.go")
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
	if s, ok := r.EnclosingSymbol("billing/inv/invoice.go", 4); !ok || s.Name != "Surcharge" || s.Path != "billing/inv/invoice.go" {
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
	r.Close()
}
