package contextengine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/tokencount"
)

// store is a small Go module: Service.Place (orders/order.go) calls
// s.book.Record (a method of ledger.Book, reached through a field), the
// same-package validate (long: more lines than a definition shows) and a
// same-file helper; orders/record.go has a same-named function Record and
// metrics a same-named method, neither of which Place calls.
func storeArchive() string {
	var long strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&long, "\tif strings.Contains(id, %q) {\n\t\treturn false\n\t}\n", fmt.Sprintf("bad%02d", i))
	}
	return `
-- go.mod --
module example.com/store

go 1.22
-- orders/order.go --
package orders

import (
	"errors"

	"example.com/store/ledger"
)

var errInvalid = errors.New("invalid order")

// Service places orders.
type Service struct {
	book  *ledger.Book
	limit int
}

// Place records an order after checking it.
func (s *Service) Place(id string, cents int) (string, error) {
	if !validate(id) {
		return "", errInvalid
	}
	if cents <= 0 || cents > s.limit {
		return "", errInvalid
	}
	entry := s.book.Record(id, cents)
	return describe(entry.ID, cents), nil
}

// describe formats an order line.
func describe(id string, cents int) string {
	return id + ": " + itoa(cents)
}
-- orders/itoa.go --
package orders

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
-- orders/validate.go --
package orders

import "strings"

// validate rejects ids with any of the banned words.
func validate(id string) bool {
` + long.String() + `	return id != "" // END OF VALIDATE
}
-- orders/record.go --
package orders

// Record is a same-named function in the caller's own package; Place's
// s.book.Record is not it.
func Record(id string, cents int) string {
	return "WRONG RECORD FUNCTION " + id
}
-- ledger/book.go --
package ledger

// Book is the ledger of orders.
type Book struct {
	entries []Entry
	total   int
}

// Entry is one recorded order.
type Entry struct {
	ID    string
	Cents int
}

// Record appends an order to the book and returns its entry.
func (b *Book) Record(id string, cents int) Entry {
	e := Entry{ID: id, Cents: cents}
	b.entries = append(b.entries, e)
	b.total += cents // END OF BOOK RECORD
	return e
}
-- metrics/counter.go --
package metrics

// Counter counts events.
type Counter struct{ n int }

// Record is a same-named method of another type.
func (c *Counter) Record(id string, cents int) {
	c.n++ // WRONG RECORD METHOD
}
`
}

// placeLines: the selection is Place's last two statements (the calls of
// s.book.Record and describe); validate is called only above it, in the
// enclosing method.
const placeFrom, placeTo = 25, 26

func calleeItems(r *Report) (in, out []*Item) { return itemsOf(r, SourceCallees) }

// hasCallee says whether loc is a callee candidate (in the prompt as a
// callee body or already there).
func hasCallee(r *Report, loc string) bool {
	for _, it := range r.Items {
		if it.Source == SourceCallees && it.Location == loc {
			return true
		}
	}
	return false
}

