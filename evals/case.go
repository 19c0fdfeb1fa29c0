// Package evals runs Cairn's evaluation cases: each case is a txtar file
// holding a workspace, the actions of an editor (open, type, ask, accept,
// undo, cancel, …), a scripted model (or a marker to use a real one) and
// expectations on what happened. The runner drives the real server over a
// pipe with lspclient, exactly as an editor would, and reports success rate,
// failures by type, tokens, latency and steps. See README.md for the format.
package evals

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/txtar"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/workspace"
)

// Case is one evaluation case, parsed from a txtar file: the YAML header is
// the txtar comment, the other sections are workspace files, and sections
// named "expect:<path>" hold the exact final content of a file.
type Case struct {
	// Name is the file name without .txtar.
	Name string `yaml:"-"`
	// Path is the file the case was loaded from.
	Path string `yaml:"-"`

	Description string `yaml:"description"`
	// Provider is "scripted" (the default: Turns drive the model) or
	// "real" (the model configured with --provider or the environment).
	Provider string `yaml:"provider"`
	// Pending names the feature a case waits for (cases in evals/pending).
	Pending string `yaml:"pending"`
	// Settings are sent as initializationOptions (e.g. approval.mode).
	Settings map[string]any `yaml:"settings"`
	Editor   EditorOptions  `yaml:"editor"`
	// Approvals answer the approval prompts in order: allow_once,
	// allow_session, deny, dismiss. When they run out, prompts are denied.
	Approvals []string `yaml:"approvals"`
	// Timeout bounds the whole case (default: the runner's).
	Timeout Duration `yaml:"timeout"`
	// Turns are the scripted model's turns (model/README.md format).
	Turns []model.ScriptTurn `yaml:"turns"`
	// ResumeTurns script the model of the server started by `resume`
	// after a `kill`.
	ResumeTurns []model.ScriptTurn `yaml:"resumeTurns"`
	Actions     []Action           `yaml:"actions"`
	Expect      Expect             `yaml:"expect"`

	// Files is the workspace: path → content.
	Files map[string]string `yaml:"-"`
	// ExpectFiles are "expect:<path>" sections: the exact final contents.
	ExpectFiles map[string]string `yaml:"-"`
}

// Scripted reports whether the case runs on the scripted model.
func (c *Case) Scripted() bool { return c.Provider == "" || c.Provider == "scripted" }

// EditorOptions configure the fake editor.
type EditorOptions struct {
	NoDocumentChanges bool `yaml:"noDocumentChanges"`
	RejectApplyEdit   bool `yaml:"rejectApplyEdit"`
}

// Duration is a time.Duration written as "30s" in YAML.
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: bad duration %q: %w", n.Line, n.Value, err)
	}
	*d = Duration(v)
	return nil
}

// Action is one editor action; exactly one field is set.
type Action struct {
	Open        string         `yaml:"open"`
	Save        string         `yaml:"save"`
	Type        *TypeAction    `yaml:"type"`
	Edit        *EditAction    `yaml:"edit"`
	Diagnostics *DiagAction    `yaml:"diagnostics"`
	Ask         *AskAction     `yaml:"ask"`
	CodeAction  *CodeAction    `yaml:"codeAction"`
	Wait        *WaitAction    `yaml:"wait"`
	Cancel      *WaitAction    `yaml:"cancel"`
	Accept      *EditRefAction `yaml:"accept"`
	Reject      *EditRefAction `yaml:"reject"`
	Undo        *UndoAction    `yaml:"undo"`
	Kill        *struct{}      `yaml:"kill"`
	Resume      *ResumeAction  `yaml:"resume"`
	Sleep       Duration       `yaml:"sleep"`
	WaitFile    string         `yaml:"waitFile"`
	Extra       map[string]any `yaml:",inline"`
	name        string         // the key that was set
}

// TypeAction replaces (or appends to) a buffer's text as typing would.
type TypeAction struct {
	File   string `yaml:"file"`
	Text   string `yaml:"text"`
	Append bool   `yaml:"append"`
}

// EditAction replaces the first occurrence of Old with New in an open
// buffer through an incremental didChange.
type EditAction struct {
	File string `yaml:"file"`
	Old  string `yaml:"old"`
	New  string `yaml:"new"`
}

// DiagAction forwards diagnostics for a file (cairn/didChangeDiagnostics).
type DiagAction struct {
	File  string           `yaml:"file"`
	Items []DiagnosticItem `yaml:"items"`
}

// DiagnosticItem is how a case writes a workspace.Diagnostic: lines and
// columns 1-based as editors show them, columns counted in UTF-16 units
// as LSP counts them. Only line and message are required.
type DiagnosticItem struct {
	Line     int    `yaml:"line"`
	EndLine  int    `yaml:"endLine"`
	Col      int    `yaml:"col"`
	EndCol   int    `yaml:"endCol"`
	Severity int    `yaml:"severity"`
	Source   string `yaml:"source"`
	Message  string `yaml:"message"`
}

