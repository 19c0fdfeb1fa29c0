package contextengine

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/workspace"
	"golang.org/x/tools/txtar"
)

// shop is a small Go module: cart.Total calls pricing.ApplyDiscount and
// shipping.Cost; the helpers live in other packages, so the definitions,
// the search hits and the repo map all have something to find.
const shop = `
-- go.mod --
module example.com/shop

go 1.22
-- cart/cart.go --
package cart

import (
	"example.com/shop/pricing"
	"example.com/shop/shipping"
)

// Total sums the cart with the store's discount rules and adds shipping.
func Total(items []pricing.Item, zone string) int {
	sum := 0
	for _, it := range items {
		sum += pricing.ApplyDiscount(it)
	}
	return sum + shipping.Cost(zone, sum)
}

// count is a helper next to the selection.
func count(items []pricing.Item) int {
	n := 0
	for _, it := range items {
		n += it.Quantity
	}
	return n
}
-- pricing/discount.go --
package pricing

// Item is one line of a cart.
type Item struct {
	Price    int
	Quantity int
}

// ApplyDiscount returns the item's price after the bulk discount:
// ten or more units cost 10% less.
func ApplyDiscount(it Item) int {
	total := it.Price * it.Quantity
	if it.Quantity >= 10 {
		total = total * 9 / 10
	}
	return total
}
-- shipping/rates.go --
package shipping

// FlatRate is charged on every order below the free-shipping threshold.
const FlatRate = 499

// FreeAbove is the order total above which shipping is free.
const FreeAbove = 5000

// Cost is the shipping cost of an order to a zone.
func Cost(zone string, total int) int {
	if total >= FreeAbove {
		return 0
	}
	if zone == "intl" {
		return FlatRate * 3
	}
	return FlatRate
}
-- notes/orders.md --
# Orders

Bulk orders get a discount; shipping is free above a threshold.
The discount rules live in pricing; shipping rates in shipping.
`

type fixture struct {
	ws   *workspace.Workspace
	ix   *codeindex.Local
	root string
}

