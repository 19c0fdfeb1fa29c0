package codeindex

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/repomap"
)

// Index is the code index API: everything tools, the context engine, the
// agent and the commands ask of a workspace's code. The embedded engines
// (Local: the tree-sitter repo map and the bleve search index, kept fresh
// from one change stream) implement it; a remote backend (a Zoekt
// webserver, an OpenSearch cluster; see docs/scale.md) can too, since
// every answer is plain data.
type Index interface {
	// Search runs a parsed code search query (ParseQuery) and returns up
	// to limit hits (DefaultLimit when limit <= 0). It returns ErrNoSearch
	// when this session has no search index.
	Search(ctx context.Context, q Query, limit int) (*SearchResult, error)
	// RenderMap renders the repository map ranked toward focus and fitted
	// to tokens.
	RenderMap(focus Focus, tokens int) (string, RenderStats)
	// Definitions returns the definitions of the given names ("Name" or
	// "Scope.Name"), sorted by path and line, in a slice the caller owns.
	Definitions(names []string) []Symbol
	// EnclosingSymbol returns the innermost definition of file rel whose
	// line range holds the 1-based line.
	EnclosingSymbol(rel string, line int) (Symbol, bool)
	// FileSymbols returns the definitions of one file, in source order.
	FileSymbols(rel string) ([]Symbol, bool)
	// Stats describes what is indexed now.
	Stats() Stats
	// Ready is closed once the first full build of every engine ended;
	// until then answers come from what is indexed so far.
	Ready() <-chan struct{}
}

// The repo map's data types are the map engine's own (aliases): a remote
// backend serves searches only (WithSearch), never the map.
type (
	// Focus says what a map is ranked toward.
	Focus = repomap.Focus
	// RenderStats describes one map rendering.
	RenderStats = repomap.RenderStats
	// Symbol is a definition with its file and line range.
	Symbol = repomap.Symbol
)

// SearchResult is the answer to one search query. Its JSON is what
// `cairn search --json` prints.
type SearchResult struct {
	Hits     []Hit    `json:"hits"`
	Total    uint64   `json:"total"`              // matching chunks (or, remote, matches)
	Partial  bool     `json:"partial,omitempty"`  // the index was still being built
	Warnings []string `json:"warnings,omitempty"` // e.g. an unbalanced quote read literally
}

// Hit is one search result: a chunk of a file (its line range) and the
// line in it that best matches the query. A backend that matches lines,
// not chunks, gives the line as the range.
type Hit struct {
	Path      string  `json:"path"` // workspace-relative, slash-separated
	Line      int     `json:"line"` // 1-based: the best matching line
	Text      string  `json:"text"` // that line, trimmed
	StartLine int     `json:"startLine"`
	EndLine   int     `json:"endLine"`
	Symbol    string  `json:"symbol,omitempty"` // the declaration the chunk is, if any
	Kind      string  `json:"kind,omitempty"`   // its kind (func, method, class...)
	Score     float64 `json:"score"`            // the backend's own: compares hits of one result only
	// Copies are other files with this file's exact content, whose same
	// chunk is folded into this hit (the embedded index; a remote backend
	// lists each file).
	Copies []string `json:"copies,omitempty"`
}

// String formats a hit as `path:line: text`.
func (h Hit) String() string { return fmt.Sprintf("%s:%d: %s", h.Path, h.Line, h.Text) }

// BestPerFile keeps the first (best) hit of each file, up to n files: a
// result grouped by file. The embedded index returns at most 3 hits per
// file, so a search for 3n hits holds n files when there are.
func BestPerFile(hits []Hit, n int) []Hit {
	seen := map[string]bool{}
	var out []Hit
	for _, h := range hits {
		if len(out) == n {
			break
		}
		if !seen[h.Path] {
			seen[h.Path] = true
			out = append(out, h)
		}
	}
	return out
}

