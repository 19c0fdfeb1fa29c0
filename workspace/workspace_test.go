package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveRefusesEscapes(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(root, "a/b"), 0o755)
	os.WriteFile(filepath.Join(root, "a/b/f.txt"), []byte("x"), 0o644)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "in"))
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ok := []string{"a/b/f.txt", "./a/../a/b/f.txt", "a/new/file.go", "in/b/f.txt", filepath.Join(ws.Root(), "a/b/f.txt"), ""}
	for _, p := range ok {
		if _, err := ws.Resolve(p); err != nil {
			t.Errorf("Resolve(%q): %v", p, err)
		}
	}
	bad := []string{"../x", "a/../../x", "/etc/passwd", "~/x", "~", "out/f", "out", "a/\x00b", outside}
	for _, p := range bad {
		if _, err := ws.Resolve(p); !errors.Is(err, ErrOutside) {
			t.Errorf("Resolve(%q) = %v, want ErrOutside", p, err)
		}
	}
	ws.SetStateDir(filepath.Join(ws.Root(), ".state"))
	for _, p := range []string{".git/config", ".git", ".state/x"} {
		if _, err := ws.ResolveWritable(p); !errors.Is(err, ErrOutside) {
			t.Errorf("ResolveWritable(%q) = %v", p, err)
		}
	}
}

func TestMapperUTF16(t *testing.T) {
	text := "a🙂b\nnaïve\r\nlast"
	m := NewMapper(text)
	cases := []struct {
		pos Position
		off int
	}{
		{Position{0, 0}, 0}, {Position{0, 1}, 1}, {Position{0, 3}, 5}, {Position{0, 4}, 6},
		{Position{0, 99}, 6}, // clamps to the line end
		{Position{1, 3}, 11}, {Position{1, 5}, 13}, {Position{2, 4}, len(text)},
	}
	for _, c := range cases {
		got, err := m.Offset(c.pos)
		if err != nil || got != c.off {
			t.Errorf("Offset(%v) = %d, %v; want %d", c.pos, got, err, c.off)
		}
	}
	if _, err := m.Offset(Position{9, 0}); err == nil {
		t.Error("a line past the end should be an error")
	}
	for _, off := range []int{0, 1, 5, 6, 7, 9, 11, 13, len(text)} {
		p := m.Position(off)
		back, _ := m.Offset(p)
		if back != off {
			t.Errorf("Position(%d) = %v, which maps back to %d", off, p, back)
		}
	}
}

func TestDocumentsIncrementalChanges(t *testing.T) {
	d := NewDocuments()
	d.Open("/f", "go", 1, "hello 🙂 world\n")
	_, after, err := d.Change("/f", 2, []TextChange{
		{Range: &Range{Position{0, 6}, Position{0, 8}}, Text: "big"},
		{Range: &Range{Position{0, 0}, Position{0, 0}}, Text: "> "},
	})
	if err != nil || after != "> hello big world\n" {
		t.Fatalf("after = %q, %v", after, err)
	}
	if _, _, err := d.Change("/f", 3, []TextChange{{Range: &Range{Position{5, 0}, Position{5, 1}}}}); err == nil {
		t.Error("a change past the end should fail")
	}
	if doc, _ := d.Get("/f"); doc.Text != after || doc.Version != 2 {
		t.Errorf("a failed change must not alter the document: %+v", doc)
	}
	if _, _, err := d.Change("/nope", 1, nil); err == nil {
		t.Error("changing an unopened document should fail")
	}
}