// newFixture writes a txtar workspace (plus extra files) into a temp dir
// and builds real repo map and search indexes over it.
func newFixture(t *testing.T, archive string, extra map[string]string) *fixture {
	t.Helper()
	root := t.TempDir()
	ar := txtar.Parse([]byte(archive))
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	for k, v := range extra {
		files[k] = v
	}
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := codeindex.Open(ws, codeindex.Options{StateDir: t.TempDir(), NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	ctx := context.Background()
	if err := ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	return &fixture{ws: ws, ix: ix, root: ws.Root()}
}

func (f *fixture) request(t *testing.T, rel string, from, to int, question string, window int) Request {
	t.Helper()
	text := ""
	if b, err := os.ReadFile(filepath.Join(f.root, rel)); err == nil {
		text = string(b)
	}
	req := Request{Question: question, File: rel, FileText: text, WS: f.ws, Index: f.ix,
		ContextWindow: window, MaxOutput: 512}
	if from > 0 {
		req.Selection = &Selection{StartLine: from, EndLine: to}
	}
	return req
}

func itemsOf(r *Report, src Source) (in, out []*Item) {
	for _, it := range r.Items {
		if it.Source != src {
			continue
		}
		if it.Included {
			in = append(in, it)
		} else {
			out = append(out, it)
		}
	}
	return in, out
}

func hasNote(r *Report, sub string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func requiredIncluded(t *testing.T, b *Built) {
	t.Helper()
	for _, it := range b.Report.Items {
		if (it.Source == SourceQuestion || it.Source == SourceSelection) && !it.Included {
			t.Errorf("%s %s dropped: %s", it.Source, it.Location, it.Reason)
		}
	}
	if !strings.Contains(b.User, "## Question\n") {
		t.Errorf("the prompt lacks the question")
	}
}

func TestBuildFindsCrossFileDefinitions(t *testing.T) {
	f := newFixture(t, shop, nil)
	b, err := Build(f.request(t, "cart/cart.go", 9, 16, "How is the total computed?", 16384))
	if err != nil {
		t.Fatal(err)
	}
	requiredIncluded(t, b)
	for _, want := range []string{"## Definition of ApplyDiscount", "## Definition of Cost", "func Cost(zone string, total int) int {"} {
		if !strings.Contains(b.User, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, b.User)
		}
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, shop, map[string]string{"bin/blob.dat": "GIF89a\x00\x01\x02\x00\x00binary"})

	t.Run("selection past the end of the file", func(t *testing.T) {
		b, err := Build(f.request(t, "cart/cart.go", 500, 520, "What does this do?", 8192))
		if err != nil {
			t.Fatal(err)
		}
		if !hasNote(b.Report, "past the end of cart/cart.go") {
			t.Errorf("no note about the selection: %q", b.Report.Notes)
		}
		if in, _ := itemsOf(b.Report, SourceSelection); len(in) != 0 {
			t.Errorf("a selection past the end was included: %v", in[0].Location)
		}
		if !strings.Contains(b.User, "What does this do?") {
			t.Error("the question is missing")
		}
	})

	t.Run("file not open and not on disk", func(t *testing.T) {
		b, err := Build(f.request(t, "cart/gone.go", 1, 3, "Why was this removed?", 8192))
		if err != nil {
			t.Fatal(err)
		}
		if !hasNote(b.Report, "cart/gone.go is not open in the editor and not on disk") {
			t.Errorf("no note about the missing file: %q", b.Report.Notes)
		}
		requiredIncluded(t, b)
	})

	t.Run("open in the editor but not on disk is fine", func(t *testing.T) {
		abs := f.ws.Abs("cart/draft.go")
		f.ws.Docs.Open(abs, "go", 1, "package cart\n\nfunc Draft() int { return 1 }\n")
		defer f.ws.Docs.Close(abs)
		req := f.request(t, "cart/draft.go", 3, 3, "What does Draft return?", 8192)
		req.FileText = "package cart\n\nfunc Draft() int { return 1 }\n"
		b, err := Build(req)
		if err != nil {
			t.Fatal(err)
		}
		if hasNote(b.Report, "not open in the editor") {
			t.Errorf("an open document was reported missing: %q", b.Report.Notes)
		}
	})

	t.Run("binary file", func(t *testing.T) {
		_, err := Build(f.request(t, "bin/blob.dat", 1, 1, "What is in this file?", 8192))
		if err == nil || !strings.Contains(err.Error(), "binary") {
			t.Fatalf("err = %v, want a binary-file error", err)
		}
	})

	t.Run("empty question", func(t *testing.T) {
		for _, q := range []string{"", "   \n\t"} {
			_, err := Build(f.request(t, "cart/cart.go", 9, 16, q, 8192))
			if err == nil || !strings.Contains(err.Error(), "question is empty") {
				t.Errorf("question %q: err = %v", q, err)
			}
		}
	})

	t.Run("budget smaller than the question", func(t *testing.T) {
		q := strings.Repeat("Why does the discount apply only to bulk orders of ten or more units? ", 60)
		b, err := Build(f.request(t, "cart/cart.go", 9, 16, q, 1024))
		if err != nil {
			t.Fatal(err)
		}
		if !b.Report.Degraded || !hasNote(b.Report, "smaller than the question") {
			t.Errorf("degraded=%v notes=%q", b.Report.Degraded, b.Report.Notes)
		}
		in, _ := itemsOf(b.Report, SourceQuestion)
		if len(in) != 1 || !strings.Contains(in[0].Reason, "shortened to fit") {
			t.Errorf("the question should be kept, cut: %+v", in)
		}
		requiredIncluded(t, b)
	})

	t.Run("caller's selection is not modified", func(t *testing.T) {
		req := f.request(t, "cart/cart.go", 0, -3, "What does this do?", 8192)
		req.Selection = &Selection{StartLine: 0, EndLine: -3}
		if _, err := Build(req); err != nil {
			t.Fatal(err)
		}
		if req.Selection.StartLine != 0 || req.Selection.EndLine != -3 {
			t.Errorf("selection clamped in place: %+v", *req.Selection)
		}
	})
}

// Allocate keeps every source within its cap (a share of the budget) in
// the first pass; fillLeftover only hands out what the caps left unused.
func TestCapsRespected(t *testing.T) {
	const avail = 2000
	var items []*Item
	srcs := []struct {
		src  Source
		prio int
	}{{SourceDefinitions, prioDefinitions}, {SourceSearch, prioSearch}, {SourceOpenDocs, prioOpenDocs}, {SourceRepoMap, prioRepoMap}}
	for _, s := range srcs {
		for i := 0; i < 20; i++ {
			items = append(items, &Item{Source: s.src, Location: fmt.Sprintf("%s-%d", s.src, i),
				Text: strings.Repeat("word ", 60), Tokens: 60, Priority: s.prio, Score: 1 / float64(i+1)})
		}
	}
	r := &Report{}
	used := Allocate(items, avail, r)
	bySrc := map[Source]int{}
	for _, it := range items {
		if it.Included {
			bySrc[it.Source] += it.Tokens
		}
	}
	for src, n := range bySrc {
		if capT := int(sourceCaps[src] * avail); n > capT {
			t.Errorf("%s: %d tokens included, cap %d", src, n, capT)
		}
	}
	if used > avail {
		t.Errorf("used %d > avail %d", used, avail)
	}
	var overCap int
	for _, it := range items {
		if !it.Included && strings.Contains(it.Reason, "cap (") {
			overCap++
		}
	}
	if overCap == 0 {
		t.Fatal("no item dropped for its cap")
	}
	// The caps total over 100% here? No: 35+15+10+15 = 75%, so a quarter is
	// left; the leftover goes to definitions first and never past avail.
	used2 := fillLeftover(items, avail, used, r)
	if used2 > avail || used2 <= used {
		t.Errorf("leftover: used %d -> %d of %d", used, used2, avail)
	}
	defs := 0
	for _, it := range items {
		if it.Source == SourceDefinitions && it.Included {
			defs += it.Tokens
		}
		if it.Included && strings.Contains(it.Reason, "left unused") && it.Source != SourceDefinitions {
			// Other sources only get leftover once every definition is in.
			for _, d := range items {
				if d.Source == SourceDefinitions && !d.Included && d.Tokens <= avail-used2 {
					t.Errorf("%s got leftover while definition %s (%d tokens) fits", it.Location, d.Location, d.Tokens)
				}
			}
		}
	}
	if defs <= int(sourceCaps[SourceDefinitions]*avail) {
		t.Errorf("definitions did not get the unused budget: %d tokens", defs)
	}
}

// Shrinking the budget drops open documents and search hits before
// definitions, and never the question or the selection.
func TestDegradationOrder(t *testing.T) {
	f := newFixture(t, shop, nil)
	for _, rel := range []string{"notes/orders.md", "shipping/rates.go"} {
		b, _ := os.ReadFile(filepath.Join(f.root, rel))
		f.ws.Docs.Open(f.ws.Abs(rel), "", 1, string(b)+strings.Repeat("// padding line for the open document\n", 40))
	}
	firstDrop := map[Source]int{} // largest window at which the source lost an item to the budget
	for window := 16384; window >= 1024; window -= 256 {
		b, err := Build(f.request(t, "cart/cart.go", 9, 16, "How is the discount applied to bulk orders?", window))
		if err != nil {
			t.Fatal(err)
		}
		requiredIncluded(t, b)
		for _, it := range b.Report.Items {
			if it.Included || strings.HasPrefix(it.Reason, "duplicate") {
				continue
			}
			if _, ok := firstDrop[it.Source]; !ok {
				firstDrop[it.Source] = window
			}
		}
	}
	t.Logf("largest window at which each source lost an item: %v", firstDrop)
	d, ok := firstDrop[SourceDefinitions]
	if !ok {
		t.Fatal("definitions were never dropped: make the budget smaller")
	}
	for _, src := range []Source{SourceOpenDocs, SourceSearch, SourceRepoMap, SourceWindow} {
		if w, ok := firstDrop[src]; !ok || w < d {
			t.Errorf("%s first dropped at %d (ok=%v), definitions at %d: %s should go first", src, w, ok, d, src)
		}
	}
	if firstDrop[SourceOpenDocs] < firstDrop[SourceSearch] {
		t.Errorf("search hits dropped (at %d) before open documents (at %d)", firstDrop[SourceSearch], firstDrop[SourceOpenDocs])
	}
}

func TestDuplicatesMarked(t *testing.T) {
	f := newFixture(t, shop, nil)
	// The selection calls count (same file, inside the surrounding code)
	// and pricing.ApplyDiscount (whose search hit holds the definition).
	req := f.request(t, "cart/cart.go", 9, 16, "Where is count used and how is ApplyDiscount computed?", 16384)
	req.FileText = strings.Replace(req.FileText, "return sum + shipping.Cost(zone, sum)", "return sum + shipping.Cost(zone, sum) + count(items)", 1)
	b, err := Build(req)
	if err != nil {
		t.Fatal(err)
	}
	var dups []string
	for _, it := range b.Report.Items {
		if strings.HasPrefix(it.Reason, "duplicate") {
			if it.Included {
				t.Errorf("%s %s is a duplicate but included", it.Source, it.Location)
			}
			dups = append(dups, string(it.Source)+" "+it.Location)
		}
	}
	if len(dups) == 0 {
		t.Fatalf("no duplicate marked:\n%s", b.Report.Markdown())
	}
	// Numbered source lines (the repo map's signature lines look different).
	if n := strings.Count(b.User, "   11\tfunc ApplyDiscount(it Item) int {"); n != 1 {
		t.Errorf("ApplyDiscount appears %d times in the prompt", n)
	}
	if n := strings.Count(b.User, "   18\tfunc count(items []pricing.Item) int {"); n != 1 {
		t.Errorf("count appears %d times in the prompt", n)
	}
	if !strings.Contains(b.Report.Markdown(), "duplicate: already in the prompt") {
		t.Error("the markdown report does not show the duplicate")
	}
}

func TestRedactionCounted(t *testing.T) {
	secret := "package cart\n\nconst token = \"ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5\"\n\nconst dsn = \"postgres://admin:S3cr3tPassw0rd@db.internal:5432/app\"\n"
	f := newFixture(t, shop, map[string]string{"cart/secrets.go": secret})
	b, err := Build(f.request(t, "cart/secrets.go", 3, 5, "What are these constants for?", 8192))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.User, "ghp_aB3dE5") || strings.Contains(b.User, "S3cr3tPassw0rd") {
		t.Fatal("a secret reached the prompt")
	}
	if b.Report.Redactions["github-pat"] < 1 || b.Report.Redactions["url-password"] < 1 {
		t.Errorf("redactions = %v", b.Report.Redactions)
	}
	md := b.Report.Markdown()
	if !strings.Contains(md, "## Redactions") || !strings.Contains(md, "| github-pat |") {
		t.Errorf("the report does not count the redactions:\n%s", md)
	}
	in, _ := itemsOf(b.Report, SourceSelection)
	if len(in) != 1 || !strings.HasPrefix(in[0].Reason, "redacted ") {
		t.Errorf("the selection's reason does not say it was redacted: %+v", in)
	}
}

// A secret's value that the rules recognize only by its surroundings,
// revealed in an item collected after the selection (the project's
// instructions), is masked where it appears bare in the selection too:
// redactItems' second pass, which runs only when the first found something.
func TestRedactionLearnsAcrossItems(t *testing.T) {
	const value = "Xk9mQ2vL7pR4tW8zB3nH6jD1"
	f := newFixture(t, shop, map[string]string{
		"cart/staging.go": "package cart\n\n// staging: " + value + "\nconst stagingHost = \"cart.staging\"\n",
		"AGENTS.md":       "Deploys read the key from the environment: export CART_TOKEN=" + value + "\n",
	})
	b, err := Build(f.request(t, "cart/staging.go", 3, 4, "What is this host for?", 8192))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.User, value) || strings.Contains(b.System, value) {
		t.Fatalf("the value reached the prompt:\n%s", b.User)
	}
	in, _ := itemsOf(b.Report, SourceSelection)
	if len(in) != 1 || !strings.Contains(in[0].Reason, "redacted 1 generic-api-key") {
		t.Errorf("the selection's reason does not say its bare value was masked: %+v", in)
	}
	// Without a secret anywhere, nothing is masked or counted.
	f = newFixture(t, shop, nil)
	b, err = Build(f.request(t, "cart/cart.go", 9, 16, "How is the total computed?", 8192))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Report.Redactions) != 0 {
		t.Errorf("redactions without a secret: %v", b.Report.Redactions)
	}
}

