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
	var notes []string
	if torn {
		notes = append(notes, "the journal ends with a torn record (the server stopped mid-write); the draft stops before it")
	}
	type started struct {
		Question  string
		File      string
		Selection *struct{ StartLine, EndLine int }
	}
	type finishedRec struct {
		State, Error, Class string
	}
	var (
		st       started
		turns    []recTurn
		edits    []string // edit ids in order
		accepted = map[string]bool{}
		fin      *finishedRec
		files    []string
		seen     = map[string]bool{}
		created  = map[string]bool{}
		edited   = map[string][][2]string{} // path → (oldText, newText)
		lastText string
		tools    []string
		toolSeen = map[string]bool{}
	)
	addFile := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, rec := range recs {
		switch rec.Type {
		case checkpoint.RecRunStarted:
			_ = json.Unmarshal(rec.Data, &st)
			addFile(st.File)
		case checkpoint.RecModelResult:
			var resp model.Response
			if err := json.Unmarshal(rec.Data, &resp); err != nil {
				notes = append(notes, fmt.Sprintf("step %d: unreadable model result: %v", rec.Step, err))
				continue
			}
			t := recTurn{Text: redact.Default().String(resp.Text)}
			lastText = resp.Text
			for _, tc := range resp.ToolCalls {
				c := recCall{Name: tc.Name}
				var args map[string]any
				if json.Unmarshal([]byte(redact.Default().String(tc.Arguments)), &args) == nil {
					c.Arguments = args
					if p, ok := args["path"].(string); ok {
						oldT, _ := args["oldText"].(string)
						newT, _ := args["newText"].(string)
						if tc.Name == "edit_file" {
							if oldT == "" {
								created[p] = true
							} else {
								edited[p] = append(edited[p], [2]string{oldT, newT})
							}
						}
						if tc.Name == "read_file" || tc.Name == "edit_file" || tc.Name == "get_diagnostics" {
							addFile(p)
						}
					}
				} else {
					c.ArgumentsRaw = redact.Default().String(tc.Arguments)
				}
				t.ToolCalls = append(t.ToolCalls, c)
				if !toolSeen[tc.Name] {
					toolSeen[tc.Name] = true
					tools = append(tools, tc.Name)
				}
			}
			turns = append(turns, t)
		case checkpoint.RecEdit:
			var e struct{ EditID string }
			_ = json.Unmarshal(rec.Data, &e)
			edits = append(edits, e.EditID)
		case checkpoint.RecEditState:
			var e struct{ EditID, State string }
			_ = json.Unmarshal(rec.Data, &e)
			if e.State == "accepted" {
				accepted[e.EditID] = true
			}
		case checkpoint.RecFinished:
			fin = &finishedRec{}
			_ = json.Unmarshal(rec.Data, fin)
		}
	}
	if len(recs) == 0 || st.Question == "" {
		return nil, nil, fmt.Errorf("the journal of %s has no run_started record", o.RunID)
	}

	// The workspace: the files the run touched, as they are now.
	ar := &txtar.Archive{}
	red := redact.Default()
	sort.Strings(files)
	for _, rel := range files {
		if created[rel] {
			notes = append(notes, fmt.Sprintf("%s was created by the run: left out of the workspace", rel))
			continue
		}
		abs, err := ws.Resolve(rel)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v (left out)", rel, err))
			continue
		}
		b, err := os.ReadFile(abs)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v (left out)", rel, err))
			continue
		}
		text := string(b)
		// An accepted edit is on disk now: put the text the run started from back.
		for i := len(edited[rel]) - 1; i >= 0; i-- {
			oldT, newT := edited[rel][i][0], edited[rel][i][1]
			if newT != "" && newT != oldT && strings.Count(text, newT) == 1 && (strings.Contains(newT, oldT) || !strings.Contains(text, oldT)) {
				text = strings.Replace(text, newT, oldT, 1)
				notes = append(notes, fmt.Sprintf("%s holds an accepted edit: the draft reverts it to the text the run started from; check it", rel))
			}
		}
		masked, findings := red.Redact(text)
		if len(findings) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d secret(s) masked", rel, len(findings)))
		}
		ar.Files = append(ar.Files, txtar.File{Name: rel, Data: []byte(ensureNL(masked))})
	}

	// The header.
	h := recHeader{
		Description: fmt.Sprintf("Recorded from run %s. TODO: say what this case checks, then tighten the expectations.", o.RunID),
		Turns:       turns,
	}
	if st.File != "" {
		h.Actions = append(h.Actions, map[string]any{"open": st.File})
	}
	ask := map[string]any{"file": st.File, "question": red.String(st.Question)}
	if s := st.Selection; s != nil && s.StartLine > 0 {
		ask["lines"] = fmt.Sprintf("%d-%d", s.StartLine, s.EndLine)
	}
	h.Actions = append(h.Actions, map[string]any{"ask": ask})
	for i, id := range edits {
		if accepted[id] {
			h.Actions = append(h.Actions, map[string]any{"accept": map[string]any{"edit": i + 1}})
		}
	}
	if len(accepted) == 0 && len(edits) > 0 {
		notes = append(notes, "no accepted edit in the journal: add `accept: {}` if the user accepted (edit states after the end of a run may be missing from the journal)")
	}
	x := map[string]any{}
	if fin != nil {
		switch fin.State {
		case "finished":
			x["final"] = "finished"
			if line := firstLine(lastText); line != "" {
				x["answerContains"] = []string{red.String(line)}
			}
		case "failed":
			x["final"] = "failed"
			x["class"] = fin.Class
		default:
			x["final"] = fin.State
			notes = append(notes, fmt.Sprintf("the run ended %s: add the action that caused it (cancel, kill)", fin.State))
		}
	} else {
		notes = append(notes, "the run has no run_finished record (interrupted): the expectations are a guess")
	}
	if len(tools) > 0 {
		x["toolCalls"] = map[string]any{"made": tools}
	}
	if len(edits) > 0 {
		x["events"] = map[string]any{"count": map[string]int{"editProposed": len(edits)}}
	}
	h.Expect = x
	for _, t := range tools {
		switch t {
		case "list_files", "search_code", "repo_map", "run_command":
			notes = append(notes, fmt.Sprintf("the run called %s: the draft's workspace holds only the files the run asked about, read or edited; add the others its results depend on", t))
		}
	}
	notes = append(notes, "model errors that were retried (rate limits, context overflow) are not journaled: add their turns by hand if the case needs them")

	var hdr bytes.Buffer
	fmt.Fprintf(&hdr, "# Draft case recorded by `cairn eval record %s`: review it before adding it to evals/cases.\n", o.RunID)
	for _, n := range notes {
		fmt.Fprintf(&hdr, "# NOTE: %s\n", n)
	}
	enc := yaml.NewEncoder(&hdr)
	enc.SetIndent(2)
	if err := enc.Encode(h.node()); err != nil {
		return nil, nil, err
	}
	_ = enc.Close()
	ar.Comment = hdr.Bytes()
	out := txtar.Format(ar)
	// The draft must parse as a case.
	if _, err := ParseCase(o.RunID, out); err != nil {
		return out, append(notes, "the draft does not parse as a case: "+err.Error()), nil
	}
	return out, notes, nil
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