// TestDocumentsTextWhileTyping: the editor's text is read while changes
// come in (a chat fetching an edit's view as the user types); under -race
// this fails if a read is not ordered with the writes.
func TestDocumentsTextWhileTyping(t *testing.T) {
	d := NewDocuments()
	d.Open("/f", "go", 1, "")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			if _, _, err := d.Change("/f", int32(i+2), []TextChange{{Range: &Range{Position{0, 0}, Position{0, 0}}, Text: "x"}}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	last := 0
	for i := 0; i < 200; i++ {
		text, ok := d.Text("/f")
		if !ok || strings.Trim(text, "x") != "" || len(text) < last {
			t.Fatalf("read %q (open %v) after %d characters: not the typed text", text, ok, last)
		}
		last = len(text)
	}
	<-done
	if text, _ := d.Text("/f"); len(text) != 200 {
		t.Errorf("after typing 200 characters the text has %d", len(text))
	}
}

func TestWalkHonorsIgnoreFiles(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		".gitignore":          "*.log\nbuild/\n",
		"sub/.cairnignore":    "secret.txt\n",
		"main.go":             "package main",
		"debug.log":           "x",
		"build/out.go":        "x",
		"sub/secret.txt":      "x",
		"sub/ok.txt":          "x",
		"vendor/x/y.go":       "x",
		"node_modules/m/i.js": "x",
		".git/HEAD":           "x",
		"big.bin":             strings.Repeat("a", 2<<20),
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(c), 0o644)
	}
	os.Symlink(root, filepath.Join(root, "loop"))
	ws, _ := Open(root)
	got, stats := ws.Walk(WalkOptions{})
	var rels []string
	for _, f := range got {
		rels = append(rels, f.Rel)
	}
	if strings.Join(rels, " ") != ".gitignore main.go sub/.cairnignore sub/ok.txt" {
		t.Errorf("walk = %v", rels)
	}
	if stats.Skipped[SkipOversized] != 1 || stats.Skipped[SkipVendored] != 1 || stats.Skipped[SkipIgnored] < 3 {
		t.Errorf("stats = %+v", stats)
	}
	if !ws.Ignored("sub/secret.txt") || !ws.Ignored("x/y.log") || ws.Ignored("sub/ok.txt") {
		t.Error("Ignored disagrees with Walk")
	}
}

// Build output is skipped by default: dist/, build/, out/ beside a build
// manifest, minified files, bundles, source maps and lockfiles; a source
// directory that happens to be called dist or build (the Go tree's cmd/dist,
// go/build) is kept.
func TestWalkSkipsBuildOutput(t *testing.T) {
	root := t.TempDir()
	files := []string{
		"package.json", "package-lock.json", "src/index.ts",
		"dist/index.js", "dist/types/index.d.ts", "build/x.js", "out/y.js", "lib/app.min.js",
		"lib/app.js.map", "lib/index.umd.js", "lib/core.js",
		"py/pyproject.toml", "py/pkg/mod.py", "py/build/lib/mod.py", "py/pkg/__pycache__/mod.py",
		"go/cmd/dist/build.go", "go/go/build/build.go", "go/go.sum",
	}
	for _, p := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644)
	}
	ws, _ := Open(root)
	got, stats := ws.Walk(WalkOptions{})
	var rels []string
	for _, f := range got {
		rels = append(rels, f.Rel)
	}
	want := "go/cmd/dist/build.go go/go/build/build.go lib/core.js package.json py/pkg/mod.py py/pyproject.toml src/index.ts"
	if strings.Join(rels, " ") != want {
		t.Errorf("walk = %v\nwant %s", rels, want)
	}
	if stats.Skipped[SkipBuilt] != 10 {
		t.Errorf("skipped as build output: %d, want 10 (%+v)", stats.Skipped[SkipBuilt], stats)
	}
	for _, rel := range []string{"dist/index.js", "out/y.js", "lib/app.min.js", "package-lock.json", "py/build/lib/mod.py"} {
		if !ws.Ignored(rel) {
			t.Errorf("Ignored(%s) = false, want true like Walk", rel)
		}
	}
	for _, rel := range []string{"go/cmd/dist/build.go", "lib/core.js", "src/index.ts"} {
		if ws.Ignored(rel) {
			t.Errorf("Ignored(%s) = true, want false like Walk", rel)
		}
	}
}

func TestTextEditsRoundTrip(t *testing.T) {
	before := "a\nnaïve 🙂 line\nc\n"
	after := "a\nnaïve 🙃 line!\nc\nd\n"
	edits := TextEdits(before, after)
	m := NewMapper(before)
	text := before
	for i := len(edits) - 1; i >= 0; i-- {
		s, _ := m.Offset(edits[i].Range.Start)
		e, _ := m.Offset(edits[i].Range.End)
		text = text[:s] + edits[i].NewText + text[e:]
	}
	if text != after {
		t.Fatalf("applying TextEdits gave %q", text)
	}
}

func TestEscapeCorpus(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(root, "a/b"), 0o755)
	os.Symlink(outside, filepath.Join(root, "link"))
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "linkfile"))
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/escapes.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.NewReplacer("ROOT", ws.Root(), "OUT", outside, `\x00`, "\x00").Replace(line)
		n++
		if got, err := ws.Resolve(p); err == nil {
			t.Errorf("escape %q resolved to %s", line, got)
		}
	}
	if n < 30 {
		t.Fatalf("the corpus has %d paths", n)
	}
}