func TestParseImports(t *testing.T) {
	goSrc := "package x\n\nimport (\n\t\"fmt\"\n\tisync \"internal/sync\"\n\t\"math/rand/v2\"\n)\n\nfunc f() {}\n"
	fi := parseImports("a/x.go", goSrc)
	for alias, want := range map[string]string{"fmt": "fmt", "isync": "internal/sync", "rand": "math/rand/v2"} {
		if fi.byAlias[alias] != want {
			t.Errorf("go alias %s = %q, want %q", alias, fi.byAlias[alias], want)
		}
	}
	py := "from email import charset as _charset\nfrom ._parseaddr import AddressList as _AddressList\nimport os.path\n"
	fi = parseImports("email/utils.py", py)
	if fi.renamed["_AddressList"] != "AddressList" || fi.byAlias["_AddressList"] != "email/_parseaddr" {
		t.Errorf("python: %+v", fi)
	}
	if importMatch(fi.byAlias["_charset"]+"/charset", "email/charset.py", "email/utils.py") != 1 {
		t.Errorf("python module path: %+v", fi)
	}
	ts := "import {normalizeId, getSchemaRefs as refs} from \"./compile/resolve\"\nimport * as util from \"../util\"\n"
	fi = parseImports("lib/core.ts", ts)
	if fi.byAlias["normalizeId"] != "lib/compile/resolve" || fi.renamed["refs"] != "getSchemaRefs" || fi.byAlias["util"] != "util" {
		t.Errorf("ts: %+v", fi)
	}
	if importMatch("lib/compile/resolve", "lib/compile/resolve.ts", "lib/core.ts") != 1 || importMatch("lib/compile/resolve", "lib/core.ts", "lib/core.ts") != 0 {
		t.Error("importMatch")
	}
}