func TestCalleeBodyAddedResolvedByReceiverType(t *testing.T) {
	f := newFixture(t, storeArchive(), nil)
	b, err := Build(f.request(t, "orders/order.go", placeFrom, placeTo, "What happens when an order is placed?", 16384))
	if err != nil {
		t.Fatal(err)
	}
	requiredIncluded(t, b)
	in, _ := calleeItems(b.Report)
	var locs []string
	for _, it := range in {
		locs = append(locs, it.Location)
	}
	// validate is called only outside the selection (in the enclosing
	// Place) and is longer than a definition shows: its whole body comes in
	// as a callee body, marked as such.
	if !strings.Contains(b.User, "END OF VALIDATE") {
		t.Errorf("validate's whole body is missing (callee items included: %v)\n%s", locs, b.Report.Markdown())
	}
	if !strings.Contains(b.User, "## Callee body: validate (function), called from the enclosing Service.Place") {
		t.Errorf("validate is not marked as a callee body of the enclosing method:\n%s", b.User)
	}
	// s.book.Record resolves through the field's type to ledger.Book's
	// method, never to the same-named function of this package or the
	// metrics method.
	if !strings.Contains(b.User, "END OF BOOK RECORD") {
		t.Errorf("Book.Record's body is missing:\n%s", b.Report.Markdown())
	}
	// (A search hit may still show them: the words match.)
	for _, it := range b.Report.Items {
		if (it.Source == SourceCallees || it.Source == SourceDefinitions) &&
			(strings.HasPrefix(it.Location, "orders/record.go") || strings.HasPrefix(it.Location, "metrics/counter.go")) {
			t.Errorf("a same-named definition instead of the receiver's method: %s %s", it.Source, it.Location)
		}
	}
	if !hasNote(b.Report, "namesakes left out, the receiver's type was resolved: Record") {
		t.Errorf("no note on the namesakes of Record left out: %v", b.Report.Notes)
	}
	// The report lists the callee bodies with why they are there.
	if md := b.Report.Markdown(); !strings.Contains(md, "| callee bodies | orders/validate.go:") {
		t.Errorf("the report has no callee row for validate:\n%s", md)
	}
}

// A callee whose body is in the prompt already (the same-file helper in the
// surrounding code, a short function shown whole as a definition) is not
// added again: each body is in the prompt once.
func TestCalleeAlreadyPresentNotDuplicated(t *testing.T) {
	f := newFixture(t, storeArchive(), nil)
	b, err := Build(f.request(t, "orders/order.go", placeFrom, placeTo, "What happens when an order is placed?", 16384))
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"END OF BOOK RECORD", "END OF VALIDATE", "return id + \": \" + itoa(cents)"} {
		if n := strings.Count(b.User, marker); n != 1 {
			t.Errorf("%q is in the prompt %d times, want once\n%s", marker, n, b.Report.Markdown())
		}
	}
	found := false
	for _, it := range b.Report.Items {
		if it.Source == SourceCallees && strings.Contains(it.Location, "describe") {
			found = true
			if it.Included || !strings.HasPrefix(it.Reason, "duplicate: already in the prompt in orders/order.go:") {
				t.Errorf("describe (in the surrounding code) as a callee: included %v, %q", it.Included, it.Reason)
			}
		}
	}
	if !found {
		t.Errorf("describe, called in the selection, is not a callee candidate:\n%s", b.Report.Markdown())
	}
}

// At small budgets the callee bodies only take what is left: the build
// never goes over the budget, and a body that does not fit is reported.
func TestCalleeBudgetRespected(t *testing.T) {
	f := newFixture(t, storeArchive(), nil)
	sawNoRoom, sawIncluded := false, false
	for window := 1024; window <= 8192; window += 512 {
		b, err := Build(f.request(t, "orders/order.go", placeFrom, placeTo, "What happens when an order is placed?", window))
		if err != nil {
			t.Fatal(err)
		}
		bd := b.Report.Budget
		if bd.Used > bd.Available {
			t.Errorf("window %d: used %d > available %d", window, bd.Used, bd.Available)
		}
		if n := tokencount.Count(b.System) + tokencount.Count(b.User); n > bd.Available {
			t.Errorf("window %d: the prompt is %d tokens, %d available", window, n, bd.Available)
		}
		sum := tokencount.Count(b.System)
		for _, it := range b.Report.Items[1:] {
			if it.Included {
				sum += it.Tokens
			}
		}
		if sum != bd.Used {
			t.Errorf("window %d: included items hold %d tokens, the budget says %d used", window, sum, bd.Used)
		}
		in, out := calleeItems(b.Report)
		if len(in) > 0 {
			sawIncluded = true
		}
		for _, it := range out {
			if strings.Contains(it.Reason, "no room") {
				sawNoRoom = true
			}
		}
	}
	if !sawNoRoom || !sawIncluded {
		t.Errorf("over 1k-8k windows: a callee left out for lack of room %v, a callee included %v; want both", sawNoRoom, sawIncluded)
	}
}