// Stats describe an index's content.
type Stats struct {
	Ready       bool   // the first full build ended
	Indexing    bool   // a build or rescan is running
	MapFiles    int    // files with definitions in the map
	Definitions int    // definitions in the map
	Searchable  bool   // the session has a search index
	SearchFiles int    // files in the search index
	SearchDocs  uint64 // chunks in the search index
	// SearchBackend names what serves searches: "local", or a remote
	// backend (the search.zoekt setting); "" for an index that cannot tell.
	SearchBackend string
}

// ErrNoSearch says the session has no search index (another Cairn server
// holds this workspace's, or it could not be opened).
var ErrNoSearch = errors.New("the search index is not available in this session")

// LanguageOf names the language of a workspace-relative path by its name,
// "" when unknown; the same table decides which grammar parses a file and
// what a search lang: filter matches.
func LanguageOf(rel string) string { return repomap.LanguageOf(rel) }

// The names of the engines a context report lists as not ready.
const (
	SourceMap    = "repo map"
	SourceSearch = "search"
)

// Warming is what an index that builds in the background (Local) offers a
// question that waits for it.
type Warming interface {
	// NotReady names the engines whose first full build has not ended
	// (SourceMap, SourceSearch).
	NotReady() []string
	// Prioritize indexes the given workspace-relative files now, ahead of
	// the rest of the build.
	Prioritize(ctx context.Context, rels []string)
	// Building returns the latest progress of each engine still building.
	Building() []Progress
}

// NotReady names the engines of ix whose first full build has not ended;
// an index that cannot tell engines apart names both until it is ready.
func NotReady(ix Index) []string {
	if w, ok := ix.(Warming); ok {
		return w.NotReady()
	}
	if IsReady(ix) {
		return nil
	}
	return []string{SourceMap, SourceSearch}
}

// IsReady reports whether ix's first full build has ended.
func IsReady(ix Index) bool {
	select {
	case <-ix.Ready():
		return true
	default:
		return false
	}
}

// SearchText serves the search_code tool: hits as `path:line: text`, with
// the enclosing symbol, and a note when the index is still being built.
func SearchText(ctx context.Context, ix Index, query string, limit int) (string, error) {
	q, err := ParseQuery(query)
	if err != nil {
		return "", err
	}
	res, err := ix.Search(ctx, q, limit)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "note: %s\n", w)
	}
	if res.Partial {
		b.WriteString("note: the index is still being built; results may be incomplete\n")
	}
	if len(res.Hits) == 0 {
		b.WriteString("no matches\n")
	}
	for _, h := range res.Hits {
		sym := ""
		if h.Symbol != "" {
			sym = fmt.Sprintf("  [%s %s, lines %d-%d]", h.Kind, h.Symbol, h.StartLine, h.EndLine)
		}
		fmt.Fprintf(&b, "%s%s%s\n", h.String(), sym, h.CopiesNote())
	}
	return b.String(), nil
}

// CopiesNote names the identical copies of the hit's file, the first few
// by path, after two spaces ("" for none): the search tool's text and the
// context's search hits say it the same way.
func (h Hit) CopiesNote() string {
	const shown = 3
	switch {
	case len(h.Copies) == 0:
		return ""
	case len(h.Copies) <= shown:
		return "  (identical in " + strings.Join(h.Copies, ", ") + ")"
	}
	return fmt.Sprintf("  (identical in %s and %d more)", strings.Join(h.Copies[:shown], ", "), len(h.Copies)-shown)
}

// MapText serves the repo_map tool: the map ranked toward the focus files.
func MapText(ix Index, focus []string, tokens int) string {
	if tokens <= 0 {
		tokens = 2048
	}
	out, stats := ix.RenderMap(Focus{Files: focus}, tokens)
	if stats.Defs == 0 {
		return "the repo map is empty (no supported source files found yet)"
	}
	if !IsReady(ix) {
		out = "note: the repo map is still being built; this shows what is parsed so far\n" + out
	}
	return out
}
