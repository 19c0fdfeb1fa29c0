package search

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
)

// drivenByBleve runs the query search builds for words requiring need
// (every one, as compound wholes, or any, as driving terms) through
// bleve's searchers, every match collected.
func drivenByBleve(t *testing.T, ix *Index, words []string, need []string, every bool, stats *search.BM25Stats) *bleve.SearchResult {
	t.Helper()
	p := Parsed{Words: words}
	q := p.build(ix, true, need, false) // driving terms: any
	if every {
		q = p.query(ix, true, nil, need, queryAll) // compound wholes: all
	}
	req := bleve.NewSearchRequestOptions(q, 1<<20, 0, false)
	req.PreSearchData = map[string]interface{}{search.BM25PreSearchDataKey: stats}
	sr, err := ix.idx.SearchInContext(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return sr
}

// comparedQuestions are the ranking sets' questions and the fresh set's
// about the Go tree: short and long, plain words and identifiers.
func comparedQuestions(t *testing.T) []string {
	questions := slices.Clone(rankingQueries)
	for _, q := range loadQueries(t) {
		questions = append(questions, q.Query)
	}
	fresh, err := os.ReadFile(filepath.Join("testdata", "fresh.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(fresh), "\n") {
		if f := strings.Split(line, "\t"); len(f) == 3 && f[0] == "go" {
			questions = append(questions, f[1])
		}
	}
	return questions
}

func byScoreThenID(hs search.DocumentMatchCollection) {
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].Score != hs[j].Score {
			return hs[i].Score > hs[j].Score
		}
		return hs[i].ID < hs[j].ID
	})
}

// drivenHits gives the hits and scores bleve gives the same query, to the
// bit: on real code (four packages of the Go tree), in one segment and in
// many (small batches), for the questions of the ranking sets with their
// rarest one, two, three and five terms driving, and their rarest one,
// two and three required all together (as compound wholes are).
func TestDrivenHitsMatchBleve(t *testing.T) {
	shared, root := sharedRankingIndex(t)
	many := rankingIndex(t, root, 40)
	questions := comparedQuestions(t)
	ctx := context.Background()
	for name, ix := range map[string]*Index{"one segment": shared, "many segments": many} {
		stats, err := ix.bm25Stats()
		if err != nil {
			t.Fatal(err)
		}
		adv, _ := ix.idx.Advanced()
		r, _ := adv.Reader()
		compared, hits, advanced, whole := 0, 0, 0, 0
		for _, q := range questions {
			p, err := ParseQuery(q)
			if err != nil || len(p.Phrases)+len(p.Paths)+len(p.Langs)+len(p.Syms) > 0 {
				continue
			}
			ts := queryTermsOf(strings.Join(p.Words, " "))
			count := map[string]uint64{}
			for _, term := range ts {
				tfr, err := r.TermFieldReader(ctx, []byte(term), fBody, false, false, false)
				if err != nil {
					t.Fatal(err)
				}
				count[term] = tfr.Count()
				tfr.Close()
			}
			slices.SortStableFunc(ts, func(a, b string) int { return int(count[a]) - int(count[b]) })
			for _, k := range []int{1, 2, 3, 5, -1, -2, -3} {
				every := k < 0
				k = max(k, -k)
				if k > len(ts) {
					continue
				}
				drive := ts[:k]
				want := drivenByBleve(t, ix, p.Words, drive, every, stats)
				got, total, err := ix.drivenHits(ctx, strings.Join(p.Words, " "), drive, every, stats, 1<<20)
				if err != nil {
					t.Fatalf("%s: %q driven by %v: %v", name, q, drive, err)
				}
				if total != want.Total || len(got) != len(want.Hits) {
					t.Fatalf("%s: %q driven by %v: %d hits of %d, bleve %d of %d", name, q, drive, len(got), total, len(want.Hits), want.Total)
				}
				byScoreThenID(got)
				byScoreThenID(want.Hits)
				for i := range got {
					if got[i].ID != want.Hits[i].ID || math.Float64bits(got[i].Score) != math.Float64bits(want.Hits[i].Score) {
						t.Fatalf("%s: %q driven by %v: hit %d is %s %v, bleve's %s %v", name, q, drive, i,
							got[i].ID, got[i].Score, want.Hits[i].ID, want.Hits[i].Score)
					}
				}
				// A smaller pool is the full list's prefix, in the order
				// bleve's collector keeps ties (index order).
				few, _, err := ix.drivenHits(ctx, strings.Join(p.Words, " "), drive, every, stats, 20)
				if err != nil {
					t.Fatal(err)
				}
				all, _, _ := ix.drivenHits(ctx, strings.Join(p.Words, " "), drive, every, stats, 1<<20)
				if len(few) != min(20, len(all)) {
					t.Fatalf("%s: %q driven by %v: %d of 20 best, %d in all", name, q, drive, len(few), len(all))
				}
				for i := range few {
					if few[i].ID != all[i].ID || few[i].Score != all[i].Score {
						t.Fatalf("%s: %q driven by %v: best %d is %s, not %s", name, q, drive, i, few[i].ID, all[i].ID)
					}
				}
				compared++
				hits += len(got)
				for _, term := range ts {
					if float64(count[term]) > advanceRatio*float64(total) {
						advanced++
					} else {
						whole++
					}
				}
			}
		}
		r.Close()
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := ix.drivenHits(cancelled, "read quoted field lines", []string{"quot"}, false, stats, 10); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: a cancelled search returned %v", name, err)
		}
		t.Logf("%s: %d queries, %d hits the same; body terms advanced %d times, read whole %d", name, compared, hits, advanced, whole)
		if compared < 100 || hits < 1000 || advanced == 0 || whole == 0 {
			t.Errorf("%s: compared too little (%d queries, %d hits, %d advanced, %d whole)", name, compared, hits, advanced, whole)
		}
	}
}