// Python: self.m() is the method of the enclosing class or of its base
// class, not a same-named function of another module.
func TestCalleeSelfResolvedThroughBaseClass(t *testing.T) {
	f := newFixture(t, `
-- pkg/mixins.py --
class LoopBound:
    def _get_loop(self):
        loop = current_loop()
        return loop  # THE MIXIN METHOD
-- pkg/other.py --
def _get_loop():
    return None  # WRONG MODULE FUNCTION
-- pkg/locks.py --
from . import mixins


class Lock(mixins.LoopBound):
    def acquire(self):
        fut = self._get_loop().create_future()
        try:
            return fut
        finally:
            self._waiters = None
`, nil)
	b, err := Build(f.request(t, "pkg/locks.py", 7, 10, "Whose loop makes the future?", 8192))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.User, "THE MIXIN METHOD") || !hasCallee(b.Report, "pkg/mixins.py:2-4 LoopBound._get_loop") {
		t.Errorf("LoopBound._get_loop is missing or not resolved as the callee:\n%s", b.Report.Markdown())
	}
	for _, it := range b.Report.Items {
		if (it.Source == SourceCallees || it.Source == SourceDefinitions) && strings.HasPrefix(it.Location, "pkg/other.py") {
			t.Errorf("the module function _get_loop is a candidate: %s %s", it.Source, it.Location)
		}
	}
}

// TypeScript: cxt.error() on a parameter typed KeywordCxt is the class's
// method, not the file's own const named error.
func TestCalleeTypeScriptParameterType(t *testing.T) {
	f := newFixture(t, `
-- lib/validate.ts --
export class KeywordCxt {
  error(append?: boolean): void {
    this.report(append) // THE CLASS METHOD
  }
  report(append?: boolean): void {}
}
-- lib/required.ts --
import type {KeywordCxt} from "./validate"

const error = {message: "WRONG CONST"}

export function code(cxt: KeywordCxt): void {
  const n = 1
  if (n > 0) {
    cxt.error()
  }
}
`, nil)
	b, err := Build(f.request(t, "lib/required.ts", 7, 9, "What does error() emit?", 8192))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.User, "THE CLASS METHOD") || !hasCallee(b.Report, "lib/validate.ts:2-4 KeywordCxt.error") {
		t.Errorf("KeywordCxt.error is missing or not resolved as the callee:\n%s", b.Report.Markdown())
	}
	for _, it := range b.Report.Items {
		if it.Source == SourceDefinitions && strings.HasPrefix(it.Location, "lib/required.ts:3") {
			t.Errorf("the file's const error is a definition candidate for cxt.error(): %s", it.Location)
		}
	}
}

// findCalls reads calls, not the heads of definitions, in Go, Python and
// TypeScript; a call inside `if (…) {` is still a call.
func TestFindCalls(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string // name@recv, in order
	}{
		{"func (s *Service) Place(id string) error {\n\tentry := s.book.Record(id, 1)\n\treturn describe(entry)\n}\n", "Record@s.book describe@"},
		{"def acquire(self):\n    fut = self._get_loop().create_future()\n    return utils.collapse(x)\n", "_get_loop@self create_future@? collapse@utils"},
		{"  code(cxt: KeywordCxt) {\n    if (cxt.ok(x)) {\n      gen.if(checkMissingProp(cxt), () => cxt.error())\n    }\n  }\n", "ok@cxt if@gen checkMissingProp@ error@cxt"},
		{"  error(append?: boolean): void {\n    this.report?.flush()\n  }\n", "flush@this.report"},
		// TypeScript's CommonJS output: (0, mod_1.f)(…) and (0, exports.f)(…).
		{"function add(ctx, data) {\n    const m = (0, errors_1.getErrorMap)();\n    const issue = (0, exports.makeIssue)({ data });\n}\n", "getErrorMap@errors_1 makeIssue@"},
	} {
		lines := strings.SplitAfter(tc.src, "\n")
		var got []string
		for _, c := range findCalls(lines, 1, len(lines), 1, len(lines)) {
			got = append(got, c.name+"@"+c.recv)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("findCalls(%q) = %q, want %q", tc.src, g, tc.want)
		}
	}
}

