package search_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/corpora"
	"github.com/cairn-dev/cairn/search"
	"github.com/cairn-dev/cairn/workspace"
)

// The fresh retrieval set (testdata/fresh.tsv) over four codebases nobody
// here wrote, in three languages. It runs with CAIRN_QUALITY=1 (scripts/test.sh
// sets it after fetching the corpora) and asserts floors on recall@5 and MRR:
//
//	CAIRN_QUALITY=1 go test -run TestFreshRetrieval -v ./search
//
// CAIRN_QUALITY_STATE keeps the indexes between runs (else a temporary
// directory); the Go tree's cold index takes a minute or two on 2 cores.

type freshCase struct {
	corpus, query string
	files         []string
}

func loadFresh(t testing.TB) []freshCase {
	t.Helper()
	var out []freshCase
	for _, p := range readTSV(t, "fresh.tsv", 3) {
		out = append(out, freshCase{corpus: p[0], query: p[1], files: strings.Split(p[2], ",")})
	}
	return out
}

// readTSV reads testdata/name: its lines that are neither empty nor
// comments, each split at tabs into exactly cols fields.
func readTSV(t testing.TB, name string, cols int) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Split(line, "\t")
		if len(p) != cols {
			t.Fatalf("%s: bad line %q (want %d tab-separated fields)", name, line, cols)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return out
}

// freshCorpora are the corpora fresh.tsv covers. The set is frozen: corpora
// added later get their questions in heldout.tsv, not here.
var freshCorpora = []string{"go", "python", "rxjs", "zod"}

func TestFreshSetWellFormed(t *testing.T) {
	per := map[string]int{}
	for _, c := range loadFresh(t) {
		per[c.corpus]++
		if _, err := search.ParseQuery(c.query); err != nil {
			t.Errorf("%q: %v", c.query, err)
		}
	}
	for _, c := range freshCorpora {
		if per[c] < 8 {
			t.Errorf("corpus %s has %d questions, want at least 8", c, per[c])
		}
	}
}

func openCorpusIndex(t testing.TB, name string) *search.Index {
	t.Helper()
	root := corpora.Root(t, name)
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	if d := os.Getenv("CAIRN_QUALITY_STATE"); d != "" {
		state = filepath.Join(d, "search-"+name)
	}
	ix, err := search.Open(ws, search.Options{StateDir: state, DeclsFunc: search.RepomapDecls})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ix
}

// rankOf is the 1-based position of the first accepted file in files, 0
// when absent.
func rankOf(files, accepted []string) int {
	for i, f := range files {
		for _, a := range accepted {
			if f == a {
				return i + 1
			}
		}
	}
	return 0
}

type score struct {
	n       int
	at5, rr float64
	misses  []string
	hitsAt5 float64 // `--limit 5`: the distinct files of the first 5 hits
}

func (s *score) add(c freshCase, files, hitFiles []string) {
	s.n++
	r := rankOf(files, c.files)
	if r > 0 && r <= 5 {
		s.at5++
	} else {
		top := files
		if len(top) > 3 {
			top = top[:3]
		}
		s.misses = append(s.misses, fmt.Sprintf("%s %q: rank %d (top %v)", c.corpus, c.query, r, top))
	}
	if r > 0 {
		s.rr += 1 / float64(r)
	}
	if r := rankOf(hitFiles, c.files); r > 0 && r <= 5 {
		s.hitsAt5++
	}
}

func (s score) row(name string) string {
	n := float64(s.n)
	return fmt.Sprintf("%-8s %4d %9.3f %7.3f %9.3f", name, s.n, s.at5/n, s.rr/n, s.hitsAt5/n)
}

func (s score) rgCols() string {
	if s.n == 0 {
		return ""
	}
	n := float64(s.n)
	return fmt.Sprintf(" %9.3f %7.3f", s.at5/n, s.rr/n)
}

var rgWordRE = regexp.MustCompile(`[A-Za-z0-9_]{3,}`)

// rgStop are the question words rg is not given (rg has no notion of them).
var rgStop = map[string]bool{"how": true, "does": true, "the": true, "are": true, "and": true, "for": true,
	"from": true, "into": true, "its": true, "what": true, "when": true, "where": true, "which": true, "with": true, "is": true}

