package repomap

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/workspace"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// formatTags renders FileTags as stable text for golden files.
func formatTags(ft *FileTags) string {
	var b strings.Builder
	fmt.Fprintf(&b, "language %s, %d lines, syntax errors: %v\n", ft.Language, ft.Lines, ft.SyntaxErrors)
	b.WriteString("defs:\n")
	for _, d := range ft.Defs {
		scope := ""
		if d.Scope != "" {
			scope = " in " + d.Scope
		}
		top := ""
		if d.TopLevel {
			top = " top"
		}
		if d.Local {
			top += " local"
		}
		fmt.Fprintf(&b, "  %d-%d %s %s%s depth=%d%s | %s\n", d.Line, d.EndLine, d.Kind, d.Name, scope, d.Depth, top, d.Signature)
	}
	if len(ft.Scopes) > 0 {
		b.WriteString("scopes:\n")
		for _, s := range ft.Scopes {
			fmt.Fprintf(&b, "  %d-%d %s | %s\n", s.Line, s.EndLine, s.Name, s.Signature)
		}
	}
	b.WriteString("decls:\n")
	for _, d := range ft.Decls {
		fmt.Fprintf(&b, "  %d-%d %s %s depth=%d\n", d.StartLine, d.EndLine, d.Kind, d.Symbol, d.Depth)
	}
	b.WriteString("refs:\n")
	for _, r := range ft.Refs {
		form := ""
		if r.Member {
			form = " member"
		}
		if r.Export {
			form += " export"
		}
		fmt.Fprintf(&b, "  %s x%d @%d%s\n", r.Name, r.Count, r.Line, form)
	}
	return b.String()
}

func TestTagsGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/tags/*")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, ".golden") {
			continue
		}
		f := f
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ft, err := ParseFile(filepath.Base(f), src)
			if err != nil {
				t.Fatal(err)
			}
			seen[ft.Language] = true
			if len(ft.Defs) == 0 || len(ft.Refs) == 0 || len(ft.Decls) == 0 {
				t.Errorf("%s: want defs, refs and decls; got %d, %d, %d", f, len(ft.Defs), len(ft.Refs), len(ft.Decls))
			}
			got := formatTags(ft)
			golden := f + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal([]byte(got), want) {
				t.Errorf("%s: tags differ from %s (run go test -update to accept):\n%s", f, golden, lineDiff(string(want), got))
			}
		})
	}
	for _, l := range Languages() {
		if !seen[l] {
			t.Errorf("no golden fixture for language %s", l)
		}
	}
}

// lineDiff is a tiny line-set diff, enough to read a golden mismatch.
func lineDiff(want, got string) string {
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	inW := map[string]int{}
	for _, l := range w {
		inW[l]++
	}
	inG := map[string]int{}
	for _, l := range g {
		inG[l]++
	}
	var b strings.Builder
	for _, l := range w {
		if inG[l] == 0 {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if inW[l] == 0 {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

func TestHashMatchesWorkspace(t *testing.T) {
	for _, s := range []string{"", "package x\n", "\xff\x00é"} {
		if got, want := hashBytes([]byte(s)), workspace.Hash(s); got != want {
			t.Errorf("hashBytes(%q) = %s, workspace.Hash = %s", s, got, want)
		}
	}
}
