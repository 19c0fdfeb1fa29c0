package contextengine

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/tokencount"
	"github.com/cairn-dev/cairn/workspace"
)

// SystemPrompt is Cairn's standing instruction to the model.
const SystemPrompt = `You are Cairn, a coding assistant running inside the user's editor.
You answer questions about the user's code and propose changes.
- Use the tools to look at the code before you answer; cite files and line numbers.
- To change code, call edit_file. Your edits are proposals: the user reviews each one in a diff view and accepts or rejects it. Nothing you propose is on disk until the user accepts.
- Keep edits minimal and focused on what was asked. Do not reformat unrelated code.
- When you are done, answer in a few sentences: what you found or what you changed and why.`

// Selection is the user's selection, 1-based inclusive lines.
type Selection struct {
	StartLine, EndLine int
}

// Request is what a build starts from.
type Request struct {
	Question string
	// File is the workspace-relative path the user asked from ("" for none).
	File      string
	FileText  string
	Selection *Selection
	// Diagnostics forwarded by the editor, all files.
	Diagnostics []workspace.Diagnostic
	// RecentEdits are the user's own recent edits, newest first.
	RecentEdits []workspace.RecentEdit
	WS          *workspace.Workspace

	ContextWindow int
	MaxOutput     int
	ToolSchemas   int // tokens of the tool schemas sent with the request

	// Redactor masks secrets in every item before it is counted or sent;
	// nil uses redact.Default().
	Redactor *redact.Redactor

	// Index is the code index (nil: none in this session); IndexPending
	// says it is still being built (the report notes it: a build never
	// waits for indexing; the agent waits, bounded, before it builds).
	// NotReady names the index's sources whose first build had not ended
	// when the question went ahead (codeindex.SourceMap, SourceSearch);
	// the report lists them.
	Index        codeindex.Index
	IndexPending bool
	NotReady     []string

	// History holds the earlier turns of the thread the question continues,
	// oldest first (history.go).
	History []Turn

	files *wsFiles // the workspace files this build read (Build sets it)
}

// Built is the result of a build: the system prompt and the first user
// message, plus the report.
type Built struct {
	System string
	User   string
	Report *Report
}

// Priorities: lower is allocated first (and dropped last).
const (
	prioQuestion = iota
	prioSelection
	prioDiagnosticsInRange
	prioProject
	prioEnclosing
	prioWindow
	prioDiagnosticsFile
	prioDefinitions
	prioRecentEdits
	prioRepoMap
	prioDiagnosticsOther
	prioSearch
	prioOpenDocs
)