// A callee body resolved exactly may take the room of open documents and
// weak search hits (never of the selection, the definitions or the first
// search hits), and the report says which items gave way to which body.
func TestCalleeDisplacesWeakItems(t *testing.T) {
	f := newFixture(t, storeArchive(), nil)
	for _, rel := range []string{"metrics/counter.go", "orders/itoa.go"} {
		b, err := os.ReadFile(filepath.Join(f.root, rel))
		if err != nil {
			t.Fatal(err)
		}
		f.ws.Docs.Open(f.ws.Abs(rel), "go", 1, string(b)+strings.Repeat("// padding line for the open document\n", 50))
	}
	displaced := 0
	for window := 1024; window <= 4096; window += 128 {
		b, err := Build(f.request(t, "orders/order.go", placeFrom, placeTo, "What happens when an order is placed?", window))
		if err != nil {
			t.Fatal(err)
		}
		if bd := b.Report.Budget; bd.Used > bd.Available {
			t.Errorf("window %d: used %d > available %d", window, bd.Used, bd.Available)
		}
		byBody := map[string]int{}
		for _, it := range b.Report.Items {
			loc, ok := strings.CutPrefix(it.Reason, "displaced by the callee body ")
			if !ok {
				continue
			}
			leftover := strings.HasSuffix(loc, "; it was in on the room the caps left")
			loc = strings.TrimSuffix(loc, "; it was in on the room the caps left")
			displaced++
			byBody[loc]++
			weak := it.Source == SourceOpenDocs || it.Source == SourceSearch && (it.Score < weakSearchScore || leftover)
			if !weak {
				t.Errorf("window %d: %s %s gave way to a callee body", window, it.Source, it.Location)
			}
		}
		for _, it := range b.Report.Items {
			if it.Source != SourceCallees || !it.Included || !strings.Contains(it.Reason, "in the room of") {
				continue
			}
			var n int
			if _, err := fmt.Sscanf(it.Reason[strings.Index(it.Reason, "in the room of "):], "in the room of %d", &n); err != nil || byBody[it.Location] != n {
				t.Errorf("window %d: %s says %q, %d items name it", window, it.Location, it.Reason, byBody[it.Location])
			}
		}
	}
	if displaced == 0 {
		t.Errorf("no window from 1k to 4k had a callee body take the room of an open document or weak search hit")
	}
}

// buildEnv reads Go variable types from receivers, parameters, var
// declarations and blocks, composite literals and new; a constructor's
// result is left for its signature.
func TestBuildEnvGo(t *testing.T) {
	src := `func (c *Client) do(req *Request, n int) (*Response, error) {
	var (
		deadline = c.deadline()
		resp     *Response // the last response
		reqs     []*Request
	)
	var buf bytes.Buffer
	w := &bufio.Writer{}
	p := new(Pipe)
	tr, err := NewTransport(n)
`
	env := buildEnv("go", src)
	for v, want := range map[string]string{"c": "Client", "req": "Request", "resp": "Response", "reqs": "Request",
		"buf": "bytes.Buffer", "w": "bufio.Writer", "p": "Pipe"} {
		if got := env.vars[v]; got != want {
			t.Errorf("type of %s = %q, want %q", v, got, want)
		}
	}
	if env.vars["deadline"] != "" || env.ctor["tr"] != "NewTransport" || env.self != "Client" {
		t.Errorf("deadline %q (want none), tr's constructor %q, self %q", env.vars["deadline"], env.ctor["tr"], env.self)
	}
}

