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
- For a change of several steps, call update_plan with the steps first and again as each starts or ends.
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

// Build assembles the first user message for a question, in phases:
// collect the candidates, redact them, allocate the budget, assemble the
// message, and redact the report.
func Build(req Request) (*Built, error) {
	b, err := newBuild(req)
	if err != nil {
		return nil, err
	}
	b.collect()
	b.redactItems()
	used := b.allocate()
	b.report.Budget.Used = used + b.sysTokens
	b.report.Items = append(b.report.Items, b.items...)
	user := assemble(b.items)
	b.redactReport()
	return &Built{System: SystemPrompt, User: user, Report: b.report}, nil
}

// build is one Build's state, shared by its phases.
type build struct {
	req       Request
	report    *Report
	sysTokens int
	avail     int        // tokens for the message after the system prompt
	lines     []string   // req.FileText's lines
	sel       *Selection // req.Selection, clamped by fileSources
	items     []*Item    // the candidates, in the order collected
	red       *redact.Redactor
}

func newBuild(req Request) (*build, error) {
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
	b := &build{req: req, sel: req.Selection, red: req.Redactor}
	if b.red == nil {
		b.red = redact.Default()
	}
	b.report = &Report{Question: req.Question, NotReady: append([]string(nil), req.NotReady...)}
	b.sysTokens = tokencount.Count(SystemPrompt)
	b.report.Budget = NewBudget(req.ContextWindow, req.MaxOutput, req.ToolSchemas)
	b.avail = b.report.Budget.Available - b.sysTokens
	b.report.Items = append(b.report.Items, &Item{Source: SourceInstructions, Location: "system prompt", Text: SystemPrompt,
		Tokens: b.sysTokens, Required: true, Included: true, Reason: "always sent"})
	if req.FileText != "" {
		b.lines = strings.SplitAfter(req.FileText, "\n")
		if n := len(b.lines); n > 0 && b.lines[n-1] == "" {
			b.lines = b.lines[:n-1]
		}
	}
	return b, nil
}

func (b *build) add(it *Item) { b.items = append(b.items, it) }

func (b *build) note(format string, args ...any) {
	b.report.Notes = append(b.report.Notes, fmt.Sprintf(format, args...))
}

// collect gathers every candidate. The order matters: it is the order of
// items of equal priority and score in the allocation, and of the report.
func (b *build) collect() {
	req := b.req
	b.add(&Item{Source: SourceQuestion, Location: "user", Text: "## Question\n" + req.Question + "\n", Priority: prioQuestion, Required: true, Score: 1})
	if req.File != "" && req.FileText == "" && req.WS != nil {
		abs := req.WS.Abs(req.File)
		if _, open := req.WS.Docs.Get(abs); !open {
			if _, err := os.Stat(abs); err != nil {
				b.note("%s is not open in the editor and not on disk: no selection or file context; answering from the question and the indexes only", req.File)
			}
		}
	}
	if need := tokencount.Count(req.Question) + 8; b.avail < need {
		b.note("the budget (%d tokens for messages after the system prompt) is smaller than the question (%d tokens): the question is cut to fit; raise the context window or lower the tokens reserved for the answer", b.avail, need)
	}
	seen := b.fileSources()
	b.diagnosticSources()
	b.recentEditSources()
	b.projectSources()
	indexSources(req, b.lines, b.sel, seen, b.report, b.add)
	historySources(req, b.report, b.add)
	openDocSources(req, seen, b.add)
}

// fileSources adds the selection and the code around it, or the head of
// the current file when nothing is selected. It returns the span the
// selection covers, which other sources need not repeat.
func (b *build) fileSources() spans {
	req, lines, sel := b.req, b.lines, b.sel
	if req.File == "" {
		return nil
	}
	if sel == nil {
		if len(lines) > 0 {
			end := min(len(lines), 200)
			b.add(&Item{Source: SourceWindow, Location: fmt.Sprintf("%s:1-%d", req.File, end),
				Text:     fmt.Sprintf("## Current file: %s lines 1-%d\n%s", req.File, end, numbered(lines, 1, end)),
				Priority: prioWindow, Score: 0.7})
		}
		return nil
	}
	if sel.StartLine < 1 {
		sel.StartLine = 1
	}
	if sel.EndLine < sel.StartLine {
		sel.EndLine = sel.StartLine
	}
	if sel.StartLine > len(lines) {
		b.note("the selection starts at line %d, past the end of %s (%d lines); no selection text included", sel.StartLine, req.File, len(lines))
		return nil
	}
	end := min(sel.EndLine, len(lines))
	b.add(&Item{Source: SourceSelection, Location: fmt.Sprintf("%s:%d-%d", req.File, sel.StartLine, end),
		Text:     fmt.Sprintf("## Selection: %s lines %d-%d\n%s", req.File, sel.StartLine, end, numbered(lines, sel.StartLine, end)),
		Priority: prioSelection, Required: true, Score: 1})
	if sel.StartLine > 1 || end < len(lines) {
		b.add(windowItem(req.File, lines, sel.StartLine, end))
	}
	return spans{{req.File, sel.StartLine, end}}
}

// windowItem is the code around lines first-last of file: up to 40 lines
// either side, fewer when the room allocated is smaller.
func windowItem(file string, lines []string, first, last int) *Item {
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
	return it
}