// Diagnostic is the item as the diagnostic of the file at path: an end line
// defaults to the start line, a column to 1, an end column to one past the
// column, a severity to error.
func (d DiagnosticItem) Diagnostic(path string) workspace.Diagnostic {
	end := d.EndLine
	if end == 0 {
		end = d.Line
	}
	col, endCol := max(d.Col, 1), d.EndCol
	if endCol == 0 {
		endCol = col + 1
	}
	sev := workspace.Severity(d.Severity)
	if sev == 0 {
		sev = workspace.SeverityError
	}
	return workspace.Diagnostic{
		Path: path,
		Range: workspace.Range{
			Start: workspace.Position{Line: uint32(max(d.Line-1, 0)), Character: uint32(col - 1)},
			End:   workspace.Position{Line: uint32(max(end-1, 0)), Character: uint32(endCol - 1)},
		},
		Severity: sev, Source: d.Source, Message: d.Message,
	}
}

// AskAction runs cairn.ask on a selection ("4-6", 1-based inclusive).
type AskAction struct {
	File     string `yaml:"file"`
	Lines    string `yaml:"lines"`
	Question string `yaml:"question"`
	// ExpectError makes the ask itself expected to fail with this text.
	ExpectError string `yaml:"expectError"`
}

// CodeAction requests textDocument/codeAction on lines and runs the action
// whose title contains Title.
type CodeAction struct {
	File  string `yaml:"file"`
	Lines string `yaml:"lines"`
	Title string `yaml:"title"`
}

// WaitAction waits for (or, as cancel, then cancels the current run at) a
// point of the current run: after Events events, when an event of Kind
// arrives, or (neither set) when the run ends. Cancel with neither set
// cancels at once.
type WaitAction struct {
	Events int    `yaml:"events"`
	Kind   string `yaml:"kind"`
}

// EditRefAction accepts or rejects a proposed edit of the current run:
// Edit is 1-based among its editProposed events; 0 means the last one.
type EditRefAction struct {
	Edit          int    `yaml:"edit"`
	ExpectError   string `yaml:"expectError"`
	ExpectApplied *bool  `yaml:"expectApplied"`
}

// UndoAction undoes an accepted edit's checkpoint: 1-based among the
// checkpoints of this case, 0 for the last.
type UndoAction struct {
	Checkpoint  int    `yaml:"checkpoint"`
	Force       bool   `yaml:"force"`
	ExpectError string `yaml:"expectError"`
}

// ResumeAction restarts the server killed before (a kill action), with the
// case's resumeTurns as the model, waits for it to announce the run as
// interrupted, and runs cairn.resume on it. It takes no fields.
type ResumeAction struct{}

// Expect is what must hold when the case ends. Final, Class, AnswerContains
// and ErrorContains look at the last run; the rest at all runs of the case.
type Expect struct {
	Final          string         `yaml:"final"` // finished, failed, cancelled, interrupted
	Class          string         `yaml:"class"`
	AnswerContains []string       `yaml:"answerContains"`
	ErrorContains  []string       `yaml:"errorContains"`
	Events         EventsExpect   `yaml:"events"`
	ToolCalls      ToolsExpect    `yaml:"toolCalls"`
	ToolResults    ResultsExpect  `yaml:"toolResults"`
	Approvals      *ApprovalsExp  `yaml:"approvals"`
	Context        ContextExpect  `yaml:"context"`
	Redacted       []string       `yaml:"redacted"`
	Files          map[string]any `yaml:"files"`
	ModelCalls     *int           `yaml:"modelCalls"`
}

// EventsExpect: kinds that must appear / must not appear, and exact counts.
type EventsExpect struct {
	Present []string       `yaml:"present"`
	Absent  []string       `yaml:"absent"`
	Count   map[string]int `yaml:"count"`
}

// ToolsExpect: tools the model called (toolCall events) and did not call.
type ToolsExpect struct {
	Made    []string `yaml:"made"`
	NotMade []string `yaml:"notMade"`
}

// ResultsExpect: counts of ok and failed toolResult events, and text the
// tool results sent back to the model must contain.
type ResultsExpect struct {
	OK       *int     `yaml:"ok"`
	Failed   *int     `yaml:"failed"`
	Contains []string `yaml:"contains"`
}

// ApprovalsExp: how many approval prompts the editor was shown, what they
// said, and the decisions in approval events.
type ApprovalsExp struct {
	Count     *int     `yaml:"count"`
	Contains  []string `yaml:"contains"`
	Decisions []string `yaml:"decisions"`
}