// buildEnv runs each Go pattern only on the lines holding its literals
// (goLiterals): on real code no line a pattern matches lacks them.
func TestGoLiteralsHoldOnEveryMatch(t *testing.T) {
	dir := filepath.Join(testenv.GOROOT(t), "src", "net", "http")
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	if len(files) < 20 {
		testenv.Need(t, "the Go tree's net/http (%d files)", len(files))
	}
	matched := map[*regexp.Regexp]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			tl := strings.TrimSpace(stripLineComment(line))
			for re := range goLiterals {
				if !re.MatchString(tl) {
					continue
				}
				matched[re]++
				if !mayMatch(re, tl) {
					t.Errorf("%s: %q matches %s but lacks one of %q", filepath.Base(f), tl, re, goLiterals[re])
				}
			}
		}
	}
	for re := range goLiterals {
		if matched[re] == 0 {
			t.Errorf("no line of net/http matches %s: the test checks nothing of it", re)
		}
	}
}

// The second hop: what a callee resolved exactly calls in turn comes in
// after the first hop's bodies, marked as called from a callee, when the
// budget has room left; what the selection calls directly comes first.
func TestCalleeSecondHop(t *testing.T) {
	f := newFixture(t, `
-- go.mod --
module example.com/shop

go 1.22
-- cart/cart.go --
package cart

import "example.com/shop/pricing"

// Total sums the cart.
func Total(items []int) int {
	sum := 0
	for _, it := range items {
		sum += it
	}
	return pricing.Apply(sum)
}
-- pricing/apply.go --
package pricing

// Apply applies the discounts.
func Apply(sum int) int {
	return discount(sum) // END OF APPLY
}
-- pricing/discount.go --
package pricing

func discount(sum int) int {
	if sum > 100 {
		return round(sum - 10) // END OF DISCOUNT
	}
	return sum
}
-- pricing/round.go --
package pricing

func round(n int) int {
	return n / 5 * 5 // END OF ROUND
}
`, nil)
	b, err := Build(f.request(t, "cart/cart.go", 11, 11, "What does the total come to?", 16384))
	if err != nil {
		t.Fatal(err)
	}
	requiredIncluded(t, b)
	if !strings.Contains(b.User, "END OF APPLY") {
		t.Fatalf("the first hop, pricing.Apply, is missing:\n%s", b.Report.Markdown())
	}
	if !strings.Contains(b.User, "END OF DISCOUNT") || !strings.Contains(b.User, "## Callee body: discount (function), called from a callee") {
		t.Errorf("the second hop, discount (called by Apply), is missing or not marked:\n%s\n%s", b.User, b.Report.Markdown())
	}
	if !strings.Contains(b.User, "END OF ROUND") {
		t.Errorf("the third hop, round (called by discount), is missing:\n%s", b.Report.Markdown())
	}
	i, j, k := strings.Index(b.User, "END OF APPLY"), strings.Index(b.User, "END OF DISCOUNT"), strings.Index(b.User, "END OF ROUND")
	if !(i < j && j < k) {
		t.Errorf("the hops are not in order (first %d, second %d, third %d)", i, j, k)
	}
}

// Go: x.T.m() where x's type cannot be read is the method m of the
// package's type T (an embedded field named after its type), not another
// type's method of that name.
func TestCalleeEmbeddedFieldName(t *testing.T) {
	f := newFixture(t, `
-- go.mod --
module example.com/net

go 1.22
-- conn.go --
package net

func loop(ch chan wrapped) {
	for w := range ch {
		w.req.Request.write(1)
	}
}
-- request.go --
package net

type Request struct{ n int }

func (r *Request) write(n int) { r.n += n // THE REQUEST WRITE
}
-- header.go --
package net

type Header struct{ n int }

func (h *Header) write(n int) { h.n -= n // WRONG WRITE
}

type Other struct{ n int }

func (o *Other) write(n int) { o.n *= n // WRONG TOO
}
`, nil)
	b, err := Build(f.request(t, "conn.go", 5, 5, "What is written?", 8192))
	if err != nil {
		t.Fatal(err)
	}
	if !hasCallee(b.Report, "request.go:5-6 Request.write") {
		t.Errorf("Request.write is not the callee of w.req.Request.write():\n%s", b.Report.Markdown())
	}
	for _, it := range b.Report.Items {
		if it.Source == SourceCallees && strings.HasPrefix(it.Location, "header.go") {
			t.Errorf("another type's write is a callee: %s", it.Location)
		}
	}
}

