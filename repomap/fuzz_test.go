package repomap

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseFile checks that any content, in any supported language, parses
// without panicking and yields lines inside the file.
func FuzzParseFile(f *testing.F) {
	files, _ := filepath.Glob("testdata/tags/*")
	for _, p := range files {
		if filepath.Ext(p) == ".golden" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Ext(p), b)
		f.Add(filepath.Ext(p), b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, ext string, content []byte) {
		if LanguageOf("x"+ext) == "" {
			return
		}
		ft, err := ParseFile("x"+ext, content)
		if err != nil {
			return
		}
		for _, d := range ft.Defs {
			if d.Line < 1 || d.EndLine < d.Line || int(d.EndLine) > ft.Lines || d.NameLine < d.Line || d.NameLine > d.EndLine {
				t.Fatalf("def %+v outside 1..%d", d, ft.Lines)
			}
		}
		for _, r := range ft.Refs {
			if r.Count < 1 {
				t.Fatalf("ref %+v counts no use", r)
			}
		}
	})
}
