package codeindex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/search"
)

// ErrUnavailable wraps a remote backend's failure to answer (unreachable,
// timed out, a server error, a reply that is not its API's), as opposed
// to a refusal of the query: a caller may answer from elsewhere.
var ErrUnavailable = errors.New("the search backend is unavailable")

// zoektClient is the client of a Zoekt without its own: a backend that
// never answers must not hold a question for longer than this.
var zoektClient = &http.Client{Timeout: 20 * time.Second}

// Searcher is the search half of Index: what a remote search backend
// implements.
type Searcher interface {
	Search(ctx context.Context, q Query, limit int) (*SearchResult, error)
}

// WithSearch returns an Index whose searches go to s and everything else
// (the repo map, definitions, readiness) to ix: a monorepo too large for
// one machine keeps its code search in a shared cluster (see Zoekt and
// docs/scale.md) and the map of the part it works on locally.
func WithSearch(ix Index, s Searcher) Index { return splitIndex{ix, s} }

type splitIndex struct {
	Index
	s Searcher
}

func (x splitIndex) Search(ctx context.Context, q Query, limit int) (*SearchResult, error) {
	return x.s.Search(ctx, q, limit)
}

// NotReady, Prioritize and Building are the local index's (Warming).
func (x splitIndex) NotReady() []string {
	var out []string
	for _, s := range NotReady(x.Index) {
		if s != SourceSearch { // searches go to the remote backend
			out = append(out, s)
		}
	}
	return out
}

func (x splitIndex) Prioritize(ctx context.Context, rels []string) {
	if w, ok := x.Index.(Warming); ok {
		w.Prioritize(ctx, rels)
	}
}

func (x splitIndex) Building() []Progress {
	if w, ok := x.Index.(Warming); ok {
		return w.Building()
	}
	return nil
}

func (x splitIndex) Stats() Stats {
	st := x.Index.Stats()
	st.Searchable, st.SearchBackend = true, "remote"
	return st
}

// Zoekt searches a Zoekt webserver (zoekt-webserver -rpc) through its JSON
// API, POST /api/search. A query is translated into Zoekt's syntax
// (zoektQuery): words and phrases become literal substrings (Zoekt's
// case:auto), path:, lang: and sym: become file:, lang: and sym:. Zoekt
// matches lines, not chunks: a hit's range is its line, and hits carry no
// enclosing declaration.
type Zoekt struct {
	URL    string       // e.g. http://zoekt.internal:6070
	Repo   string       // when set, only this repository (repo: filter)
	Client *http.Client // nil: http.DefaultClient
}

// Zoekt's wire format (the subset read here).
type zoektRequest struct {
	Q    string
	Opts zoektOptions
}

type zoektOptions struct {
	MaxDocDisplayCount   int
	MaxMatchDisplayCount int
	ShardMaxMatchCount   int
	TotalMaxMatchCount   int
}

type zoektReply struct {
	Result *struct {
		Files []struct {
			FileName    string
			Repository  string
			Language    string
			Score       float64
			LineMatches []struct {
				Line       []byte
				LineNumber int
				FileName   bool
			}
		}
		MatchCount int
	}
	Error string
}

// Search runs query on the Zoekt webserver.
func (z Zoekt) Search(ctx context.Context, query Query, limit int) (*SearchResult, error) {
	if limit <= 0 {
		limit = 20
	}
	q, err := zoektQuery(query.Root)
	if err != nil {
		return nil, err
	}
	if z.Repo != "" {
		q = fmt.Sprintf("repo:^%s$ (%s)", regexp.QuoteMeta(z.Repo), q)
	}
	body, err := json.Marshal(zoektRequest{Q: q, Opts: zoektOptions{MaxDocDisplayCount: limit, MaxMatchDisplayCount: limit,
		ShardMaxMatchCount: 10 * limit, TotalMaxMatchCount: 100 * limit}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(z.URL, "/")+"/api/search", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("zoekt search: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := z.Client
	if client == nil {
		client = zoektClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("zoekt search at %s: %w", z.URL, err)
		}
		return nil, fmt.Errorf("zoekt search at %s: %w: %w", z.URL, ErrUnavailable, err)
	}
	defer resp.Body.Close()
	var reply zoektReply
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&reply); err != nil {
		return nil, fmt.Errorf("zoekt search at %s: reading the reply (HTTP %d): %w: %w", z.URL, resp.StatusCode, ErrUnavailable, err)
	}
	if resp.StatusCode >= 500 {
		return nil, fmt.Errorf("zoekt search at %s: HTTP %d: %w: %s", z.URL, resp.StatusCode, ErrUnavailable, reply.Error)
	}
	if resp.StatusCode != http.StatusOK || reply.Error != "" {
		return nil, fmt.Errorf("zoekt search at %s: HTTP %d: %s", z.URL, resp.StatusCode, reply.Error)
	}
	res := &SearchResult{Hits: []Hit{}, Warnings: query.Warnings}
	if reply.Result == nil {
		return res, nil
	}
	res.Total = uint64(reply.Result.MatchCount)
	for _, f := range reply.Result.Files {
		for _, lm := range f.LineMatches {
			if lm.FileName || len(res.Hits) >= limit {
				continue
			}
			res.Hits = append(res.Hits, Hit{Path: f.FileName, Line: lm.LineNumber, Text: strings.TrimSpace(string(lm.Line)),
				StartLine: lm.LineNumber, EndLine: lm.LineNumber, Score: f.Score})
		}
	}
	return res, nil
}

// zoektQuery writes q in Zoekt's query syntax, where every value is a
// regular expression: literal text is quoted as one.
func zoektQuery(q Q) (string, error) {
	switch q := q.(type) {
	case And:
		parts := make([]string, 0, len(q.Children))
		for _, c := range q.Children {
			s, err := zoektQuery(c)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		if len(parts) == 0 {
			return "", fmt.Errorf("%w: empty query", ErrBadQuery)
		}
		return strings.Join(parts, " "), nil
	case Word:
		return zoektString(regexp.QuoteMeta(q.Text)), nil
	case Phrase:
		return zoektString(regexp.QuoteMeta(q.Text)), nil
	case File:
		if !strings.ContainsAny(q.Pattern, "*?") {
			return "file:" + zoektString(regexp.QuoteMeta(strings.TrimPrefix(q.Pattern, "./"))), nil
		}
		// A glob matches the whole path, or a tail of it starting at a
		// directory boundary, as the embedded index reads it.
		re := search.WildcardRegexp(strings.TrimPrefix(q.Pattern, "./"))
		if strings.HasPrefix(q.Pattern, "*") {
			return "file:" + zoektString("^"+re+"$"), nil
		}
		return "file:" + zoektString("(^|/)"+re+"$"), nil
	case Lang:
		return "lang:" + zoektString(q.Name), nil
	case Sym:
		return "sym:" + zoektString("(?i)^"+search.WildcardRegexp(q.Name)+"$"), nil
	}
	return "", fmt.Errorf("%w: %s is not supported by the Zoekt backend", ErrBadQuery, q)
}

// zoektString writes s as one Zoekt query value: bare when it is a plain
// identifier, else in quotes, where Zoekt reads a backslash as escaping the
// next character.
func zoektString(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
