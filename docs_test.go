package cairn_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README is the front door: short enough to read through.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n >= 300 {
		t.Errorf("README.md has %d lines; keep it under 300 and move detail to docs/", n)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link in the README and docs/ names a file or directory
// that exists, so moving a section does not leave a dead link behind.
func TestDocLinksResolve(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "README.md", "protocol/README.md", "editors/README.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Join(filepath.Dir(f), target)
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
			}
		}
	}
}

var benchWrite = regexp.MustCompile(`bench_docs_write ([a-z-]+) `)

// benchScripts are the scripts that write a section of docs/benchmarks.md.
var benchScripts = []string{"scripts/bench-index.sh", "scripts/bench-cold-ask.sh", "scripts/bench-redact.sh", "repomap/bench.sh"}

// Each benchmark script writes a section that docs/benchmarks.md has,
// exactly once, begin marker before end marker.
func TestBenchScriptsHaveSections(t *testing.T) {
	doc, err := os.ReadFile("docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	for _, s := range benchScripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		m := benchWrite.FindAllStringSubmatch(string(b), -1)
		if len(m) != 1 {
			t.Errorf("%s: want one bench_docs_write call, found %d", s, len(m))
			continue
		}
		name := m[0][1]
		begin, end := -1, -1
		for i, l := range lines {
			switch l {
			case "<!-- bench:" + name + ":begin -->":
				if begin >= 0 {
					t.Errorf("docs/benchmarks.md: section %s begins twice", name)
				}
				begin = i
			case "<!-- bench:" + name + ":end -->":
				if end >= 0 {
					t.Errorf("docs/benchmarks.md: section %s ends twice", name)
				}
				end = i
			}
		}
		if begin < 0 || end < begin {
			t.Errorf("docs/benchmarks.md: section %s (written by %s) is missing or out of order (begin line %d, end line %d)", name, s, begin+1, end+1)
		}
	}
}

// runBenchDocs runs a bash snippet with scripts/bench-docs.sh sourced.
func runBenchDocs(t *testing.T, env []string, snippet string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	lib, err := filepath.Abs("scripts/bench-docs.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail; source "+lib+"; "+snippet)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// With --write-docs a script's section is replaced by the run's body under
// a header naming the command; every other byte of the file stays; a
// second run replaces the first; without the flag nothing is written; a
// file without the section is refused and left as it was.
func TestBenchDocsWriteReplacesOnlyItsSection(t *testing.T) {
	orig, err := os.ReadFile("docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "benchmarks.md")
	if err := os.WriteFile(doc, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	body := filepath.Join(dir, "body.md")
	env := []string{"CAIRN_BENCH_DOCS=" + doc, "CAIRN_BENCH_WRITE_DOCS="}

	// Without the flag: no change.
	os.WriteFile(body, []byte("| fake | 1 s |\n"), 0o644)
	if out, err := runBenchDocs(t, env, `bench_docs_init scripts/bench-redact.sh 3; bench_docs_write redact `+body); err != nil {
		t.Fatalf("without --write-docs: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(doc); string(got) != string(orig) {
		t.Fatal("bench_docs_write changed the file without --write-docs")
	}

	write := func(content string) string {
		t.Helper()
		os.WriteFile(body, []byte(content), 0o644)
		out, err := runBenchDocs(t, env, `bench_docs_init scripts/bench-redact.sh 3 --write-docs; set -- "${bench_args[@]}"; [ "$*" = 3 ]; bench_docs_write redact `+body)
		if err != nil {
			t.Fatalf("bench_docs_write: %v\n%s", err, out)
		}
		got, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	split := func(s string) (before, section, after string) {
		t.Helper()
		b := strings.Index(s, "<!-- bench:redact:begin -->\n")
		e := strings.Index(s, "<!-- bench:redact:end -->")
		if b < 0 || e < b {
			t.Fatalf("markers lost:\n%s", s)
		}
		b += len("<!-- bench:redact:begin -->\n")
		return s[:b], s[b:e], s[e:]
	}
	ob, _, oa := split(string(orig))

	got := write("| fake | 1 s |\n")
	gb, gs, ga := split(got)
	if gb != ob || ga != oa {
		t.Error("text outside the redact section changed")
	}
	for _, want := range []string{"| fake | 1 s |", "Written by `scripts/bench-redact.sh 3 --write-docs` on ", " UTC at `", "load "} {
		if !strings.Contains(gs, want) {
			t.Errorf("section lacks %q:\n%s", want, gs)
		}
	}
	if strings.Contains(gs, "80dd02f") {
		t.Errorf("the old section's text survived:\n%s", gs)
	}

	got = write("| second | 2 s |\n")
	_, gs, _ = split(got)
	if !strings.Contains(gs, "| second | 2 s |") || strings.Contains(gs, "| fake |") {
		t.Errorf("a second write did not replace the first:\n%s", gs)
	}
	if n := strings.Count(got, "<!-- bench:redact:begin -->"); n != 1 {
		t.Errorf("%d begin markers after two writes", n)
	}

	// A file without the section: an error, and the file unchanged.
	bare := filepath.Join(dir, "bare.md")
	os.WriteFile(bare, []byte("# nothing here\n"), 0o644)
	out, err := runBenchDocs(t, []string{"CAIRN_BENCH_DOCS=" + bare}, `bench_docs_init x --write-docs; bench_docs_write redact `+body)
	if err == nil {
		t.Errorf("writing a missing section succeeded:\n%s", out)
	}
	if b, _ := os.ReadFile(bare); string(b) != "# nothing here\n" {
		t.Errorf("the file changed: %q", b)
	}
	if left, _ := filepath.Glob(bare + ".*"); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