// ContextExpect is checked on everything the model was sent (every message
// of every request): text that must be there, and text that must not.
type ContextExpect struct {
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`
}

// FileExpect is the expected final state of a file on disk.
type FileExpect struct {
	Equals      *string  `yaml:"equals"`
	Contains    []string `yaml:"contains"`
	NotContains []string `yaml:"notContains"`
	Absent      bool     `yaml:"absent"`
	// Unchanged: the file is byte for byte what the workspace started with.
	Unchanged bool `yaml:"unchanged"`
}

// ExpectPrefix names txtar sections holding a file's exact final content.
const ExpectPrefix = "expect:"

// ParseCase parses a case from txtar data.
func ParseCase(name string, data []byte) (*Case, error) {
	ar := txtar.Parse(data)
	c := &Case{Name: name, Files: map[string]string{}, ExpectFiles: map[string]string{}}
	dec := yaml.NewDecoder(bytes.NewReader(ar.Comment))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && err.Error() != "EOF" {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	for _, f := range ar.Files {
		if rest, ok := strings.CutPrefix(f.Name, ExpectPrefix); ok {
			c.ExpectFiles[strings.TrimSpace(rest)] = string(f.Data)
			continue
		}
		if _, dup := c.Files[f.Name]; dup {
			return nil, fmt.Errorf("%s: file %s appears twice", name, f.Name)
		}
		c.Files[f.Name] = string(f.Data)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

func (c *Case) validate() error {
	switch c.Provider {
	case "", "scripted", "real":
	default:
		return fmt.Errorf("provider %q: want scripted or real", c.Provider)
	}
	for i, t := range append(append([]model.ScriptTurn(nil), c.Turns...), c.ResumeTurns...) {
		for j, tc := range t.ToolCalls {
			if tc.Name == "" {
				return fmt.Errorf("turn %d tool call %d has no name", i+1, j+1)
			}
		}
	}
	for _, a := range c.Approvals {
		if _, ok := approvalTitles[a]; !ok {
			return fmt.Errorf("approval answer %q: want allow_once, allow_session, deny or dismiss", a)
		}
	}
	asked := false
	for i := range c.Actions {
		a := &c.Actions[i]
		n, err := a.kind()
		if err != nil {
			return fmt.Errorf("action %d: %w", i+1, err)
		}
		a.name = n
		if n == "ask" || n == "codeAction" {
			asked = true
		}
	}
	if !asked {
		return fmt.Errorf("no ask or codeAction action: a case asks at least once")
	}
	for p, v := range c.Expect.Files {
		if _, err := fileExpect(v); err != nil {
			return fmt.Errorf("expect.files[%s]: %w", p, err)
		}
	}
	return nil
}

// kind returns the one action key set.
func (a *Action) kind() (string, error) {
	var set []string
	add := func(ok bool, n string) {
		if ok {
			set = append(set, n)
		}
	}
	add(a.Open != "", "open")
	add(a.Save != "", "save")
	add(a.Type != nil, "type")
	add(a.Edit != nil, "edit")
	add(a.Diagnostics != nil, "diagnostics")
	add(a.Ask != nil, "ask")
	add(a.CodeAction != nil, "codeAction")
	add(a.Wait != nil, "wait")
	add(a.Cancel != nil, "cancel")
	add(a.Accept != nil, "accept")
	add(a.Reject != nil, "reject")
	add(a.Undo != nil, "undo")
	add(a.Kill != nil, "kill")
	add(a.Resume != nil, "resume")
	add(a.Sleep != 0, "sleep")
	add(a.WaitFile != "", "waitFile")
	for k := range a.Extra {
		return "", fmt.Errorf("unknown action %q", k)
	}
	if len(set) != 1 {
		return "", fmt.Errorf("want exactly one action key, got %v (write `wait: {}` rather than `wait:`)", set)
	}
	return set[0], nil
}

// fileExpect decodes a files entry: a string is the exact content, a
// mapping is a FileExpect.
func fileExpect(v any) (FileExpect, error) {
	switch x := v.(type) {
	case string:
		return FileExpect{Equals: &x}, nil
	case map[string]any:
		b, err := yaml.Marshal(x)
		if err != nil {
			return FileExpect{}, err
		}
		var fe FileExpect
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&fe); err != nil {
			return FileExpect{}, err
		}
		return fe, nil
	}
	return FileExpect{}, fmt.Errorf("want a string or a mapping, got %T", v)
}

// LoadDir loads every *.txtar case in dir, sorted by name.
func LoadDir(dir string) ([]*Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *.txtar cases in %s", dir)
	}
	sort.Strings(paths)
	var out []*Case
	for _, p := range paths {
		c, err := LoadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// LoadFile loads one case file.
func LoadFile(path string) (*Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := ParseCase(strings.TrimSuffix(filepath.Base(path), ".txtar"), b)
	if err != nil {
		return nil, err
	}
	c.Path = path
	return c, nil
}