// Python: self.policy.fold() where the attribute's type cannot be read is
// the fold of the package's class Policy and its subclasses' overrides,
// not a same-named method of an unrelated class.
func TestCalleeAttributeNamedAfterClass(t *testing.T) {
	f := newFixture(t, `
-- mail/_base.py --
class Policy:
    def fold(self, name, value):
        raise NotImplementedError  # ABSTRACT FOLD


class Compat32(Policy):
    def fold(self, name, value):
        return name + value  # COMPAT FOLD
-- mail/policy.py --
from mail._base import Policy


class EmailPolicy(Policy):
    def fold(self, name, value):
        return name.upper() + value  # EMAIL FOLD
-- mail/tokens.py --
class Token:
    def fold(self, policy):
        return "WRONG FOLD"
-- mail/generator.py --
class Generator:
    def __init__(self, policy):
        self.policy = policy

    def write_headers(self, msg):
        for h, v in msg.items():
            self.write(self.policy.fold(h, v))
`, nil)
	b, err := Build(f.request(t, "mail/generator.py", 7, 7, "How is each header folded?", 8192))
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"mail/_base.py:2-3 Policy.fold", "mail/_base.py:7-8 Compat32.fold", "mail/policy.py:5-6 EmailPolicy.fold"} {
		if !hasCallee(b.Report, loc) {
			t.Errorf("%s is not a callee of self.policy.fold():\n%s", loc, b.Report.Markdown())
		}
	}
	for _, it := range b.Report.Items {
		if it.Source == SourceCallees && strings.HasPrefix(it.Location, "mail/tokens.py") {
			t.Errorf("an unrelated class's fold is a callee: %s", it.Location)
		}
	}
}

// Go: a variable holding a constructor's result has the result's type,
// named results too: w.flush() after w, err := newWriter() is writer.flush.
func TestCalleeNamedResultType(t *testing.T) {
	f := newFixture(t, `
-- go.mod --
module example.com/w

go 1.22
-- use.go --
package w

func use() error {
	w, err := newWriter(2)
	if err != nil {
		return err
	}
	w.flush()
	return nil
}
-- writer.go --
package w

type writer struct{ n int }

func newWriter(n int) (w *writer, err error) {
	return &writer{n: n}, nil
}

func (w *writer) flush() { w.n = 0 // THE WRITER FLUSH
}
-- other.go --
package w

type other struct{ n int }

func (o *other) flush() { o.n = 1 // WRONG FLUSH
}

type third struct{ n int }

func (o *third) flush() { o.n = 2 // WRONG TOO
}
`, nil)
	b, err := Build(f.request(t, "use.go", 8, 8, "What does flush do?", 8192))
	if err != nil {
		t.Fatal(err)
	}
	if !hasCallee(b.Report, "writer.go:9-10 writer.flush") {
		t.Errorf("writer.flush is not the callee of w.flush():\n%s", b.Report.Markdown())
	}
}

// A project under a source root (a Python src layout; the Go tree opened
// one folder up) imports by paths without the root, from files under it
// and from tests beside it: the imported module's definitions are placed
// as imported, ahead of a namesake elsewhere.
func TestImportUnderASourceRoot(t *testing.T) {
	f := newFixture(t, `
-- src/shop/orders.py --
from store.ledger import Book


def place(order_id, cents):
    book = Book()
    return book.record(order_id, cents)
-- tests/test_orders.py --
from store.ledger import Book


def test_record():
    book = Book()
    assert book.record("a", 1)
-- src/store/ledger.py --
class Book:
    """The store's ledger."""

    def record(self, order_id, cents):
        return (order_id, cents)  # STORE LEDGER RECORD
-- src/archive/ledger.py --
class Book:
    """An old ledger."""

    def record(self, order_id, cents):
        return None  # ARCHIVE LEDGER RECORD
`, nil)
	// From the same root, and from a tests folder beside it.
	for _, file := range []string{"src/shop/orders.py", "tests/test_orders.py"} {
		b, err := Build(f.request(t, file, 5, 6, "What does this write to the books?", 16384))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.User, "STORE LEDGER RECORD") {
			t.Errorf("%s: the imported Book's record is missing:\n%s", file, b.Report.Markdown())
		}
		for _, it := range b.Report.Items {
			if it.Included && (it.Source == SourceCallees || it.Source == SourceDefinitions) && strings.HasPrefix(it.Location, "src/archive/") {
				t.Errorf("%s: the namesake in another package instead of the imported one: %s %s", file, it.Source, it.Location)
			}
		}
	}
}