// An import names a file under a source root the importing file shares
// (a Python src layout, a Go tree opened one folder up) surely; a path of
// two names or more under another root less surely; a single name under
// another root, or a directory that only ends like it, not at all.
func TestImportMatchUnderASourceRoot(t *testing.T) {
	for _, c := range []struct {
		imp, def, from string
		want           float64
	}{
		{"net/url", "go1/net/url/url.go", "go1/net/http/client.go", 1},
		{"net/url", "go2/net/url/url.go", "go1/net/http/client.go", rootElsewhere},
		{"foo/bar", "src/foo/bar.py", "src/app/main.py", 1},
		{"foo/bar", "src/foo/bar/__init__.py", "src/app/main.py", 1},
		{"foo/bar", "src/foo/bar.py", "tests/test_bar.py", rootElsewhere},
		{"k8s.io/api/core/v1", "staging/src/k8s.io/api/core/v1/types.go", "pkg/x/y.go", rootElsewhere},
		{"bar", "src/foo/bar.py", "tests/test_bar.py", 0},  // one name under another root
		{"url", "go1/net/url/url.go", "go1/os/file.go", 0}, // net/url is not url outside net/
		{"net/url", "go1/net/url/url.go", "go1/net/url/url_test.go", 1},
		{"net/url", "go1/net/urls/url.go", "go1/net/http/client.go", 0},
		{"github.com/x/y/pkg", "pkg/a.go", "cmd/main.go", 1}, // a module prefix on the import, as before
		{"pkg", "pkg/a.go", "cmd/main.go", 1},
	} {
		if got := importMatch(c.imp, c.def, c.from); got != c.want {
			t.Errorf("importMatch(%q, %q, from %q) = %v, want %v", c.imp, c.def, c.from, got, c.want)
		}
	}
}

