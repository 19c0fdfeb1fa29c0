package contextengine

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/repomap"
	"github.com/cairn-dev/cairn/search"
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

// Diagnostic is an editor diagnostic as the context engine renders it.
type Diagnostic struct {
	Rel       string
	StartLine int // 1-based
	EndLine   int
	Severity  string
	Source    string
	Message   string
}

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
	Diagnostics []Diagnostic
	// RecentEdits are the user's own recent edits, newest first.
	RecentEdits []workspace.RecentEdit
	WS          *workspace.Workspace

	ContextWindow int
	MaxOutput     int
	ToolSchemas   int // tokens of the tool schemas sent with the request

	// Redactor masks secrets in every item before it is counted or sent;
	// nil uses redact.Default().
	Redactor *redact.Redactor

	// Map and Search are the code indexes (either may be nil); IndexPending
	// says they are still being built (the report notes it: a build never
	// waits for indexing).
	Map          *repomap.Map
	Search       *search.Index
	IndexPending bool
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
	report := &Report{Question: req.Question}
	sysTokens := tokencount.Count(SystemPrompt)
	report.Budget = NewBudget(req.ContextWindow, req.MaxOutput, req.ToolSchemas)
	avail := report.Budget.Available - sysTokens
	report.Items = append(report.Items, &Item{Source: SourceInstructions, Location: "system prompt", Text: SystemPrompt,
		Tokens: sysTokens, Required: true, Included: true, Reason: "always sent"})

	var items []*Item
	add := func(it *Item) { items = append(items, it) }
	add(&Item{Source: SourceQuestion, Location: "user", Text: "## Question\n" + req.Question + "\n", Priority: prioQuestion, Required: true, Score: 1})

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
				seen = append(seen, span{req.File, max(1, first-40), min(len(lines), last+40)})
			}
			seen = append(seen, span{req.File, sel.StartLine, end})
		}
	} else if req.File != "" && len(lines) > 0 {
		end := min(len(lines), 200)
		add(&Item{Source: SourceWindow, Location: fmt.Sprintf("%s:1-%d", req.File, end),
			Text:     fmt.Sprintf("## Current file: %s lines 1-%d\n%s", req.File, end, numbered(lines, 1, end)),
			Priority: prioWindow, Score: 0.7})
		seen = append(seen, span{req.File, 1, end})
	}

	for _, d := range req.Diagnostics {
		prio, score := prioDiagnosticsOther, 0.3
		if d.Rel == req.File {
			prio, score = prioDiagnosticsFile, 0.6
			if sel != nil && d.StartLine <= sel.EndLine && d.EndLine >= sel.StartLine {
				prio, score = prioDiagnosticsInRange, 1
			}
		}
		src := ""
		if d.Source != "" {
			src = " (" + d.Source + ")"
		}
		add(&Item{Source: SourceDiagnostics, Location: fmt.Sprintf("%s:%d", d.Rel, d.StartLine),
			Text:     fmt.Sprintf("- %s:%d: %s%s: %s\n", d.Rel, d.StartLine, d.Severity, src, d.Message),
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
	openDocSources(req, seen, add)

	red := req.Redactor
	if red == nil {
		red = redact.Default()
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
	section(SourceRepoMap, "")
	section(SourceDefinitions, "")
	section(SourceSearch, "")
	section(SourceOpenDocs, "")
	section(SourceEnclosing, "")
	section(SourceWindow, "")
	section(SourceSelection, "")
	section(SourceDiagnostics, "## Diagnostics from the editor\n")
	section(SourceRecentEdits, "## The user's recent edits (newest first)\n")
	section(SourceQuestion, "")
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