// rgFiles is what a user without an index does: rg -i -w -c with the
// question's words (stop words left out), files ordered by matching lines.
func rgFiles(root, q string) []string {
	args := []string{"-i", "-w", "-c", "--no-messages"}
	for _, w := range rgWordRE.FindAllString(q, -1) {
		if !rgStop[strings.ToLower(w)] {
			args = append(args, "-e", w)
		}
	}
	cmd := exec.Command("rg", append(args, ".")...)
	cmd.Dir = root
	out, _ := cmd.Output()
	type fc struct {
		f string
		n int
	}
	var fcs []fc
	for _, l := range strings.Split(string(out), "\n") {
		i := strings.LastIndexByte(l, ':')
		if i < 0 {
			continue
		}
		n, _ := strconv.Atoi(l[i+1:])
		fcs = append(fcs, fc{strings.TrimPrefix(l[:i], "./"), n})
	}
	sort.Slice(fcs, func(i, j int) bool {
		if fcs[i].n != fcs[j].n {
			return fcs[i].n > fcs[j].n
		}
		return fcs[i].f < fcs[j].f
	})
	files := make([]string, len(fcs))
	for i, x := range fcs {
		files[i] = x.f
	}
	return files
}

func distinct(hits []search.Hit) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		if !seen[h.Path] {
			seen[h.Path] = true
			out = append(out, h.Path)
		}
	}
	return out
}

// Floors: the figures measured when the set was committed, minus a margin
// for index statistics that move with the corpus version. A change that
// lowers retrieval below them fails.
var freshFloor = struct{ at5, mrr float64 }{at5: 0.85, mrr: 0.68}

// scoreSets asks each corpus of names its questions in by, in a subtest,
// of Cairn and (when installed) of rg; check, when set, judges a corpus's
// figures inside its subtest. It returns the totals over all corpora and
// the table: a header, a row per corpus and, when any ran, one for all.
func scoreSets(t *testing.T, names []string, by map[string][]freshCase, check func(t *testing.T, name string, s score)) (score, []string) {
	_, rgErr := exec.LookPath("rg")
	var all, allRg score
	rows := []string{fmt.Sprintf("%-8s %4s %9s %7s %9s %9s %7s", "corpus", "n", "files@5", "MRR", "hits@5", "rg@5", "rg MRR")}
	for _, name := range names {
		if len(by[name]) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			ix := openCorpusIndex(t, name)
			defer ix.Close()
			root := corpora.Root(t, name)
			var s, rg score
			for _, c := range by[name] {
				if rgErr == nil {
					f := rgFiles(root, c.query)
					rg.add(c, f, f)
					allRg.add(c, f, f)
				}
				res, err := ix.Search(context.Background(), c.query, 50)
				if err != nil {
					t.Fatalf("%q: %v", c.query, err)
				}
				top5, err := ix.Search(context.Background(), c.query, 5)
				if err != nil {
					t.Fatalf("%q: %v", c.query, err)
				}
				s.add(c, distinct(res.Hits), distinct(top5.Hits))
				all.add(c, distinct(res.Hits), distinct(top5.Hits))
			}
			for _, m := range s.misses {
				t.Logf("miss: %s", m)
			}
			rows = append(rows, s.row(name)+rg.rgCols())
			if check != nil {
				check(t, name, s)
			}
		})
	}
	if all.n > 0 {
		rows = append(rows, all.row("all")+allRg.rgCols())
	}
	return all, rows
}

func TestFreshRetrieval(t *testing.T) {
	corpora.Enabled(t)
	cases := loadFresh(t)
	by := map[string][]freshCase{}
	for _, c := range cases {
		by[c.corpus] = append(by[c.corpus], c)
	}
	all, rows := scoreSets(t, freshCorpora, by, nil)
	if all.n == 0 {
		return
	}
	t.Logf("fresh retrieval (files@5: answer file among the first 5 files; hits@5: among the files of `--limit 5`):\n%s", strings.Join(rows, "\n"))
	n := float64(all.n)
	if all.at5/n < freshFloor.at5 || all.rr/n < freshFloor.mrr {
		t.Errorf("recall@5 %.3f, MRR %.3f: below the floor %.2f / %.2f", all.at5/n, all.rr/n, freshFloor.at5, freshFloor.mrr)
	}
}
