package workspace

import (
	"path/filepath"
	"testing"
)

// Text reads an open document first, then the source, and never asks the
// source for a file a document holds; a source's too-large text is ignored.
func TestDocumentsSource(t *testing.T) {
	dir := t.TempDir()
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, b, big := filepath.Join(ws.Root(), "a.go"), filepath.Join(ws.Root(), "b.go"), filepath.Join(ws.Root(), "big.go")
	asked := map[string]int{}
	ws.Docs.SetSource(func(abs string) (string, bool) {
		asked[abs]++
		switch abs {
		case b:
			return "client text of b\n", true
		case big:
			return string(make([]byte, MaxFileBytes+1)), true
		}
		return "", false
	})
	ws.Docs.Open(a, "go", 1, "open a\n")
	if text, ok, err := ws.ReadFile(a); err != nil || !ok || text != "open a\n" || asked[a] != 0 {
		t.Errorf("open document: %q %v %v, source asked %d times", text, ok, err, asked[a])
	}
	if text, ok, err := ws.ReadFile(b); err != nil || !ok || text != "client text of b\n" {
		t.Errorf("source: %q %v %v", text, ok, err)
	}
	if _, ok, err := ws.ReadFile(big); err != nil || ok {
		t.Errorf("a too large source text was used (or the disk failed): %v %v", ok, err)
	}
	ws.Docs.SetSource(nil)
	if _, ok, _ := ws.ReadFile(b); ok {
		t.Errorf("without a source, b (not on disk) was found")
	}
}
