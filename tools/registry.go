// Package tools is the registry of what the model can do: each tool declares
// its JSON Schema, risk, timeout, output policy and side effects, and every
// call passes the same pipeline (schema ▶ risk ▶ policy/approval ▶ audit ▶
// run with timeout ▶ output policy). Invalid model input is returned to the
// model as an error result; only infrastructure failures are Go errors.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/workspace"
)

// Risk is how dangerous a call is. Ordered: read < write < network < install < destructive.
type Risk string

const (
	RiskRead        Risk = "read"
	RiskWrite       Risk = "write"
	RiskNetwork     Risk = "network"
	RiskInstall     Risk = "install"
	RiskDestructive Risk = "destructive"
)

var riskOrder = map[Risk]int{RiskRead: 0, RiskWrite: 1, RiskNetwork: 2, RiskInstall: 3, RiskDestructive: 4}

// Rank orders risks; unknown risks rank as destructive.
func (r Risk) Rank() int {
	if n, ok := riskOrder[r]; ok {
		return n
	}
	return 4
}

// Tool is one registered capability.
type Tool struct {
	Name        string
	Description string          // model-facing, kept beside the code
	Schema      json.RawMessage // JSON Schema of the input object
	Risk        Risk            // static risk; Classify may refine it per input
	// Classify, when set, decides the risk of one input and describes it for
	// the approval prompt (e.g. the exact command, the packages installed).
	Classify func(input json.RawMessage) (Risk, string)
	// Explain, when set, describes one input for the gate in full: the
	// risk and detail Classify would give, and for a command line each of
	// its commands with its own risk (the policy decides each, the prompt
	// shows each) and any text the model wrote for the user.
	Explain func(input json.RawMessage) ApprovalRequest
	Timeout time.Duration
	// MaxOutputBytes caps what goes back to the model (head and tail kept).
	MaxOutputBytes int
	// SideEffects marks tools whose effects outlive the run (commands,
	// network, MCP calls): on resume, such a call with no recorded result is
	// never replayed.
	SideEffects bool
	Idempotent  bool
	Run         func(ctx context.Context, env *Env, input json.RawMessage) (Result, error)

	schema *inputSchema
}

// Result is what a call produced.
type Result struct {
	// Content goes back to the model.
	Content string
	// IsError marks a failure the model should see and react to.
	IsError bool
	// Summary is a one-line description for the editor (toolResult event).
	Summary string
	// Change is the file change a write tool proposes.
	Change *FileChange
	// Truncated says the output policy cut the content.
	Truncated bool
	// Plan is the whole plan the model just showed (update_plan): the run
	// sends it to the editor as a plan event.
	Plan []PlanEntry
}

// FileChange is a proposed change of one file (never written by the tool).
type FileChange struct {
	Abs        string
	Rel        string
	Before     string
	BeforeOK   bool // the file existed before
	After      string
	Delete     bool
	Created    bool
	Diagnostic string
	// Protected says why Rel is a protected path (workspace.Protected);
	// set only on a change whose call was confirmed as a protected edit.
	Protected string
}

// DiagnosticsSource serves the diagnostics the editor forwarded.
type DiagnosticsSource interface {
	// Diagnostics returns diagnostics for abs, or for every file when abs is "".
	Diagnostics(abs string) []workspace.Diagnostic
}

// Env is what a tool call may touch.
type Env struct {
	WS          *workspace.Workspace
	Drafts      *workspace.Drafts
	Diagnostics DiagnosticsSource
	Index       codeindex.Index // the code index (search_code, repo_map); nil: none
	RunID       string
}

// Registry holds the tools offered to the model.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{tools: map[string]*Tool{}} }

// Register adds a tool after compiling its schema.
func (r *Registry) Register(t *Tool) error {
	is, err := compileSchema(t.Schema)
	if err != nil {
		return fmt.Errorf("registering tool %s: %w", t.Name, err)
	}
	t.schema = is
	if t.Timeout == 0 {
		t.Timeout = 30 * time.Second
	}
	if t.MaxOutputBytes == 0 {
		t.MaxOutputBytes = 32 << 10
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools[t.Name] = t
	return nil
}

// Unregister removes a tool (an MCP server that died).
func (r *Registry) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tools, name)
}

// Get returns a tool by name.
func (r *Registry) Get(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names lists the registered tool names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.tools))
	for n := range r.tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Specs returns the model-facing specs, sorted by name.
func (r *Registry) Specs() []model.ToolSpec {
	var out []model.ToolSpec
	for _, n := range r.Names() {
		t, _ := r.Get(n)
		out = append(out, model.ToolSpec{Name: t.Name, Description: t.Description, Schema: t.Schema})
	}
	return out
}

// Validate checks raw model arguments against the tool's schema. The error
// text is written for the model: every violation, then the expected input,
// so that one more turn can get the call right.
func (t *Tool) Validate(raw string) (json.RawMessage, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = "{}"
	}
	var inst any
	if err := json.Unmarshal([]byte(raw), &inst); err != nil {
		return nil, fmt.Errorf("the arguments of %s are not valid JSON (%v); send a JSON object matching the tool's schema.%s", t.Name, err, t.expected())
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the arguments of %s must be a JSON object.%s", t.Name, t.expected())
	}
	if v := t.schema.validate(obj); len(v) > 0 {
		return nil, fmt.Errorf("the arguments of %s do not match its schema:\n- %s\n%s", t.Name, strings.Join(v, "\n- "), strings.TrimSpace(t.expected()))
	}
	return json.RawMessage(raw), nil
}

// expected describes the tool's input for an error message.
func (t *Tool) expected() string {
	if t.schema == nil || t.schema.compact == "" {
		return ""
	}
	return "\nExpected input (JSON Schema): " + t.schema.compact
}

// RiskOf returns the risk of one validated input, with a description for
// the approval prompt.
func (t *Tool) RiskOf(input json.RawMessage) (Risk, string) {
	if t.Classify != nil {
		return t.Classify(input)
	}
	if t.Explain != nil {
		req := t.Explain(input)
		return req.Risk, req.Detail
	}
	return t.Risk, ""
}

// Request returns what the gate decides on for one validated input (the
// caller sets RunID and CallID).
func (t *Tool) Request(input json.RawMessage) ApprovalRequest {
	if t.Explain != nil {
		req := t.Explain(input)
		req.Tool = t.Name
		return req
	}
	risk, detail := t.RiskOf(input)
	return ApprovalRequest{Tool: t.Name, Risk: risk, Detail: detail}
}

// Invoke runs a validated input under the tool's timeout and output policy.
func (t *Tool) Invoke(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	res, err := t.Run(ctx, env, input)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return Result{Content: fmt.Sprintf("%s timed out after %s", t.Name, t.Timeout), IsError: true, Summary: "timed out"}, nil
		}
		return res, err
	}
	res.Content, res.Truncated = CapOutput(res.Content, t.MaxOutputBytes)
	return res, nil
}

// CapOutput keeps the head and tail of s within max bytes, with a note in the
// middle saying how much was cut.
func CapOutput(s string, max int) (string, bool) {
	if max <= 0 || len(s) <= max {
		return s, false
	}
	head := max * 2 / 3
	tail := max - head
	// avoid splitting UTF-8 sequences
	for head > 0 && head < len(s) && s[head]&0xC0 == 0x80 {
		head--
	}
	start := len(s) - tail
	for start < len(s) && s[start]&0xC0 == 0x80 {
		start++
	}
	cut := start - head
	return s[:head] + fmt.Sprintf("\n[... %d bytes cut by the output policy ...]\n", cut) + s[start:], true
}