// A Go module in a folder whose module path does not end in the folder's
// (services/shop with `module example.com/store`) imports its packages by
// the module path: they are placed as imported (go.mod says where they
// are), ahead of a namesake package elsewhere in the workspace.
func TestGoModuleInAFolder(t *testing.T) {
	archive := strings.ReplaceAll(storeArchive(), "\n-- ", "\n-- services/shop/") + `
-- services/archive/ledger/book.go --
package ledger

// Book is an archived ledger.
type Book struct{ n int }

// Record counts an archived order.
func (b *Book) Record(id string, cents int) int {
	b.n++ // WRONG ARCHIVE RECORD
	return b.n
}
`
	f := newFixture(t, archive, nil)
	b, err := Build(f.request(t, "services/shop/orders/order.go", placeFrom, placeTo, "What happens when an order is placed?", 16384))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.User, "END OF BOOK RECORD") {
		t.Errorf("the module's ledger.Book.Record is missing:\n%s", b.Report.Markdown())
	}
	for _, it := range b.Report.Items {
		if it.Included && (it.Source == SourceCallees || it.Source == SourceDefinitions) && strings.HasPrefix(it.Location, "services/archive/") {
			t.Errorf("the namesake package instead of the module's: %s %s", it.Source, it.Location)
		}
	}
}

// A Go module imports a sibling module of the repository whose path does
// not end in its folder's (example.com/money in libs/cash), reached by a
// replace directive of its go.mod or by a go.work: the placed definition
// is the sibling's, not a namesake package's.
func TestGoSiblingModule(t *testing.T) {
	shop := strings.ReplaceAll(storeArchive(), "\n-- ", "\n-- services/shop/")
	shop = strings.ReplaceAll(shop, `"example.com/store/ledger"`, `"example.com/money/ledger"`)
	shop = strings.Replace(shop, "\n-- services/shop/ledger/book.go --", "\n-- libs/cash/ledger/book.go --", 1)
	common := `
-- libs/cash/go.mod --
module example.com/money

go 1.22
-- services/archive/ledger/book.go --
package ledger

// Book is an archived ledger.
type Book struct{ n int }

// Record counts an archived order.
func (b *Book) Record(id string, cents int) int {
	b.n++ // WRONG ARCHIVE RECORD
	return b.n
}
`
	for _, c := range []struct{ name, archive string }{
		{"replace", strings.Replace(shop, "module example.com/store\n", "module example.com/store\n\nrequire example.com/money v0.0.0\n\nreplace example.com/money => ../../libs/cash\n", 1) + common},
		{"go.work", shop + common + "-- go.work --\ngo 1.22\n\nuse (\n\t./services/shop\n\t./libs/cash\n)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.archive, nil)
			b, err := Build(f.request(t, "services/shop/orders/order.go", placeFrom, placeTo, "What happens when an order is placed?", 16384))
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range b.Report.Items {
				if it.Included && (it.Source == SourceCallees || it.Source == SourceDefinitions) && strings.HasPrefix(it.Location, "services/archive/") {
					t.Errorf("the namesake package instead of the sibling module's: %s %s", it.Source, it.Location)
				}
			}
			if !strings.Contains(b.User, "END OF BOOK RECORD") {
				t.Errorf("the sibling module's ledger.Book.Record is missing:\n%s", b.Report.Markdown())
			}
		})
	}
}
