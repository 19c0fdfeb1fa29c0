package evals

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/txtar"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/workspace"
)

// RecordOptions say which run to turn into a case.
type RecordOptions struct {
	StateDir string // the server's state directory
	Root     string // the workspace the run ran in
	RunID    string
}

// Record reads a run's journal and drafts a case from it: the workspace
// files the run touched (as they are now, secrets masked), the ask, the
// model's turns as a script, and expectations inferred from the outcome. It
// returns the txtar text and notes for the person who will edit the draft.
func Record(o RecordOptions) ([]byte, []string, error) {
	if strings.ContainsAny(o.RunID, `/\`) || strings.Contains(o.RunID, "..") || o.RunID == "" {
		return nil, nil, fmt.Errorf("invalid run id %q", o.RunID)
	}
	path := filepath.Join(o.StateDir, "runs", o.RunID, "journal.jsonl")
	recs, torn, err := checkpoint.ReadJournal(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the journal of %s: %w", o.RunID, err)
	}
	ws, err := workspace.Open(o.Root)
	if err != nil {
		return nil, nil, err
	}
	r := newRecording()
	if torn {
		r.note("the journal ends with a torn record (the server stopped mid-write); the draft stops before it")
	}
	for _, rec := range recs {
		r.add(rec)
	}
	if len(recs) == 0 || r.started.Question == "" {
		return nil, nil, fmt.Errorf("the journal of %s has no run_started record", o.RunID)
	}
	// Each step notes what the person editing the draft should check, in
	// the order the draft's comment lists them.
	ar := &txtar.Archive{Files: r.workspaceFiles(ws)}
	h := recHeader{
		Description: fmt.Sprintf("Recorded from run %s. TODO: say what this case checks, then tighten the expectations.", o.RunID),
		Turns:       r.turns,
	}
	h.Actions = r.actions()
	h.Expect = r.expectations()
	r.toolNotes()
	r.note("model errors that were retried (rate limits, context overflow) are not journaled: add their turns by hand if the case needs them")
	out, err := formatDraft(o.RunID, r.notes, h, ar)
	if err != nil {
		return nil, nil, err
	}
	// The draft must parse as a case.
	if _, err := ParseCase(o.RunID, out); err != nil {
		return out, append(r.notes, "the draft does not parse as a case: "+err.Error()), nil
	}
	return out, r.notes, nil
}

// recording is what Record learns from a run's journal, record by record.
type recording struct {
	started struct {
		Question  string
		File      string
		Selection *struct{ StartLine, EndLine int }
	}
	finished *struct{ State, Error, Class string } // nil: no run_finished record
	turns    []recTurn
	edits    []string // edit ids in order
	accepted map[string]bool
	files    []string // the files the run touched, in the order it did
	seen     map[string]bool
	created  map[string]bool
	edited   map[string][][2]string // path → (oldText, newText)
	lastText string                 // the model's last text
	tools    []string               // the tools called, in the order of their first call
	toolSeen map[string]bool
	notes    []string // for the person who will edit the draft
}

func newRecording() *recording {
	return &recording{accepted: map[string]bool{}, seen: map[string]bool{}, created: map[string]bool{},
		edited: map[string][][2]string{}, toolSeen: map[string]bool{}}
}

func (r *recording) note(s string) { r.notes = append(r.notes, s) }

func (r *recording) addFile(p string) {
	if p != "" && !r.seen[p] {
		r.seen[p] = true
		r.files = append(r.files, p)
	}
}

// add takes one journal record into the recording.
func (r *recording) add(rec checkpoint.Record) {
	switch rec.Type {
	case checkpoint.RecRunStarted:
		_ = json.Unmarshal(rec.Data, &r.started)
		r.addFile(r.started.File)
	case checkpoint.RecModelResult:
		var resp model.Response
		if err := json.Unmarshal(rec.Data, &resp); err != nil {
			r.note(fmt.Sprintf("step %d: unreadable model result: %v", rec.Step, err))
			return
		}
		r.addTurn(resp)
	case checkpoint.RecEdit:
		var e struct{ EditID string }
		_ = json.Unmarshal(rec.Data, &e)
		r.edits = append(r.edits, e.EditID)
	case checkpoint.RecEditState:
		var e struct{ EditID, State string }
		_ = json.Unmarshal(rec.Data, &e)
		if e.State == "accepted" {
			r.accepted[e.EditID] = true
		}
	case checkpoint.RecFinished:
		r.finished = &struct{ State, Error, Class string }{}
		_ = json.Unmarshal(rec.Data, r.finished)
	}
}

// addTurn records a model turn (secrets masked) and what its tool calls
// touched.
func (r *recording) addTurn(resp model.Response) {
	t := recTurn{Text: redact.Default().String(resp.Text)}
	r.lastText = resp.Text
	for _, tc := range resp.ToolCalls {
		c := recCall{Name: tc.Name}
		var args map[string]any
		if json.Unmarshal([]byte(redact.Default().String(tc.Arguments)), &args) == nil {
			c.Arguments = args
			r.addCallFile(tc.Name, args)
		} else {
			c.ArgumentsRaw = redact.Default().String(tc.Arguments)
		}
		t.ToolCalls = append(t.ToolCalls, c)
		if !r.toolSeen[tc.Name] {
			r.toolSeen[tc.Name] = true
			r.tools = append(r.tools, tc.Name)
		}
	}
	r.turns = append(r.turns, t)
}

// addCallFile records the file a tool call with args reads or edits.
func (r *recording) addCallFile(tool string, args map[string]any) {
	p, ok := args["path"].(string)
	if !ok {
		return
	}
	oldT, _ := args["oldText"].(string)
	newT, _ := args["newText"].(string)
	if tool == "edit_file" {
		if oldT == "" {
			r.created[p] = true
		} else {
			r.edited[p] = append(r.edited[p], [2]string{oldT, newT})
		}
	}
	if tool == "read_file" || tool == "edit_file" || tool == "get_diagnostics" {
		r.addFile(p)
	}
}

// workspaceFiles returns the files the run touched, as they are now,
// secrets masked, with accepted edits reverted where that is unambiguous.
func (r *recording) workspaceFiles(ws *workspace.Workspace) []txtar.File {
	var out []txtar.File
	red := redact.Default()
	sort.Strings(r.files)
	for _, rel := range r.files {
		if r.created[rel] {
			r.note(fmt.Sprintf("%s was created by the run: left out of the workspace", rel))
			continue
		}
		abs, err := ws.Resolve(rel)
		if err != nil {
			r.note(fmt.Sprintf("%s: %v (left out)", rel, err))
			continue
		}
		b, err := os.ReadFile(abs)
		if err != nil {
			r.note(fmt.Sprintf("%s: %v (left out)", rel, err))
			continue
		}
		masked, findings := red.Redact(r.unedited(rel, string(b)))
		if len(findings) > 0 {
			r.note(fmt.Sprintf("%s: %d secret(s) masked", rel, len(findings)))
		}
		out = append(out, txtar.File{Name: rel, Data: []byte(ensureNL(masked))})
	}
	return out
}

// unedited returns text, rel's content now, with the run's edits of it
// reverted where the new text occurs once: an accepted edit is on disk
// now, and the case starts from the text the run started from.
func (r *recording) unedited(rel, text string) string {
	for i := len(r.edited[rel]) - 1; i >= 0; i-- {
		oldT, newT := r.edited[rel][i][0], r.edited[rel][i][1]
		if newT != "" && newT != oldT && strings.Count(text, newT) == 1 && (strings.Contains(newT, oldT) || !strings.Contains(text, oldT)) {
			text = strings.Replace(text, newT, oldT, 1)
			r.note(fmt.Sprintf("%s holds an accepted edit: the draft reverts it to the text the run started from; check it", rel))
		}
	}
	return text
}

// actions returns the case's actions: open the run's file, ask its
// question, accept the edits the user accepted.
func (r *recording) actions() []map[string]any {
	var actions []map[string]any
	st := r.started
	if st.File != "" {
		actions = append(actions, map[string]any{"open": st.File})
	}
	ask := map[string]any{"file": st.File, "question": redact.Default().String(st.Question)}
	if s := st.Selection; s != nil && s.StartLine > 0 {
		ask["lines"] = fmt.Sprintf("%d-%d", s.StartLine, s.EndLine)
	}
	actions = append(actions, map[string]any{"ask": ask})
	for i, id := range r.edits {
		if r.accepted[id] {
			actions = append(actions, map[string]any{"accept": map[string]any{"edit": i + 1}})
		}
	}
	if len(r.accepted) == 0 && len(r.edits) > 0 {
		r.note("no accepted edit in the journal: add `accept: {}` if the user accepted (edit states after the end of a run may be missing from the journal)")
	}
	return actions
}

// expectations infers the case's expectations from the run's outcome.
func (r *recording) expectations() map[string]any {
	x := map[string]any{}
	if fin := r.finished; fin != nil {
		switch fin.State {
		case "finished":
			x["final"] = "finished"
			if line := firstLine(r.lastText); line != "" {
				x["answerContains"] = []string{redact.Default().String(line)}
			}
		case "failed":
			x["final"] = "failed"
			x["class"] = fin.Class
		default:
			x["final"] = fin.State
			r.note(fmt.Sprintf("the run ended %s: add the action that caused it (cancel, kill)", fin.State))
		}
	} else {
		r.note("the run has no run_finished record (interrupted): the expectations are a guess")
	}
	if len(r.tools) > 0 {
		x["toolCalls"] = map[string]any{"made": r.tools}
	}
	if len(r.edits) > 0 {
		x["events"] = map[string]any{"count": map[string]int{"editProposed": len(r.edits)}}
	}
	return x
}

// toolNotes notes the tools whose results depend on files the draft's
// workspace may not hold.
func (r *recording) toolNotes() {
	for _, t := range r.tools {
		switch t {
		case "list_files", "search_code", "repo_map", "run_command":
			r.note(fmt.Sprintf("the run called %s: the draft's workspace holds only the files the run asked about, read or edited; add the others its results depend on", t))
		}
	}
}

// formatDraft writes the case: a comment with notes, the header as YAML,
// and ar's files.
func formatDraft(runID string, notes []string, h recHeader, ar *txtar.Archive) ([]byte, error) {
	var hdr bytes.Buffer
	fmt.Fprintf(&hdr, "# Draft case recorded by `cairn eval record %s`: review it before adding it to evals/cases.\n", runID)
	for _, n := range notes {
		fmt.Fprintf(&hdr, "# NOTE: %s\n", n)
	}
	enc := yaml.NewEncoder(&hdr)
	enc.SetIndent(2)
	if err := enc.Encode(h.node()); err != nil {
		return nil, fmt.Errorf("encoding the draft's header: %w", err)
	}
	_ = enc.Close()
	ar.Comment = hdr.Bytes()
	return txtar.Format(ar), nil
}

type recHeader struct {
	Description string           `yaml:"description"`
	Turns       []recTurn        `yaml:"turns"`
	Actions     []map[string]any `yaml:"actions"`
	Expect      map[string]any   `yaml:"expect"`
}

type recTurn struct {
	Text      string    `yaml:"text,omitempty"`
	ToolCalls []recCall `yaml:"toolCalls,omitempty"`
}

type recCall struct {
	Name         string         `yaml:"name"`
	Arguments    map[string]any `yaml:"arguments,omitempty"`
	ArgumentsRaw string         `yaml:"argumentsRaw,omitempty"`
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60])
	}
	return strings.TrimSpace(s)
}

func ensureNL(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// node builds the header's YAML by hand: yaml.v3 writes strings holding
// tabs as block scalars it cannot read back, so those are double-quoted.
func (h recHeader) node() *yaml.Node {
	turns := &yaml.Node{Kind: yaml.SequenceNode}
	for _, t := range h.Turns {
		m := &yaml.Node{Kind: yaml.MappingNode}
		if t.Text != "" {
			m.Content = append(m.Content, strNode("text"), strNode(t.Text))
		}
		if len(t.ToolCalls) > 0 {
			calls := &yaml.Node{Kind: yaml.SequenceNode}
			for _, c := range t.ToolCalls {
				cm := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{strNode("name"), strNode(c.Name)}}
				if c.ArgumentsRaw != "" {
					cm.Content = append(cm.Content, strNode("argumentsRaw"), strNode(c.ArgumentsRaw))
				} else {
					cm.Content = append(cm.Content, strNode("arguments"), anyNode(c.Arguments))
				}
				calls.Content = append(calls.Content, cm)
			}
			m.Content = append(m.Content, strNode("toolCalls"), calls)
		}
		turns.Content = append(turns.Content, m)
	}
	actions := &yaml.Node{Kind: yaml.SequenceNode}
	for _, a := range h.Actions {
		actions.Content = append(actions.Content, anyNode(a))
	}
	return &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		strNode("description"), strNode(h.Description),
		strNode("turns"), turns,
		strNode("actions"), actions,
		strNode("expect"), anyNode(h.Expect),
	}}
}

func strNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.Contains(s, "\t") {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// anyNode converts JSON-like values (maps with sorted keys).
func anyNode(v any) *yaml.Node {
	switch x := v.(type) {
	case string:
		return strNode(x)
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(x)}
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(x)}
	case float64:
		if x == float64(int64(x)) {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(int64(x))}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: fmt.Sprint(x)}
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case []string:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, e := range x {
			n.Content = append(n.Content, strNode(e))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range x {
			n.Content = append(n.Content, anyNode(e))
		}
		return n
	case map[string]int:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range sortedKeys(x) {
			n.Content = append(n.Content, strNode(k), anyNode(x[k]))
		}
		return n
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range sortedKeys(x) {
			n.Content = append(n.Content, strNode(k), anyNode(x[k]))
		}
		return n
	}
	n := &yaml.Node{}
	_ = n.Encode(v)
	return n
}