// Search hits become candidates best chunk per file first, so one file's
// three chunks do not push every other file out.
func TestBestPerFileFirst(t *testing.T) {
	h := func(p string, line int) codeindex.Hit { return codeindex.Hit{Path: p, StartLine: line} }
	got := bestPerFileFirst([]codeindex.Hit{h("a.go", 1), h("a.go", 9), h("a.go", 20), h("b.go", 3), h("a.go", 30), h("c.go", 4)}, 4)
	var s []string
	for _, x := range got {
		s = append(s, fmt.Sprintf("%s:%d", x.Path, x.StartLine))
	}
	if strings.Join(s, " ") != "a.go:1 b.go:3 c.go:4 a.go:9" {
		t.Errorf("order = %v", s)
	}
}

// Only English stop words leave a question: a Go builtin named in prose is
// a word like any other ("copied" keeps copy, "append" stays); in code,
// keywords and builtins are still left out.
func TestQuestionStopWordsAreEnglishOnly(t *testing.T) {
	got := identifiers("How are the headers copied when the request uses copy and append?", 12, true)
	if strings.Join(got, " ") != "headers copied request uses copy append" {
		t.Errorf("question words = %v", got)
	}
	got = identifiers("n := copy(dst, src); return append(dst, x)", 12, false)
	if strings.Join(got, " ") != "dst src" {
		t.Errorf("code identifiers = %v", got)
	}
}