// diagnosticSources adds the editor's diagnostics, those in the selection
// first, then those of its file, then the rest.
func (b *build) diagnosticSources() {
	for _, d := range b.req.Diagnostics {
		prio, score := prioDiagnosticsOther, 0.3
		if d.Path == b.req.File {
			prio, score = prioDiagnosticsFile, 0.6
			if sel := b.sel; sel != nil && d.Line() <= sel.EndLine && d.EndLine() >= sel.StartLine {
				prio, score = prioDiagnosticsInRange, 1
			}
		}
		src := ""
		if d.Source != "" {
			src = " (" + d.Source + ")"
		}
		b.add(&Item{Source: SourceDiagnostics, Location: fmt.Sprintf("%s:%d", d.Path, d.Line()),
			Text:     fmt.Sprintf("- %s:%d: %s%s: %s\n", d.Path, d.Line(), d.Severity, src, d.Message),
			Priority: prio, Score: score})
	}
}

// recentEditSources adds the user's recent edits as diffs, newest first.
func (b *build) recentEditSources() {
	for i, e := range b.req.RecentEdits {
		rel := e.Path
		if b.req.WS != nil {
			rel = b.req.WS.Rel(e.Path)
		}
		diff := workspace.UnifiedDiff(rel, e.Before, e.After)
		if diff == "" {
			continue
		}
		b.add(&Item{Source: SourceRecentEdits, Location: rel, Text: "```diff\n" + diff + "```\n",
			Priority: prioRecentEdits, Score: 1 / float64(i+1)})
	}
}

// projectSources adds the project's standing instructions to the agent.
func (b *build) projectSources() {
	if b.req.WS == nil {
		return
	}
	for _, name := range []string{"AGENTS.md", ".cairn/instructions.md"} {
		data, err := os.ReadFile(filepath.Join(b.req.WS.Root(), name))
		if err == nil && len(data) > 0 {
			b.add(&Item{Source: SourceProject, Location: name, Text: "## Project instructions (" + name + ")\n" + string(data) + "\n",
				Priority: prioProject, Score: 1})
		}
	}
}

// redactItems masks secrets in every candidate before it is counted, and
// wraps rendered items so that what they render is masked too. It reads
// the items twice, and both passes are needed: the first learns the exact
// values of the secrets found anywhere (a value caught only by its
// surroundings, `apiKey = "…"`, may appear bare elsewhere: in a search
// query built from the selection's words, a snippet header, a location);
// the second masks, in every item, what the first learned as well as what
// the rules find, which for an item collected before the one that revealed
// a value one pass could not do. When the first pass found nothing (most
// builds), the second would find nothing either in the same texts, so it
// only wraps the rendered items and counts tokens.
func (b *build) redactItems() {
	red := b.red
	found := false
	for _, it := range b.items {
		if _, findings := red.Redact(it.Text); len(findings) > 0 {
			found = true
			for _, f := range findings {
				red.AddValues(f.Kind, it.Text[f.Start:f.End])
			}
		}
	}
	for _, it := range b.items {
		if it.render != nil {
			inner := it.render
			it.render = func(tokens int) string {
				out, _ := red.Redact(inner(tokens))
				return out
			}
		}
		if found {
			text, findings := red.Redact(it.Text)
			if len(findings) > 0 {
				it.Text = text
				it.Reason = b.countRedactions(findings)
			}
		}
		if it.render == nil {
			it.Tokens = tokencount.Count(it.Text)
		}
	}
}

// countRedactions adds findings to the report's counts and returns the
// item's reason that says what was masked.
func (b *build) countRedactions(findings []redact.Finding) string {
	kinds := map[string]int{}
	for _, f := range findings {
		kinds[f.Kind]++
	}
	var parts []string
	for k, n := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
		if b.report.Redactions == nil {
			b.report.Redactions = map[string]int{}
		}
		b.report.Redactions[k] += n
	}
	sort.Strings(parts)
	return "redacted " + strings.Join(parts, ", ") + "; "
}

// allocate spends the budget and returns the tokens used. After the first
// allocation, each way of freeing room in turn (dropping what another
// included item holds, then merging what overlaps) frees what it can;
// fillLeftover gives that room to what was dropped, and what the refill
// brought in is dropped or merged again where it repeats something, its
// room left to what comes next. Then the bodies of the functions the
// selection and its enclosing symbol call take what is left (callees.go),
// merged with what they overlap, until no merge frees more. The loop ends:
// every round that frees something takes at least one item out of the
// prompt for good (a merged item is never taken back).
func (b *build) allocate() int {
	items, avail, report := b.items, b.avail, b.report
	used := Allocate(items, avail, report)
	used = fillLeftover(items, avail, used, report)
	freers := []func() int{func() int { return dropContained(items, report) }, b.mergeOverlaps}
	for i, free := range freers {
		freed := free()
		if freed <= 0 {
			continue
		}
		used = fillLeftover(items, avail, used-freed, report)
		for _, again := range freers[:i+1] {
			used -= again()
		}
	}
	for {
		used = spendOnCallees(items, avail, used, report)
		freed := b.mergeOverlaps()
		if freed <= 0 {
			return used
		}
		used -= freed
	}
}

// mergeOverlaps makes one range per file region of the included items
// (merge.go), the selection marked, and returns the tokens freed.
func (b *build) mergeOverlaps() int {
	req, lines, sel := b.req, b.lines, b.sel
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
	return mergeOverlaps(b.items, linesOf, selSpan, b.red.String, b.report)
}

// assemble writes the included items in reading order: project
// instructions, file context, diagnostics, recent edits, then the question
// last (models attend best to the end).
func assemble(items []*Item) string {
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
	return b.String()
}

// redactReport masks secrets in the report, which is stored and shown: a
// secret can reach it through a search query made of the selection's
// words, a location, a note, or the question itself.
func (b *build) redactReport() {
	r, red := b.report, b.red
	r.Question = red.String(r.Question)
	for _, it := range r.Items {
		it.Location = red.String(it.Location)
		it.Reason = red.String(it.Reason)
	}
	for i, n := range r.Notes {
		r.Notes[i] = red.String(n)
	}
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