// best keeps the k best by score, then index order, on inputs full of
// ties, as sorting every match would.
func TestBestSelects(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.IntN(300)
		score := make([]float64, n)
		levels := 1 + rng.IntN(20)
		for i := range score {
			score[i] = float64(rng.IntN(levels)) / 3
		}
		var matched []int32
		for i := range n {
			if rng.IntN(4) > 0 {
				matched = append(matched, int32(i))
			}
		}
		want := slices.Clone(matched)
		slices.SortFunc(want, func(a, b int32) int {
			if score[a] != score[b] {
				if score[a] > score[b] {
					return -1
				}
				return 1
			}
			return int(a - b)
		})
		k := 1 + rng.IntN(n)
		want = want[:min(k, len(want))]
		var buf []float64
		if got := best(slices.Clone(matched), score, k, &buf); !slices.Equal(got, want) {
			t.Fatalf("k=%d of %d: got %v, want %v", k, len(matched), got, want)
		}
	}
}

// A search answers the same with the driven queries read from the
// postings as through bleve: the same hits, lines and scores, for the
// ranking sets' questions (driven, compound wholes, and the wholes' fall
// back to any of them and to the words alone).
func TestSearchDirectSameAsBleve(t *testing.T) {
	ix, _ := sharedRankingIndex(t)
	defer func(d bool, s float64, r int) { drivenDirect, driveShare, rerankDepth = d, s, r }(drivenDirect, driveShare, rerankDepth)
	driveShare, rerankDepth = 0.2, 20 // the small corpus: let more questions drive
	questions := append([]string{"readLine parseMIMEHeader", "ReadMIMEHeader noSuchIdentifierAnywhere", "noSuchIdentifier otherMissingName quoted field"}, comparedQuestions(t)...)
	ctx := context.Background()
	before := drivenSearches.Load()
	for _, q := range questions {
		drivenDirect = false
		want, err := ix.Search(ctx, q, 20)
		if err != nil {
			t.Fatal(err)
		}
		drivenDirect = true
		got, err := ix.Search(ctx, q, 20)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: read from the postings\n%+v\nthrough bleve\n%+v", q, got, want)
		}
	}
	if n := drivenSearches.Load() - before; n < 15 {
		t.Errorf("only %d of %d questions were read from the postings", n, len(questions))
	} else {
		t.Logf("%d of %d questions read from the postings, the same as through bleve", n, len(questions))
	}
	// Past maxDrivenCells a question goes to bleve (-1: every one, even
	// one whose required terms find nothing).
	defer func(m int) { maxDrivenCells = m }(maxDrivenCells)
	maxDrivenCells = -1
	before = drivenSearches.Load()
	for _, q := range questions[:20] {
		if _, err := ix.Search(ctx, q, 20); err != nil {
			t.Fatal(err)
		}
	}
	if n := drivenSearches.Load() - before; n != 0 {
		t.Errorf("%d searches read from the postings past the cells' bound", n)
	}
}
