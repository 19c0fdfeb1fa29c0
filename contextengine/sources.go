package contextengine

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/repomap"
	"github.com/cairn-dev/cairn/workspace"
)

// Caps: the share of the available budget each source may take at most.
// The required items (question, selection) have no cap. Within its cap a
// source's items are taken by score; everything is then allocated by
// priority (see the prio constants), so when the budget runs short the
// lowest-priority sources are the first to lose items. That is the
// degradation order, from first dropped to last:
//
//	open documents → search hits (lowest score first) → other files'
//	diagnostics → the repo map (re-rendered smaller) → recent edits →
//	definitions of used symbols → this file's diagnostics → surrounding code
//	(trimmed to fewer lines) → the enclosing symbol → project instructions →
//	diagnostics in the selection
//
// Conversation history and tool results are shortened separately (older
// tool results first; FitHistory). The question and the selection are never
// dropped, only cut as a last resort.
var sourceCaps = map[Source]float64{
	SourceWindow:      0.15,
	SourceEnclosing:   0.20,
	SourceDefinitions: 0.25,
	SourceDiagnostics: 0.10,
	SourceRecentEdits: 0.10,
	SourceRepoMap:     0.15,
	SourceSearch:      0.20,
	SourceOpenDocs:    0.10,
	SourceProject:     0.10,
}

// Largest repo map rendered into the prompt, whatever the budget.
const maxRepoMapTokens = 4096

// identRE finds identifiers in code and questions.
var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]{2,}`)

// stopIdents are too common to look up.
var stopIdents = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for with this that from what why how does into when then else return func
		var const type struct interface import package def class self this new nil null true false none let int string bool
		err error len make append print println range break continue case switch default public private static void
		async await yield lambda pass raise try except finally while elif not are can you should would could will
		have has its use used using file code line lines selected selection explain fix make change add remove`) {
		stopIdents[w] = true
	}
}

// identifiers returns the distinct identifiers of s, in first-seen order.
func identifiers(s string, max int) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range identRE.FindAllString(s, -1) {
		if stopIdents[strings.ToLower(m)] || seen[m] {
			continue
		}
		seen[m] = true
		out = append(out, m)
		if len(out) >= max {
			break
		}
	}
	return out
}

// span is a file range already in the prompt, to drop duplicates.
type span struct {
	rel        string
	start, end int
}

type spans []span

func (ss spans) covers(rel string, start, end int) bool {
	for _, s := range ss {
		if s.rel == rel && s.start <= start && end <= s.end {
			return true
		}
	}
	return false
}

