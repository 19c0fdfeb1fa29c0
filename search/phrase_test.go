package search

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cairn-dev/cairn/workspace"
)

// phraseMatches runs q alone and returns every match's score by id, with
// the segment-independent BM25 statistics the search uses.
func phraseMatches(t *testing.T, ix *Index, q query.Query) map[string]float64 {
	t.Helper()
	stats, err := ix.bm25Stats()
	if err != nil {
		t.Fatal(err)
	}
	req := bleve.NewSearchRequestOptions(q, 100000, 0, false)
	req.PreSearchData = map[string]interface{}{search.BM25PreSearchDataKey: stats}
	res, err := ix.idx.SearchInContext(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, h := range res.Hits {
		out[h.ID] = h.Score
	}
	return out
}

// TestPhrasesAsPositional checks phrase.go against bleve's positional
// phrase search on an index with term vectors (the layout before): the same
// chunks match, with the same scores. On the fixture always; on a part of
// the Go tree when CAIRN_BENCH_CORPUS is set.
func TestPhrasesAsPositional(t *testing.T) {
	phrases := []string{"settings frame", "frame settings", "parse http request", "http request",
		"parse settings frame", "ServeHTTP dispatches", "the request", "request to the handler",
		"frames", "parseHTTPRequest", "return nil", "w, r", "ServeMux ServeHTTP", "nothing like this"}
	roots := map[string]string{}
	ws, _ := fixture(t)
	roots["fixture"] = ws.Root()
	if dir := os.Getenv("CAIRN_BENCH_CORPUS"); dir != "" {
		roots["go/net/http"] = filepath.Join(dir, "net", "http")
		phrases = append(phrases, "write header", "WriteHeader was called", "if err != nil", "Content-Type",
			"read the body", "close the connection", "http.Handler", "status code", "header map",
			"for _, v := range", "func (c *conn)", "TLS handshake", "request body", "chunked encoding")
	}
	for name, root := range roots {
		t.Run(name, func(t *testing.T) {
			w, err := workspace.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			positionsForTests = true
			ref := openIndex(t, w, t.TempDir(), nil)
			_, err = ref.Reconcile(context.Background())
			positionsForTests = false
			if err != nil {
				t.Fatal(err)
			}
			ix := openIndex(t, w, t.TempDir(), nil)
			if _, err := ix.Reconcile(context.Background()); err != nil {
				t.Fatal(err)
			}
			matched := 0
			for _, ph := range phrases {
				want := bleve.NewMatchPhraseQuery(ph)
				want.SetField(fBody)
				want.Analyzer = analyzerIndex
				wantM := phraseMatches(t, ref, want)
				pq := ix.newPhraseQuery(ph, true)
				if pq == nil {
					t.Fatalf("%q: no phrase query", ph)
				}
				got := phraseMatches(t, ix, pq)
				if len(got) != len(wantM) {
					t.Errorf("%q: %d matches, positional search %d", ph, len(got), len(wantM))
				}
				for id, s := range wantM {
					g, ok := got[id]
					if !ok {
						t.Errorf("%q: %q missing", ph, id)
					} else if math.Abs(g-s) > 1e-9*math.Max(1, s) {
						t.Errorf("%q: %q scores %v, positional search %v", ph, id, g, s)
					}
				}
				matched += len(wantM)
			}
			if matched == 0 {
				t.Fatal("no phrase matched anything: the test checks nothing")
			}
			// The search's phrase path (positions checked after, in score
			// order) gives what checking inside the search gives.
			for _, ph := range phrases {
				for _, q := range []string{`"` + ph + `"`, `"` + ph + `" request`, `lang:go "` + ph + `"`} {
					fast, err := ix.Search(context.Background(), q, 50)
					if err != nil {
						t.Fatal(err)
					}
					phraseScan = 0
					slow, err := ix.Search(context.Background(), q, 50)
					phraseScan = 4
					if err != nil {
						t.Fatal(err)
					}
					if len(fast.Hits) != len(slow.Hits) {
						t.Errorf("%s: %d hits, %d checking inside the search", q, len(fast.Hits), len(slow.Hits))
						continue
					}
					for i := range fast.Hits {
						if f, s := fast.Hits[i], slow.Hits[i]; f.Path != s.Path || f.StartLine != s.StartLine || f.Score != s.Score {
							t.Errorf("%s: hit %d %v (%v), checking inside the search %v (%v)", q, i, f, f.Score, s, s.Score)
						}
					}
				}
			}
			t.Logf("%d phrases, %d matches", len(phrases), matched)
		})
	}
}

// TestHasPhraseAgainstTable checks the shift-and matcher against the
// position-table check on every phrase of one to five consecutive words of
// some code, and on the same words reversed.
func TestHasPhraseAgainstTable(t *testing.T) {
	text := []byte(`// parseHTTPRequest reads frames frames and parses an incoming request.
func parseHTTPRequest(b []byte) (*Request, error) { return parse_request_line(firstLine(b)) }
x := HTTPServer2Go; y = base64Decode(__init__) // ünïcode wörds`)
	words := strings.Fields(strings.NewReplacer("(", " ", ")", " ", "*", " ", ";", " ").Replace(string(text)))
	checked, found := 0, 0
	for i := range words {
		for n := 1; n <= 5 && i+n <= len(words); n++ {
			for _, ph := range []string{strings.Join(words[i:i+n], " "), strings.Join(reversed(words[i:i+n]), " ")} {
				ts := tokenize([]byte(ph), nil)
				slots := phraseSlots(ts)
				if len(slots) == 0 {
					continue
				}
				got, want := hasPhrase(text, slots), hasPhraseLong(tokenize(text, nil), slots)
				if got != want {
					t.Errorf("%q: shift-and %v, table %v", ph, got, want)
				}
				checked++
				if got {
					found++
				}
			}
		}
	}
	if found == 0 || found == checked {
		t.Fatalf("%d of %d phrases found: the test checks nothing", found, checked)
	}
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}