// Build assembles the first user message for a question.
func Build(req Request) (*Built, error) {
	if strings.TrimSpace(req.Question) == "" {
		return nil, fmt.Errorf("building context: the question is empty")
	}
	if req.FileText != "" && workspace.IsBinary([]byte(req.FileText)) {
		return nil, fmt.Errorf("building context: %s is a binary file; ask about a text file", req.File)
	}
	if req.Selection != nil {
		s := *req.Selection // the caller's selection is not ours to clamp
		req.Selection = &s
	}
	req.files = newWSFiles(req.WS)
	report := &Report{Question: req.Question, NotReady: append([]string(nil), req.NotReady...)}
	sysTokens := tokencount.Count(SystemPrompt)
	report.Budget = NewBudget(req.ContextWindow, req.MaxOutput, req.ToolSchemas)
	avail := report.Budget.Available - sysTokens
	report.Items = append(report.Items, &Item{Source: SourceInstructions, Location: "system prompt", Text: SystemPrompt,
		Tokens: sysTokens, Required: true, Included: true, Reason: "always sent"})

	var items []*Item
	add := func(it *Item) { items = append(items, it) }
	add(&Item{Source: SourceQuestion, Location: "user", Text: "## Question\n" + req.Question + "\n", Priority: prioQuestion, Required: true, Score: 1})

	if req.File != "" && req.FileText == "" && req.WS != nil {
		abs := req.WS.Abs(req.File)
		if _, open := req.WS.Docs.Get(abs); !open {
			if _, err := os.Stat(abs); err != nil {
				report.Notes = append(report.Notes, fmt.Sprintf("%s is not open in the editor and not on disk: no selection or file context; answering from the question and the indexes only", req.File))
			}
		}
	}
	if need := tokencount.Count(req.Question) + 8; avail < need {
		report.Notes = append(report.Notes, fmt.Sprintf("the budget (%d tokens for messages after the system prompt) is smaller than the question (%d tokens): the question is cut to fit; raise the context window or lower the tokens reserved for the answer", avail, need))
	}

	var seen spans
	var lines []string
	if req.FileText != "" {
		lines = strings.SplitAfter(req.FileText, "\n")
		if n := len(lines); n > 0 && lines[n-1] == "" {
			lines = lines[:n-1]
		}
	}
	sel := req.Selection
	if req.File != "" && sel != nil {
		if sel.StartLine < 1 {
			sel.StartLine = 1
		}
		if sel.EndLine < sel.StartLine {
			sel.EndLine = sel.StartLine
		}
		if sel.StartLine > len(lines) {
			report.Notes = append(report.Notes, fmt.Sprintf("the selection starts at line %d, past the end of %s (%d lines); no selection text included", sel.StartLine, req.File, len(lines)))
		} else {
			end := min(sel.EndLine, len(lines))
			add(&Item{Source: SourceSelection, Location: fmt.Sprintf("%s:%d-%d", req.File, sel.StartLine, end),
				Text:     fmt.Sprintf("## Selection: %s lines %d-%d\n%s", req.File, sel.StartLine, end, numbered(lines, sel.StartLine, end)),
				Priority: prioSelection, Required: true, Score: 1})
			// Surrounding window: up to 40 lines either side, trimmed to fit.
			if sel.StartLine > 1 || end < len(lines) {
				file, first, last := req.File, sel.StartLine, end
				it := &Item{Source: SourceWindow, Location: fmt.Sprintf("%s around %d-%d", file, first, last), Priority: prioWindow, Score: 0.8}
				it.render = func(tokens int) string {
					for radius := 40; radius >= 5; radius = radius * 2 / 3 {
						ws, we := max(1, first-radius), min(len(lines), last+radius)
						text := fmt.Sprintf("## Around the selection: %s lines %d-%d\n%s", file, ws, we, numbered(lines, ws, we))
						if tokencount.Count(text) <= tokens {
							it.Location = fmt.Sprintf("%s:%d-%d", file, ws, we)
							return text
						}
					}
					return ""
				}
				add(it)
			}
			seen = append(seen, span{req.File, sel.StartLine, end})
		}
	} else if req.File != "" && len(lines) > 0 {
		end := min(len(lines), 200)
		add(&Item{Source: SourceWindow, Location: fmt.Sprintf("%s:1-%d", req.File, end),
			Text:     fmt.Sprintf("## Current file: %s lines 1-%d\n%s", req.File, end, numbered(lines, 1, end)),
			Priority: prioWindow, Score: 0.7})
	}

	for _, d := range req.Diagnostics {
		prio, score := prioDiagnosticsOther, 0.3
		if d.Path == req.File {
			prio, score = prioDiagnosticsFile, 0.6
			if sel != nil && d.Line() <= sel.EndLine && d.EndLine() >= sel.StartLine {
				prio, score = prioDiagnosticsInRange, 1
			}
		}
		src := ""
		if d.Source != "" {
			src = " (" + d.Source + ")"
		}
		add(&Item{Source: SourceDiagnostics, Location: fmt.Sprintf("%s:%d", d.Path, d.Line()),
			Text:     fmt.Sprintf("- %s:%d: %s%s: %s\n", d.Path, d.Line(), d.Severity, src, d.Message),
			Priority: prio, Score: score})
	}

	for i, e := range req.RecentEdits {
		rel := e.Path
		if req.WS != nil {
			rel = req.WS.Rel(e.Path)
		}
		diff := workspace.UnifiedDiff(rel, e.Before, e.After)
		if diff == "" {
			continue
		}
		add(&Item{Source: SourceRecentEdits, Location: rel, Text: "```diff\n" + diff + "```\n",
			Priority: prioRecentEdits, Score: 1 / float64(i+1)})
	}

	if req.WS != nil {
		for _, name := range []string{"AGENTS.md", ".cairn/instructions.md"} {
			b, err := os.ReadFile(filepath.Join(req.WS.Root(), name))
			if err == nil && len(b) > 0 {
				add(&Item{Source: SourceProject, Location: name, Text: "## Project instructions (" + name + ")\n" + string(b) + "\n",
					Priority: prioProject, Score: 1})
			}
		}
	}

	indexSources(req, lines, sel, seen, report, add)
	historySources(req, report, add)
	openDocSources(req, seen, add)

	red := req.Redactor
	if red == nil {
		red = redact.Default()
	}
	// First pass: learn the exact secret values found in context (a value
	// caught only by its surroundings, `apiKey = "…"`, must be masked
	// wherever else it appears: in a search query built from the
	// selection's words, a snippet header, a location).
	for _, it := range items {
		if _, findings := red.Redact(it.Text); len(findings) > 0 {
			for _, f := range findings {
				red.AddValues(f.Kind, it.Text[f.Start:f.End])
			}
		}
	}
	for _, it := range items {
		if it.render != nil {
			inner := it.render
			it.render = func(tokens int) string {
				out, _ := red.Redact(inner(tokens))
				return out
			}
		}
		text, findings := red.Redact(it.Text)
		if len(findings) > 0 {
			it.Text = text
			kinds := map[string]int{}
			for _, f := range findings {
				kinds[f.Kind]++
			}
			var parts []string
			for k, n := range kinds {
				parts = append(parts, fmt.Sprintf("%d %s", n, k))
				if report.Redactions == nil {
					report.Redactions = map[string]int{}
				}
				report.Redactions[k] += n
			}
			sort.Strings(parts)
			it.Reason = "redacted " + strings.Join(parts, ", ") + "; "
		}
		if it.render == nil {
			it.Tokens = tokencount.Count(it.Text)
		}
	}
	used := Allocate(items, avail, report)
	used = fillLeftover(items, avail, used, report)
	if freed := dropContained(items, report); freed > 0 {
		used = fillLeftover(items, avail, used-freed, report)
		used -= dropContained(items, report)
	}
	// Partial overlaps (and the selection inside the surrounding code or
	// its enclosing symbol) become one range per file region.
	linesOf := func(rel string) []string {
		if rel == req.File && lines != nil {
			return lines
		}
		if req.WS == nil {
			return nil
		}
		return req.files.get(rel).lines // nil when it could not be read
	}
	var selSpan *span
	if sel != nil && req.File != "" && sel.StartLine <= len(lines) {
		selSpan = &span{req.File, sel.StartLine, min(sel.EndLine, len(lines))}
	}
	if freed := mergeOverlaps(items, linesOf, selSpan, red.String, report); freed > 0 {
		used = fillLeftover(items, avail, used-freed, report)
		used -= dropContained(items, report)
		used -= mergeOverlaps(items, linesOf, selSpan, red.String, report)
	}
	// What is left goes to the bodies of the functions the selection and
	// its enclosing symbol call (callees.go); merging them with what
	// overlaps may free room for the next ones.
	for round := 0; round < 2; round++ {
		used = spendOnCallees(items, avail, used, report)
		freed := mergeOverlaps(items, linesOf, selSpan, red.String, report)
		if freed <= 0 {
			break
		}
		used -= freed
	}
	report.Budget.Used = used + sysTokens
	report.Items = append(report.Items, items...)

	// Assemble in reading order: project instructions, file context,
	// diagnostics, recent edits, then the question last (models attend best
	// to the end).
	var b strings.Builder
	section := func(src Source, header string) {
		first := true
		for _, it := range items {
			if it.Source != src || !it.Included {
				continue
			}
			if first && header != "" {
				b.WriteString(header)
				first = false
			}
			b.WriteString(it.Text)
			if !strings.HasSuffix(it.Text, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	section(SourceProject, "")
	section(SourceHistory, "## Earlier in this conversation (oldest first)\n")
	section(SourceRepoMap, "")
	section(SourceDefinitions, "")
	section(SourceCallees, "")
	section(SourceSearch, "")
	section(SourceOpenDocs, "")
	section(SourceEnclosing, "")
	section(SourceWindow, "")
	section(SourceSelection, "")
	section(SourceDiagnostics, "## Diagnostics from the editor\n")
	section(SourceRecentEdits, "## The user's recent edits (newest first)\n")
	section(SourceQuestion, "")
	// The report is stored and shown: it must not carry a secret either (a
	// secret can reach it through a search query made of the selection's
	// words, a location, a note, or the question itself).
	report.Question = red.String(report.Question)
	for _, it := range report.Items {
		it.Location = red.String(it.Location)
		it.Reason = red.String(it.Reason)
	}
	for i, n := range report.Notes {
		report.Notes[i] = red.String(n)
	}
	return &Built{System: SystemPrompt, User: b.String(), Report: report}, nil
}

func numbered(lines []string, from, to int) string {
	var b strings.Builder
	for i := from; i <= to && i <= len(lines); i++ {
		fmt.Fprintf(&b, "%5d\t%s", i, lines[i-1])
		if !strings.HasSuffix(lines[i-1], "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// maxCutDefTokens bounds a definition cut to fit the leftover, so that one
// long definition does not take all of it.
const maxCutDefTokens = 400

// fillLeftover gives the budget the caps left unused to the items the first
// allocation dropped: definitions first (no other source brings them; the
// surrounding code and the enclosing symbol are on screen already), then in
// allocation order (priority, then score). A cap
// keeps one source from crowding out the others, not from using room nobody
// else wants. Whole items first; then definitions that are still too long
// are cut to their head (signature and first lines) to fill what remains.
func fillLeftover(items []*Item, avail, used int, report *Report) int {
	sorted := append([]*Item(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if (a.Source == SourceDefinitions) != (b.Source == SourceDefinitions) {
			return a.Source == SourceDefinitions // definitions first: nothing else brings them
		}
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		return a.Score > b.Score
	})
	dropped := func(it *Item) (string, bool) {
		if it.Included || it.Required || (it.Text == "" && it.render == nil) || strings.HasPrefix(it.Reason, "duplicate") {
			return "", false
		}
		for _, why := range []string{"over the ", "budget exhausted"} {
			if i := strings.Index(it.Reason, why); i >= 0 {
				return it.Reason[:i], true
			}
		}
		return "", false
	}
	// Definitions in score order: whole when they fit, else their head.
	for _, it := range sorted {
		base, ok := dropped(it)
		room := avail - used
		if !ok || it.Source != SourceDefinitions || room <= 0 {
			continue
		}
		if it.Tokens <= room {
			it.Included = true
			it.Reason = base + "fits in the budget the caps left unused"
			used += it.Tokens
			continue
		}
		if room < minShrunkTokens {
			continue
		}
		cut, _ := tokencount.Truncate(it.Text, min(room, maxCutDefTokens)-16)
		text := cut + "[... cut to fit the context budget ...]\n"
		n := tokencount.Count(text)
		if n > room {
			continue
		}
		it.Text, it.Tokens, it.Included = text, n, true
		it.Reason = base + "cut to its first lines to fit the budget left"
		used += n
	}
	// Then the other sources by priority.
	for _, it := range sorted {
		base, ok := dropped(it)
		if !ok || it.Source == SourceDefinitions {
			continue
		}
		if it.render != nil {
			// Rendered items (surrounding code, repo map) re-render in the room left.
			if avail-used <= 0 {
				continue
			}
			if text := it.render(min(avail-used, maxRenderTokens(it.Source))); text != "" {
				if n := tokencount.Count(text); n <= avail-used {
					it.Text, it.Tokens, it.Included = text, n, true
					it.Reason = base + "fits in the budget the caps left unused"
					used += n
				}
			}
			continue
		}
		if it.Tokens > avail-used {
			continue
		}
		it.Included = true
		it.Reason = base + "fits in the budget the caps left unused"
		used += it.Tokens
	}
	return used
}

// spanOf reads the file and the line range an item's location names
// ("path:12-40"); ok is false for a location without a range. It reads
// what `^(.+?):(\d+)-(\d+)` matches: the path is everything before the
// first ":digits-digits" (not at the start, no newline in the path).
// Allocation calls it for every item, several times a build.
func spanOf(location string) (rel string, start, end int, ok bool) {
	digits := func(i int) int { // the end of the run of digits at i
		for i < len(location) && location[i] >= '0' && location[i] <= '9' {
			i++
		}
		return i
	}
	for i := 1; i < len(location); i++ {
		if location[i-1] == '\n' {
			break
		}
		if location[i] != ':' {
			continue
		}
		j := digits(i + 1)
		if j == i+1 || j == len(location) || location[j] != '-' {
			continue
		}
		k := digits(j + 1)
		if k == j+1 {
			continue
		}
		start, _ = strconv.Atoi(location[i+1 : j])
		end, _ = strconv.Atoi(location[j+1 : k])
		return location[:i], start, end, true
	}
	return "", 0, 0, false
}

// dropContained marks an included item a duplicate when another included
// item already holds all its lines (a method inside its class's snippet, a
// search hit inside a definition, a definition inside the surrounding code),
// keeping the one allocated first. It returns the tokens freed. Candidates
// are not deduplicated up front against each other, since either may be
// dropped by the budget.
func dropContained(items []*Item, report *Report) int {
	type held struct {
		it         *Item
		rel        string
		start, end int
	}
	var in []held
	for _, it := range items {
		if !it.Included {
			continue
		}
		switch it.Source {
		case SourceSelection, SourceWindow, SourceEnclosing, SourceDefinitions, SourceCallees, SourceSearch, SourceOpenDocs:
		default:
			continue
		}
		rel, a, b, ok := spanOf(it.Location)
		if !ok {
			continue
		}
		in = append(in, held{it, rel, a, b})
	}
	// First allocated first: required, then priority, then score.
	sort.SliceStable(in, func(i, j int) bool {
		a, b := in[i].it, in[j].it
		if a.Required != b.Required {
			return a.Required
		}
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		return a.Score > b.Score
	})
	freed := 0
	drop := func(v held, by held) {
		v.it.Included = false
		v.it.Reason = "duplicate: already in the prompt in " + by.it.Location
		freed += v.it.Tokens
	}
	whole := func(h held) bool { // still holds all the lines its location says
		return !strings.Contains(h.it.Reason, "cut to") && !strings.Contains(h.it.Reason, "shortened")
	}
	for i := len(in) - 1; i >= 0; i-- {
		x := in[i]
		if x.it.Required || !x.it.Included {
			continue
		}
		for j, y := range in {
			if j == i || !y.it.Included || y.rel != x.rel || y.start > x.start || y.end < x.end || !whole(y) {
				continue
			}
			// y holds x: drop the part (a method inside its class's snippet,
			// the enclosing function inside the surrounding code), except
			// that a search hit around a definition goes and the definition
			// (allocated first, better labelled) stays. Of two identical
			// spans the later-allocated goes.
			identical := y.start == x.start && y.end == x.end
			if j > i && !y.it.Required && (identical || (y.it.Source == SourceSearch && x.it.Source != SourceSearch)) {
				drop(y, x)
				continue
			}
			drop(x, y)
			break
		}
	}
	return freed
}