// indexSources adds the candidates that need the indexes: the enclosing
// symbol, definitions of the symbols the selection uses, search hits for
// the selection's identifiers and the question, and the repo map. It never
// waits for indexing: what is indexed now is used, and the report says so.
func indexSources(req Request, lines []string, sel *Selection, seen spans, report *Report, add func(*Item)) {
	m, ix := req.Map, req.Search
	if m == nil && ix == nil {
		report.Notes = append(report.Notes, "no code index in this session: no repo map, definitions or search hits")
		return
	}
	if req.IndexPending {
		report.Notes = append(report.Notes, "the indexes are still being built: the repo map, definitions and search hits use what is indexed so far")
	}
	selText := ""
	if sel != nil && sel.StartLine <= len(lines) {
		selText = strings.Join(lines[sel.StartLine-1:min(sel.EndLine, len(lines))], "")
	}
	idents := identifiers(selText, 40)
	questionWords := identifiers(req.Question, 12)

	if m != nil && req.File != "" && sel != nil {
		if sym, ok := m.EnclosingSymbol(req.File, sel.StartLine); ok && sym.EndLine-sym.Line < 400 &&
			!(sym.Line >= sel.StartLine && sym.EndLine <= sel.EndLine) {
			add(&Item{Source: SourceEnclosing, Location: fmt.Sprintf("%s:%d-%d %s", req.File, sym.Line, sym.EndLine, sym.Name),
				Text:     fmt.Sprintf("## Enclosing %s %s: %s lines %d-%d\n%s", sym.Kind, sym.Name, req.File, sym.Line, sym.EndLine, numbered(lines, sym.Line, sym.EndLine)),
				Priority: prioEnclosing, Score: 1})
		}
	}

	if m != nil && len(idents) > 0 {
		defs := m.DefinitionsOf(idents)
		// Rank: names used more often in the selection first, then shorter snippets.
		order := map[string]int{}
		for i, id := range idents {
			order[id] = i
		}
		sort.SliceStable(defs, func(i, j int) bool { return order[defs[i].Name] < order[defs[j].Name] })
		perName := map[string]int{}
		for _, d := range defs {
			if d.Local || perName[d.Name] >= 2 { // a name defined in many files is too ambiguous to show them all
				continue
			}
			if d.Path == req.File && sel != nil && d.Line <= sel.EndLine && d.EndLine >= sel.StartLine {
				continue // the selection itself
			}
			end := min(d.EndLine, d.Line+79)
			if seen.covers(d.Path, d.Line, end) {
				add(&Item{Source: SourceDefinitions, Location: fmt.Sprintf("%s:%d %s", d.Path, d.Line, d.Name), Text: "",
					Priority: prioDefinitions, Reason: "duplicate: already in the prompt; "})
				continue
			}
			text, ok := snippet(req.WS, d.Path, d.Line, end)
			if !ok {
				continue
			}
			perName[d.Name]++
			cut := ""
			if end < d.EndLine {
				cut = fmt.Sprintf("[... %d more lines ...]\n", d.EndLine-end)
			}
			add(&Item{Source: SourceDefinitions, Location: fmt.Sprintf("%s:%d-%d %s", d.Path, d.Line, end, d.Name),
				Text:     fmt.Sprintf("## Definition of %s (%s): %s lines %d-%d\n%s%s", d.Name, d.Kind, d.Path, d.Line, end, text, cut),
				Priority: prioDefinitions, Score: 1 / float64(1+order[d.Name])})
			seen = append(seen, span{d.Path, d.Line, end})
		}
	}

	if ix != nil {
		queries := searchQueries(req.Question, questionWords, idents)
		hitSeen := map[string]bool{}
		for qi, q := range queries {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			res, err := ix.Search(ctx, q, 6)
			cancel()
			if err != nil {
				report.Notes = append(report.Notes, fmt.Sprintf("search %q failed: %v", q, err))
				continue
			}
			if res.Partial && qi == 0 {
				report.Notes = append(report.Notes, "the search index is still being built: hits may be missing")
			}
			for rank, h := range res.Hits {
				key := fmt.Sprintf("%s:%d", h.Path, h.StartLine)
				if hitSeen[key] {
					continue
				}
				hitSeen[key] = true
				start, end := max(h.StartLine, h.Line-10), min(h.EndLine, h.Line+20)
				if h.EndLine == 0 {
					start, end = max(1, h.Line-5), h.Line+10
				}
				loc := fmt.Sprintf("%s:%d-%d", h.Path, start, end)
				if seen.covers(h.Path, start, end) {
					add(&Item{Source: SourceSearch, Location: loc, Priority: prioSearch, Reason: "duplicate: already in the prompt; "})
					continue
				}
				text, ok := snippet(req.WS, h.Path, start, end)
				if !ok {
					continue
				}
				sym := ""
				if h.Symbol != "" {
					sym = " in " + h.Symbol
				}
				add(&Item{Source: SourceSearch, Location: loc + " (" + q + ")",
					Text:     fmt.Sprintf("## Search hit for %q%s: %s lines %d-%d\n%s", q, sym, h.Path, start, end, text),
					Priority: prioSearch, Score: 1 / float64(1+rank+qi)})
				seen = append(seen, span{h.Path, start, end})
			}
		}
	}

	if m != nil {
		focus := repomap.Focus{Identifiers: idents, Mentioned: questionWords}
		if req.File != "" {
			focus.Files = []string{req.File}
		}
		related := map[string]bool{}
		for _, d := range req.Diagnostics {
			related[d.Rel] = true
		}
		for _, e := range req.RecentEdits {
			if req.WS != nil {
				related[req.WS.Rel(e.Path)] = true
			}
		}
		for r := range related {
			focus.Related = append(focus.Related, r)
		}
		sort.Strings(focus.Related)
		add(&Item{Source: SourceRepoMap, Location: "repo map", Priority: prioRepoMap, Score: 1,
			render: func(tokens int) string {
				tokens = min(tokens, maxRepoMapTokens)
				if tokens < 64 {
					return ""
				}
				out, _ := m.Render(focus, tokens-16)
				if strings.TrimSpace(out) == "" {
					return ""
				}
				return "## Repository map (ranked for this question)\n" + out
			}})
	}
}

// searchQueries: the question as a whole, then the selection's rarest-looking
// identifiers (long and mixed-case first).
func searchQueries(question string, qwords, idents []string) []string {
	var out []string
	if len(qwords) > 0 {
		out = append(out, strings.Join(qwords, " "))
	}
	sorted := append([]string(nil), idents...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	for _, id := range sorted {
		if len(out) >= 3 {
			break
		}
		out = append(out, id)
	}
	return out
}

// snippet returns numbered lines [from, to] of a workspace file.
func snippet(ws *workspace.Workspace, rel string, from, to int) (string, bool) {
	if ws == nil {
		return "", false
	}
	text, ok, err := ws.ReadFile(ws.Abs(rel))
	if err != nil || !ok || workspace.IsBinary([]byte(text)) {
		return "", false
	}
	lines := strings.SplitAfter(text, "\n")
	if from > len(lines) {
		return "", false
	}
	return numbered(lines, from, min(to, len(lines))), true
}

// openDocSources adds the other documents open in the editor.
func openDocSources(req Request, seen spans, add func(*Item)) {
	if req.WS == nil {
		return
	}
	docs := req.WS.Docs.All()
	sort.Slice(docs, func(i, j int) bool { return docs[i].Path < docs[j].Path })
	for _, d := range docs {
		rel := req.WS.Rel(d.Path)
		if rel == req.File || workspace.IsBinary([]byte(d.Text)) {
			continue
		}
		lines := strings.SplitAfter(d.Text, "\n")
		end := min(len(lines), 60)
		if seen.covers(rel, 1, end) {
			continue
		}
		add(&Item{Source: SourceOpenDocs, Location: fmt.Sprintf("%s:1-%d", rel, end),
			Text:     fmt.Sprintf("## Open in the editor: %s lines 1-%d\n%s", rel, end, numbered(lines, 1, end)),
			Priority: prioOpenDocs, Score: 0.5})
	}
}