// The selection, its enclosing function and the code around it overlap:
// they go in as one range of the file, each line once, the selection's
// lines marked.
func TestOverlapsMergedSelectionMarked(t *testing.T) {
	f := newFixture(t, shop, nil)
	// Lines 11-13 of cart.go, the loop: inside Total (9-15), inside the surrounding code.
	req := f.request(t, "cart/cart.go", 11, 13, "What does the loop add up?", 16384)
	b, err := Build(req)
	if err != nil {
		t.Fatal(err)
	}
	for n, line := range map[int]string{9: "func Total(items []pricing.Item, zone string) int {", 12: "sum += pricing.ApplyDiscount(it)", 14: "return sum + shipping.Cost(zone, sum)"} {
		prefix := fmt.Sprintf("%5d", n)
		count := 0
		for _, l := range strings.Split(b.User, "\n") {
			if strings.HasPrefix(l, prefix) && strings.Contains(l[5:], line) {
				count++
			}
		}
		if count != 1 {
			t.Errorf("cart.go line %d appears %d times in the prompt, want once:\n%s", n, count, b.User)
		}
	}
	if !strings.Contains(b.User, "   12›") || strings.Contains(b.User, "   10›") || strings.Contains(b.User, "   14›") {
		t.Errorf("the selection's lines (11-13), and only they, should be marked ›:\n%s", b.User)
	}
	merged := 0
	for _, it := range b.Report.Items {
		if strings.HasPrefix(it.Reason, "merged into cart/cart.go:") {
			merged++
		}
	}
	if merged == 0 {
		t.Errorf("no item reported as merged:\n%s", b.Report.Markdown())
	}
}

