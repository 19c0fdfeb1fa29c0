package repomap

import (
	"bytes"
	"fmt"
	gobuild "go/build"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// goldenSection is the txtar section that holds an archive's expected tags.
const goldenSection = "want"

// TestGoTagsGolden tags the Go files of each workspace in
// testdata/gotags/*.txtar and compares the result with the archive's
// "want" section (go test ./repomap -run TestGoTagsGolden -update rewrites
// it). The archives' comments say what each one pins down.
func TestGoTagsGolden(t *testing.T) {
	archives, err := filepath.Glob("testdata/gotags/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatalf("no archives in testdata/gotags (%v)", err)
	}
	for _, path := range archives {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			var want []byte
			wantAt := -1
			for i, f := range ar.Files {
				if f.Name == goldenSection {
					want, wantAt = f.Data, i
					continue
				}
				ft, err := ParseFile(f.Name, f.Data)
				if err != nil {
					t.Fatalf("%s: %v", f.Name, err)
				}
				fmt.Fprintf(&got, "== %s\n%s", f.Name, formatTags(ft))
			}
			if *update {
				section := txtar.File{Name: goldenSection, Data: []byte(got.String())}
				if wantAt >= 0 {
					ar.Files[wantAt] = section
				} else {
					ar.Files = append(ar.Files, section)
				}
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if wantAt < 0 {
				t.Fatalf("%s has no %q section (run with -update to create it)", path, goldenSection)
			}
			if got.String() != string(want) {
				t.Errorf("%s: tags differ from its %q section (run go test ./repomap -run TestGoTagsGolden -update to accept):\n%s", path, goldenSection, lineDiff(string(want), got.String()))
			}
		})
	}
}

// goldenPackages are small packages of the Go tree whose tags are kept in
// testdata/gotags/goroot-*.golden: real code nobody here wrote, with
// methods, grouped declarations and generics.
var goldenPackages = []string{"container/list", "sort", "slices"}

// TestGoTagsGOROOT compares the tags of goldenPackages' non-test files with
// their golden files, which name the Go version they were made with. With
// another Go version the sources may differ: the test then fails under
// CI=true (run it with -update to record the new version) and skips
// elsewhere.
func TestGoTagsGOROOT(t *testing.T) {
	for _, pkg := range goldenPackages {
		t.Run(pkg, func(t *testing.T) {
			golden := filepath.Join("testdata", "gotags", "goroot-"+strings.ReplaceAll(pkg, "/", "-")+".golden")
			dir := filepath.Join(gobuild.Default.GOROOT, "src", filepath.FromSlash(pkg))
			files, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil || len(files) == 0 {
				versionMismatch(t, fmt.Sprintf("no Go files in %s (%v)", dir, err), golden)
				return
			}
			files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
			slices.Sort(files)
			var got strings.Builder
			fmt.Fprintf(&got, "%s %s\n", runtime.Version(), pkg)
			for _, f := range files {
				content, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				ft, err := ParseFile(filepath.Base(f), content)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if ft.SyntaxErrors || len(ft.Defs) == 0 {
					t.Errorf("%s: syntax errors %v, %d definitions: want go/parser's tags", f, ft.SyntaxErrors, len(ft.Defs))
				}
				fmt.Fprintf(&got, "== %s\n%s", filepath.Base(f), formatTags(ft))
			}
			if *update {
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./repomap -run TestGoTagsGOROOT -update to create it)", err)
			}
			header, _, _ := bytes.Cut(want, []byte("\n"))
			if version, _, _ := strings.Cut(string(header), " "); version != runtime.Version() {
				versionMismatch(t, fmt.Sprintf("%s was made with %s, this is %s", golden, version, runtime.Version()), golden)
				return
			}
			if got.String() != string(want) {
				t.Errorf("%s: tags differ (run go test ./repomap -run TestGoTagsGOROOT -update to accept):\n%s", golden, lineDiff(string(want), got.String()))
			}
		})
	}
}

// versionMismatch fails t under CI=true and skips it elsewhere: the Go
// tree at hand is not the one the golden file was made from.
func versionMismatch(t *testing.T, why, golden string) {
	t.Helper()
	msg := fmt.Sprintf("%s: run go test ./repomap -run TestGoTagsGOROOT -update to record this Go version in %s", why, golden)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// TestGoTagsFallBackToTreeSitter checks that a file go/parser rejects is
// still tagged, by tree-sitter's error recovery: what parsed is kept.
func TestGoTagsFallBackToTreeSitter(t *testing.T) {
	src := []byte("package p\n\nvar (\n\tGrouped = 1\n)\n\nfunc Before() {}\n\nfunc Broken() int {\n\treturn 1 +\n}\n\nfunc After() {}\n")
	if _, ok := goTags("p.go", src, hashBytes(src)); ok {
		t.Fatal("goTags accepted a file with a syntax error")
	}
	ft, err := ParseFile("p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if !ft.SyntaxErrors {
		t.Error("SyntaxErrors not set: the file did not go through tree-sitter")
	}
	var names []string
	for _, d := range ft.Defs {
		names = append(names, d.Name())
	}
	for _, want := range []string{"Grouped", "Before", "After"} {
		if !slices.Contains(names, want) {
			t.Errorf("definitions %v lack %s", names, want)
		}
	}
}
