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
		if d.Scope() != "" {
			scope = " in " + d.Scope()
		}
		top := ""
		if d.TopLevel {
			top = " top"
		}
		if d.Local {
			top += " local"
		}
		if d.Private {
			top += " private"
		}
		fmt.Fprintf(&b, "  %d-%d %s %s%s depth=%d%s | %s\n", d.Line, d.EndLine, d.Kind(), d.Name(), scope, d.Depth, top, d.Signature())
	}
	if len(ft.Scopes) > 0 {
		b.WriteString("scopes:\n")
		for _, s := range ft.Scopes {
			fmt.Fprintf(&b, "  %d-%d %s | %s\n", s.Line, s.EndLine, s.Name, s.Signature)
		}
	}
	b.WriteString("decls:\n")
	for _, d := range ft.Decls() {
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
		fmt.Fprintf(&b, "  %s x%d%s\n", r.Name(), r.Count, form)
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
			if len(ft.Defs) == 0 || len(ft.Refs) == 0 || len(ft.Decls()) == 0 {
				t.Errorf("%s: want defs, refs and decls; got %d, %d, %d", f, len(ft.Defs), len(ft.Refs), len(ft.Decls()))
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

// A C macro loop the parser cannot expand (the kernel's
// `for_each_possible_cpu(i) stmt;`) must not make the functions after it
// local to the function that uses it: C has no nested functions.
func TestTagsCFunctionAfterUnexpandedMacro(t *testing.T) {
	src := `unsigned long long nr_context_switches(void)
{
	int i;
	unsigned long long sum = 0;

	for_each_possible_cpu(i)
		sum += cpu_rq(i)->nr_switches;

	return sum;
}

unsigned int nr_iowait_cpu(int cpu)
{
	return atomic_read(&cpu_rq(cpu)->nr_iowait);
}

static void __sched notrace __schedule(unsigned int sched_mode)
{
	struct task_struct *prev;
}

asmlinkage __visible void __sched schedule(void)
{
	__schedule(SM_NONE);
}
`
	ft, err := ParseFile("core.c", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"nr_context_switches": false, "__schedule": true, "schedule": false}
	got := map[string]bool{}
	for _, d := range ft.Defs {
		if _, ok := want[d.Name()]; !ok {
			continue
		}
		got[d.Name()] = true
		if d.Local || !d.TopLevel || d.Scope() != "" {
			t.Errorf("%s: local %v, top-level %v, scope %q; want a top-level function", d.Name(), d.Local, d.TopLevel, d.Scope())
		}
		if d.Private != want[d.Name()] {
			t.Errorf("%s: private %v, want %v (static in a .c file)", d.Name(), d.Private, want[d.Name()])
		}
	}
	if len(got) != len(want) {
		t.Errorf("defs %v, want %v", got, want)
	}
	if d := ft.Defs[0]; d.Name() == "nr_context_switches" && d.EndLine > 11 {
		t.Errorf("nr_context_switches ends on line %d, want it clipped before the next function", d.EndLine)
	}
}

// A C function whose return type stands on the line above its name (the
// kernel's and GNU's style) is shown with that type; a comment, a macro or
// a statement above is not taken for one. A typedef named after its body
// is shown with its first line.
func TestTagsCReturnTypeAbove(t *testing.T) {
	src := `unsigned long __sched
wait_for_completion_timeout(struct completion *x, unsigned long timeout)
{
	return 0;
}

static int *
find_slot(int key)
{
	return 0;
}

/* a comment about it */
void plain(void)
{
}

EXPORT_SYMBOL(plain);
int
next_one(void)
{
	return 1;
}
`
	ft, err := ParseFile("completion.c", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"wait_for_completion_timeout": "unsigned long __sched wait_for_completion_timeout(struct completion *x, unsigned long timeout)",
		"find_slot":                   "static int * find_slot(int key)",
		"plain":                       "void plain(void)",
		"next_one":                    "int next_one(void)",
	}
	for _, d := range ft.Defs {
		if w, ok := want[d.Name()]; ok {
			if d.Signature() != w {
				t.Errorf("%s: signature %q, want %q", d.Name(), d.Signature(), w)
			}
			delete(want, d.Name())
		}
	}
	if len(want) > 0 {
		t.Errorf("no definitions of %v", want)
	}
	h, err := ParseFile("ext4.h", []byte("typedef struct ext4_io_end {\n\tstruct list_head list;\n\tunsigned int flag;\n} ext4_io_end_t;\n"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range h.Defs {
		if d.Name() == "ext4_io_end_t" {
			found = true
			if want := "typedef struct ext4_io_end { … } ext4_io_end_t;"; d.Signature() != want {
				t.Errorf("typedef: signature %q, want %q", d.Signature(), want)
			}
		}
	}
	if !found {
		t.Errorf("no definition of ext4_io_end_t in %+v", h.Defs)
	}
	if got := compactSignature("c", "function", "unsigned long __sched wait_for_completion_timeout(struct completion *x, unsigned long timeout)"); got != "unsigned long wait_for_completion_timeout(struct completion *x, unsigned long timeout)" {
		t.Errorf("compactSignature = %q", got)
	}
}

// In a C header, what includers use is API; its static inline helpers and
// all-caps macros (constants, helpers) are not.
func TestTagsCHeaderVisibility(t *testing.T) {
	src := `#define EXT4_SB(sb) ((sb)->s_fs_info)
#define ext4_iget(sb, ino) __ext4_iget((sb), (ino))
struct ext4_sb_info { int s_count; };
extern struct inode *__ext4_iget(struct super_block *sb, unsigned long ino);
static inline int cpu_of(struct rq *rq) { return rq->cpu; }
extern const struct file_operations ext4_file_operations;
`
	ft, err := ParseFile("fs/ext4/ext4.h", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"EXT4_SB": true, "ext4_iget": false, "ext4_sb_info": false, "__ext4_iget": false, "cpu_of": true, "ext4_file_operations": false}
	for _, d := range ft.Defs {
		p, ok := want[d.Name()]
		if !ok {
			continue
		}
		delete(want, d.Name())
		if d.Private != p {
			t.Errorf("%s (%s): private %v, want %v", d.Name(), d.Kind(), d.Private, p)
		}
		if api := isAPI("c", &d); api == p {
			t.Errorf("%s: isAPI %v", d.Name(), api)
		}
	}
	if len(want) > 0 {
		t.Errorf("not tagged: %v", want)
	}
}

// A Python module's __all__ is its API: a public-looking top-level name it
// leaves out is not, and the members of a listed class still are.
func TestPythonAllIsAPI(t *testing.T) {
	src := `__all__ = ["Parser", "parse"]

class Parser:
    def feed(self, data):
        pass

def parse(text):
    return helper(text)

def helper(text):
    return text
`
	ft, err := ParseFile("email/parser.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	exported := exportedNames(ft)
	want := map[string]bool{"Parser": true, "feed": true, "parse": true, "helper": false}
	for i := range ft.Defs {
		d := &ft.Defs[i]
		w, ok := want[d.Name()]
		if !ok {
			continue
		}
		delete(want, d.Name())
		if got := isAPI(ft.Language, d) && !unlisted(ft, exported, d); got != w {
			t.Errorf("%s: API %v, want %v", d.Name(), got, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("not tagged: %v", want)
	}
}

// A Rust item marked #[unstable] or #[doc(hidden)] is not API, nor is
// every item of a module whose inner attributes mark it so (std's
// io/readbuf.rs); a stable module's items stay API.
func TestTagsRustUnstable(t *testing.T) {
	for _, c := range []struct {
		name, src string
		private   map[string]bool
	}{
		{"lib.rs", `//! Buffers.
#![stable(feature = "rust1", since = "1.0.0")]

#[unstable(feature = "x", issue = "1")]
pub struct Early;

#[stable(feature = "rust1", since = "1.0.0")]
pub struct Done;
`, map[string]bool{"Early": true, "Done": false}},
		{"readbuf.rs", `#![unstable(feature = "read_buf", issue = "78485")]

#[cfg(test)]
mod tests;

pub struct ReadBuf<'a> {
    buf: &'a mut [u8],
}

impl<'a> ReadBuf<'a> {
    pub fn new(buf: &'a mut [u8]) -> ReadBuf<'a> {
        ReadBuf { buf }
    }
}
`, map[string]bool{"ReadBuf": true, "new": true}},
		{"hidden.rs", "// SPDX line\n#![doc(hidden)]\npub fn helper() {}\n", map[string]bool{"helper": true}},
	} {
		ft, err := ParseFile(c.name, []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, d := range ft.Defs {
			if want, ok := c.private[d.Name()]; ok {
				seen++
				if d.Private != want {
					t.Errorf("%s: %s private %v, want %v", c.name, d.Name(), d.Private, want)
				}
			}
		}
		if seen != len(c.private) {
			t.Errorf("%s: %d of %v defined", c.name, seen, c.private)
		}
	}
}