// A member the selection selects (c.Value) is looked up on types this file
// names, not on any type far away with a member of that name.
func TestMembersResolvedByTypesNamed(t *testing.T) {
	cookie := "package web\n\ntype Cookie struct{ Name, Value string }\n\nfunc Show(c *Cookie) string {\n\treturn c.Name + \"=\" + c.Value()\n}\n"
	setting := "package settings\n\n// Setting is a configuration entry.\ntype Setting struct{ v string }\n\n// Value returns the setting's value.\nfunc (s Setting) Value() string { return s.v }\n"
	for _, tc := range []struct {
		file string
		want bool
	}{
		{cookie, false},
		{strings.Replace(cookie, "type Cookie struct{ Name, Value string }", "type Cookie struct{ Name string; Value settings.Setting }", 1), true},
	} {
		f := newFixture(t, shop, map[string]string{"web/cookie.go": tc.file, "settings/setting.go": setting})
		req := f.request(t, "web/cookie.go", 5, 7, "How are the cookie's name and value joined?", 16384)
		b, err := Build(req)
		if err != nil {
			t.Fatal(err)
		}
		in, _ := itemsOf(b.Report, SourceDefinitions)
		got := false
		for _, it := range in {
			if strings.Contains(it.Location, "Setting.Value") {
				got = true
			}
		}
		if got != tc.want {
			t.Errorf("Setting.Value included = %v, want %v (file names Setting: %v)\n%s", got, tc.want, tc.want, b.Report.Markdown())
		}
	}
}

func TestIsTestPath(t *testing.T) {
	for rel, want := range map[string]bool{
		"net/http/server.go":            false,
		"net/http/server_test.go":       true,
		"testdata/x.go":                 true,
		"a/testdata/x.go":               true,
		"a/mytestdata/x.go":             false,
		"test/x.py":                     true,
		"src/test/java/A.java":          true,
		"src/latest/x.py":               false,
		"pkg/tests/t.rs":                true,
		"lib/__tests__/a.js":            true,
		"lib/a.test.ts":                 true,
		"lib/a.spec.js":                 true,
		"lib/test_util.py":              true,
		"contest/x.go":                  false,
		"a/contest/test":                false, // a file named test, no directory
		"a/attest/b/test/c":             true,
		"internal/testenv/testenv.go":   false,
		"go/ast/ast.go":                 false,
		"x/testdatatest/testdata/a.txt": true,
	} {
		if got := isTestPath(rel); got != want {
			t.Errorf("isTestPath(%q) = %v, want %v", rel, got, want)
		}
	}
}

// dirOf is path.Dir for the workspace-relative paths placement sees.
func TestDirOfIsPathDir(t *testing.T) {
	for _, p := range []string{"a.go", "a/b.go", "a/b/c.go", "a/b/", "/a.go", "/a/b.go", "", ".", "a"} {
		if got, want := dirOf(p), path.Dir(p); got != want {
			t.Errorf("dirOf(%q) = %q, path.Dir = %q", p, got, want)
		}
	}
}

// A Go file for another system is placed after the Unix one: the system is
// a part of the name after an underscore, never its first.
func TestOtherOSPenalty(t *testing.T) {
	for rel, want := range map[string]float64{
		"os/exec/lp_unix.go": 0, "os/exec/lp_windows.go": 0.5, "syscall/zerrors_plan9_386.go": 0.5,
		"net/fd_js_wasm.go": 0.5, "a/b__darwin.go": 0.5, "a/windows_helper.go": 0, "a/x_windowsx.go": 0,
		"a/x_windows_.go": 0.5, "a/x_windows.txt": 0, "a/x_linux_amd64.go": 0, "windows.go": 0,
	} {
		if got := otherOSPenalty(rel); got != want {
			t.Errorf("otherOSPenalty(%q) = %v, want %v", rel, got, want)
		}
	}
}
