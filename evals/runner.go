package evals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/workspace"
)

// Failure types, the groups of the report.
const (
	FailWrongAnswer     = "wrong answer"
	FailWrongEdit       = "wrong edit"
	FailMissingContext  = "missing context"
	FailPolicyViolation = "policy violation"
	FailCrash           = "crash"
	FailTimeout         = "timeout"
	FailInvalidToolCall = "invalid tool call"
	FailBadCase         = "bad case"
)

// Status of a case result.
const (
	StatusPass = "pass"
	StatusFail = "fail"
	StatusSkip = "skip"
)

var approvalTitles = map[string]string{
	"allow_once":    protocol.ActionAllowOnce,
	"allow_session": protocol.ActionAllowSession,
	"deny":          protocol.ActionDeny,
	"dismiss":       "",
}

// Options configure a run of the runner.
type Options struct {
	// Parallel is how many cases run at once (default GOMAXPROCS).
	Parallel int
	// Timeout bounds each case unless the case sets its own (default 60s).
	Timeout time.Duration
	// Real configures the model of `provider: real` cases; when its
	// Provider is empty (and CAIRN_PROVIDER is unset) they are skipped.
	Real RealProvider
	// Getenv reads the environment for real-provider cases (os.Getenv when nil).
	Getenv func(string) string
	// ServerCommand starts `cairn serve` as a process, for the cases that
	// kill the server and resume (e.g. {os.Executable(), "serve"}); other
	// cases run the server in process. ServerEnv is added to its environment.
	ServerCommand []string
	ServerEnv     []string
	// EchoMCP starts the echo MCP server (ServeEchoMCP) for cases whose
	// mcpServers settings name `evalServer: echo`.
	EchoMCP *MCPCommand
	// OnModelRequest, when set, sees every request the scripted model of
	// an in-process case gets, in order, with the case's name (the prompt
	// cache benchmark replays them against a provider's cache rules).
	OnModelRequest func(caseName string, req model.Request)
}

// observed is a provider that shows each request to a callback first.
type observed struct {
	model.Provider
	see func(model.Request)
}

func (o observed) Stream(ctx context.Context, req model.Request, onText func(string)) (*model.Response, error) {
	o.see(req)
	return o.Provider.Stream(ctx, req, onText)
}

// RealProvider is the model a `provider: real` case runs against.
type RealProvider struct {
	Provider string // openai, anthropic
	Model    string
	BaseURL  string
}

// Failure is one failed expectation.
type Failure struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Result is the outcome of one case.
type Result struct {
	Name       string    `json:"name"`
	Path       string    `json:"path,omitempty"`
	Status     string    `json:"status"`
	SkipReason string    `json:"skipReason,omitempty"`
	Scripted   bool      `json:"scripted"`
	Type       string    `json:"failureType,omitempty"` // the first failure's type
	Failures   []Failure `json:"failures,omitempty"`

	Runs         int     `json:"runs"`
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	Steps        int     `json:"steps"`
	ModelCalls   int     `json:"modelCalls"`
	LatencyMS    float64 `json:"latencyMs"` // ask to terminal event, summed over runs
	DurationMS   float64 `json:"durationMs"`
	// Transcript is the case's events, normalized (ids replaced by
	// placeholders) so that two runs of a case can be compared.
	Transcript []string `json:"transcript,omitempty"`
}

// Tokens is input plus output tokens.
func (r *Result) Tokens() int { return r.InputTokens + r.OutputTokens }

func (r *Result) fail(typ, format string, a ...any) {
	r.Failures = append(r.Failures, Failure{Type: typ, Message: fmt.Sprintf(format, a...)})
}

// RunCases runs the cases, opts.Parallel at a time, and returns the report.
func RunCases(ctx context.Context, cases []*Case, opts Options) *Report {
	par := opts.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	results := make([]Result, len(cases))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = RunCase(ctx, c, opts)
		}()
	}
	wg.Wait()
	return NewReport(results, time.Since(start))
}

// RunCase runs one case against a fresh server and workspace.
func RunCase(ctx context.Context, c *Case, opts Options) (res Result) {
	res = Result{Name: c.Name, Path: c.Path, Scripted: c.Scripted()}
	start := time.Now()
	defer func() {
		res.DurationMS = ms(time.Since(start))
		if p := recover(); p != nil {
			res.fail(FailCrash, "the harness panicked: %v", p)
		}
		switch {
		case res.Status == StatusSkip:
		case len(res.Failures) > 0:
			res.Status = StatusFail
			res.Type = res.Failures[0].Type
			// A crash or a timeout explains the other failures.
			for _, f := range res.Failures {
				if f.Type == FailCrash || f.Type == FailTimeout {
					res.Type = f.Type
					break
				}
			}
		default:
			res.Status = StatusPass
		}
	}()
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	if c.Timeout > 0 {
		timeout = time.Duration(c.Timeout)
	}
	// Setting up (writing the workspace, starting and initializing the
	// server) has its own bound: a case's timeout is about its run, and a
	// loaded machine must not turn a slow start into a failed case.
	sctx, scancel := context.WithTimeout(ctx, max(timeout, setupTimeout))
	defer scancel()
	h, err := newHarness(sctx, c, opts)
	if err != nil {
		if errors.Is(err, errSkip) {
			res.Status, res.SkipReason = StatusSkip, strings.TrimPrefix(err.Error(), errSkip.Error()+": ")
			return res
		}
		res.fail(FailBadCase, "setup: %v", err)
		return res
	}
	defer h.close()
	cctx, cancel := context.WithTimeout(sctx, timeout)
	defer cancel()
	h.ctx = cctx
	h.res = &res
	h.runActions()
	h.waitAll()
	h.collect()
	if cctx.Err() != nil && ctx.Err() == nil {
		res.Failures = append([]Failure{{Type: FailTimeout, Message: fmt.Sprintf("the case did not finish within %s", timeout)}}, res.Failures...)
		return res
	}
	check(c, h, &res)
	return res
}

var errSkip = errors.New("skipped")

// setupTimeout bounds a case's setup (see runCase).
const setupTimeout = 2 * time.Minute

// harness is one case in progress.
type harness struct {
	ctx      context.Context
	c        *Case
	opts     Options
	root     string // temporary directory: ws/, .state/, scripts
	ws       string // the workspace
	state    string
	settings map[string]any
	sopts    server.Options
	provider *model.Scripted // in-process scripted cases
	res      *Result

	mu          sync.Mutex
	srv         *serverConn
	servers     int
	past        map[string][]protocol.RunEvent // events seen by editors of killed servers
	pastPrompts []string
	resumed     map[string]bool
	approvalsN  int
	runs        []string // run ids in ask order
	askTimes    map[string]time.Time
	endTimes    map[string]time.Time
	checkpoints []string
	initial     map[string]string
}

// serverConn is one server and the editor connected to it.
type serverConn struct {
	ed     *lspclient.Editor
	done   chan error // the server's end
	stop   func()     // after the editor closed: make the server go away
	kill   func()     // process servers: SIGKILL
	stderr *tailBuffer
}

func newHarness(ctx context.Context, c *Case, opts Options) (*harness, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	settings, err := deepCopySettings(c.Settings, opts.EchoMCP)
	if err != nil {
		return nil, err
	}
	h := &harness{ctx: ctx, c: c, opts: opts, settings: settings, past: map[string][]protocol.RunEvent{},
		resumed: map[string]bool{}, askTimes: map[string]time.Time{}, endTimes: map[string]time.Time{}, initial: map[string]string{}}
	if c.needsProcess() && len(opts.ServerCommand) == 0 {
		return nil, fmt.Errorf("the case kills the server: it needs a server process (Options.ServerCommand; `cairn eval` sets it)")
	}
	if c.Scripted() && !c.needsProcess() {
		script, err := copyScript(c.Turns)
		if err != nil {
			return nil, err
		}
		h.provider = model.NewScripted(script)
		h.sopts.Provider = h.provider
		if see := opts.OnModelRequest; see != nil {
			name := c.Name
			h.sopts.Provider = observed{h.provider, func(r model.Request) { see(name, r) }}
		}
	} else if !c.Scripted() {
		rp := opts.Real
		if rp.Provider == "" {
			rp.Provider = getenv("CAIRN_PROVIDER")
		}
		if rp.Provider == "" || rp.Provider == "scripted" {
			return nil, fmt.Errorf("%w: no real provider configured (--provider or CAIRN_PROVIDER)", errSkip)
		}
		m, _ := h.settings["model"].(map[string]any) // the case's own model settings (contextWindow, …) stay
		if m == nil {
			m = map[string]any{}
		}
		m["provider"] = rp.Provider
		if rp.Model != "" {
			m["name"] = rp.Model
		}
		if rp.BaseURL != "" {
			m["baseURL"] = rp.BaseURL
		}
		h.settings["model"] = m
	}
	root, err := os.MkdirTemp("", "cairn-eval-"+c.Name+"-")
	if err != nil {
		return nil, err
	}
	h.root = root
	h.state = filepath.Join(root, ".state") // outside the workspace
	h.ws = filepath.Join(root, "ws")
	if err := h.writeWorkspace(); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(h.ws); err == nil {
		h.ws = real
	}
	state := h.state
	h.sopts.Getenv = func(k string) string {
		if k == "CAIRN_STATE_DIR" {
			return state
		}
		if c.Scripted() {
			return "" // scripted cases see nothing of the host environment
		}
		return getenv(k)
	}
	srv, err := h.start(c.Turns)
	if err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	h.srv = srv
	return h, nil
}

// needsProcess reports whether the case kills the server, which takes a
// server in its own process.
func (c *Case) needsProcess() bool {
	for _, a := range c.Actions {
		if a.name == "kill" {
			return true
		}
	}
	return false
}

// copyScript returns a fresh copy of turns: the scripted provider
// normalizes argument values in place, and a case may run several times at
// once.
func copyScript(turns []model.ScriptTurn) (*model.Script, error) {
	b, err := json.Marshal(model.Script{Turns: turns})
	if err != nil {
		return nil, err
	}
	return model.ParseScript(b)
}

func (h *harness) writeWorkspace() error {
	if err := os.MkdirAll(h.ws, 0o755); err != nil {
		return err
	}
	for name, data := range h.c.Files {
		p := filepath.Join(h.ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			return err
		}
		h.initial[name] = data
	}
	return nil
}

// start starts a server (in process, or as a process when the case kills
// it; turns then script its model) and connects an editor.
func (h *harness) start(turns []model.ScriptTurn) (*serverConn, error) {
	edOpts := lspclient.Options{
		Approve:           h.approve,
		NoDocumentChanges: h.c.Editor.NoDocumentChanges,
		RejectApplyEdit:   h.c.Editor.RejectApplyEdit,
	}
	if len(h.settings) > 0 {
		edOpts.Settings = h.settings
	}
	var (
		sc  *serverConn
		rwc io.ReadWriteCloser
		err error
	)
	if h.c.needsProcess() {
		h.servers++
		sc, rwc, err = h.startProcess(turns, h.servers)
		if err != nil {
			return nil, err
		}
	} else {
		sctx, cancel := context.WithCancel(context.Background())
		serverEnd, clientEnd := net.Pipe()
		sc = &serverConn{done: make(chan error, 1), stop: cancel}
		go func() { sc.done <- server.Serve(sctx, serverEnd, serverEnd, h.sopts) }()
		rwc = clientEnd
	}
	ed, err := lspclient.Connect(h.ctx, rwc, h.ws, edOpts)
	if err != nil {
		rwc.Close()
		sc.stop()
		return nil, fmt.Errorf("connecting to the server: %w%s", err, sc.stderr.tail())
	}
	sc.ed = ed
	// The context a question gets depends on what is indexed; wait for the
	// initial indexing so a case sees the same context every time.
	wctx, wcancel := context.WithTimeout(h.ctx, 2*time.Minute)
	_ = ed.WaitProgressEnd(wctx, "search index")
	wcancel()
	return sc, nil
}

func (h *harness) approve(message string, actions []string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := h.approvalsN
	h.approvalsN++
	if i < len(h.c.Approvals) {
		return approvalTitles[h.c.Approvals[i]]
	}
	return protocol.ActionDeny
}

func (h *harness) close() {
	if srv := h.server(); srv != nil {
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.ed.Close(cctx)
		ccancel()
		srv.stop()
		select {
		case <-srv.done:
		case <-time.After(5 * time.Second):
		}
	}
	os.RemoveAll(h.root)
}

// server returns the current server (nil after a kill).
func (h *harness) server() *serverConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.srv
}

// editor returns the current editor.
func (h *harness) editor() *lspclient.Editor {
	if srv := h.server(); srv != nil {
		return srv.ed
	}
	return nil
}

// events returns a run's events, across server restarts.
func (h *harness) events(id string) []protocol.RunEvent {
	h.mu.Lock()
	evs := append([]protocol.RunEvent(nil), h.past[id]...)
	srv := h.srv
	h.mu.Unlock()
	if srv != nil {
		evs = append(evs, srv.ed.Events(id)...)
	}
	return evs
}

// prompts returns the approval prompts shown, across server restarts.
func (h *harness) prompts() []string {
	h.mu.Lock()
	out := append([]string(nil), h.pastPrompts...)
	srv := h.srv
	h.mu.Unlock()
	if srv != nil {
		out = append(out, srv.ed.Prompts()...)
	}
	return out
}

// ended reports whether a run is over: a terminal event other than
// interrupted, or interrupted when the run will not be resumed.
func (h *harness) ended(id string, evs []protocol.RunEvent) bool {
	h.mu.Lock()
	resumed, dead := h.resumed[id], h.srv == nil
	h.mu.Unlock()
	if dead {
		return true // nothing more will come until a resume
	}
	for _, ev := range evs {
		if lspclient.IsTerminal(ev.Kind) && (ev.Kind != protocol.EventInterrupted || !resumed) {
			return true
		}
	}
	return false
}

// lastTerminal returns the run's last terminal event.
func lastTerminal(evs []protocol.RunEvent) protocol.RunEvent {
	var out protocol.RunEvent
	for _, ev := range evs {
		if lspclient.IsTerminal(ev.Kind) {
			out = ev
		}
	}
	return out
}

// current returns the latest run id ("" before any ask).
func (h *harness) current() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.runs) == 0 {
		return ""
	}
	return h.runs[len(h.runs)-1]
}

// actionFailure classifies an action that went wrong.
func (h *harness) actionFailure(i int, a *Action, err error) {
	typ := FailCrash
	switch {
	case h.ctx.Err() != nil:
		typ = FailTimeout
	case a.name == "accept" || a.name == "reject" || a.name == "undo" || a.name == "edit" || a.name == "type":
		typ = FailWrongEdit
	}
	h.res.fail(typ, "action %d (%s): %v", i+1, a.name, err)
}

func (h *harness) runActions() {
	for i := range h.c.Actions {
		a := &h.c.Actions[i]
		if err := h.do(a); err != nil {
			h.actionFailure(i, a, err)
			h.cancelRuns()
			return
		}
	}
}

// cancelRuns cancels the runs still going (after an action failed, the
// rest of the case will not come to end them).
func (h *harness) cancelRuns() {
	h.mu.Lock()
	runs := append([]string(nil), h.runs...)
	h.mu.Unlock()
	ed := h.editor()
	for _, id := range runs {
		if ed != nil && !h.ended(id, h.events(id)) {
			_ = ed.Cancel(h.ctx, id)
		}
	}
}

func expectErr(err error, want string) error {
	if want == "" {
		return err
	}
	if err == nil {
		return fmt.Errorf("succeeded; want an error mentioning %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		return fmt.Errorf("error %q does not mention %q", err, want)
	}
	return nil
}

// do runs one action of the case.
func (h *harness) do(a *Action) error {
	ctx, ed := h.ctx, h.editor()
	switch a.name {
	case "kill":
		return h.kill()
	case "resume":
		return h.resume()
	}
	if ed == nil {
		return errors.New("the server was killed: only resume can follow")
	}
	switch a.name {
	case "open":
		return ed.Open(ctx, a.Open)
	case "save":
		return ed.Save(ctx, a.Save)
	case "sleep":
		return sleepCtx(ctx, time.Duration(a.Sleep))
	case "waitFile":
		return h.waitFile(a.WaitFile)
	case "type":
		return typeText(ctx, ed, a.Type)
	case "edit":
		return editText(ctx, ed, a.Edit)
	case "diagnostics":
		var items []workspace.Diagnostic
		for _, d := range a.Diagnostics.Items {
			items = append(items, d.Diagnostic(a.Diagnostics.File))
		}
		return ed.SendDiagnostics(ctx, a.Diagnostics.File, items)
	case "ask":
		return h.ask(ed, a.Ask)
	case "codeAction":
		h.waitCurrent()
		return h.codeAction(a.CodeAction)
	case "wait":
		id := h.current()
		if id == "" {
			return errors.New("no run to wait for")
		}
		_, err := ed.WaitFor(ctx, id, h.waitCond(id, a.Wait, true))
		return err
	case "cancel":
		return h.cancel(ed, a.Cancel)
	case "accept":
		return h.accept(ed, a.Accept)
	case "reject":
		id, err := h.editID(a.Reject.Edit)
		if err != nil {
			return err
		}
		return expectErr(ed.Reject(ctx, id), a.Reject.ExpectError)
	case "undo":
		return h.undo(ed, a.Undo)
	}
	return fmt.Errorf("unknown action %q", a.name)
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitFile waits until a file exists in the workspace and holds something
// (a command's side effect). Existence alone is not enough: `echo x >> f`
// creates f before it writes, and a kill between the two would leave the
// empty file the case did not mean to test.
func (h *harness) waitFile(rel string) error {
	p := filepath.Join(h.ws, filepath.FromSlash(rel))
	for {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
			return nil
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-h.ctx.Done():
			return fmt.Errorf("%s never appeared: %w", rel, h.ctx.Err())
		}
	}
}

// typeText replaces (or appends to) the editor's text of a file.
func typeText(ctx context.Context, ed *lspclient.Editor, t *TypeAction) error {
	text := t.Text
	if t.Append {
		cur, err := ed.Text(t.File)
		if err != nil {
			return err
		}
		text = cur + text
	}
	return ed.Type(ctx, t.File, text)
}

// editText replaces the first occurrence of e.Old in the editor's text of
// a file with e.New.
func editText(ctx context.Context, ed *lspclient.Editor, e *EditAction) error {
	cur, err := ed.Text(e.File)
	if err != nil {
		return err
	}
	i := strings.Index(cur, e.Old)
	if i < 0 || e.Old == "" {
		return fmt.Errorf("%q not found in %s", e.Old, e.File)
	}
	m := workspace.NewMapper(cur)
	s, end := m.Position(i), m.Position(i+len(e.Old))
	return ed.EditRange(ctx, e.File, protocol.Range{Start: s, End: end}, e.New)
}

// ask starts a run, once the current one has ended.
func (h *harness) ask(ed *lspclient.Editor, a *AskAction) error {
	h.waitCurrent()
	from, to, err := parseLines(a.Lines)
	if err != nil {
		return err
	}
	t0 := time.Now()
	id, err := ed.Ask(h.ctx, a.File, from, to, a.Question)
	if a.ExpectError != "" {
		return expectErr(err, a.ExpectError)
	}
	if err != nil {
		return err
	}
	h.addRun(id, t0)
	return nil
}

// cancel cancels the current run, after the events w waits for if any.
func (h *harness) cancel(ed *lspclient.Editor, w *WaitAction) error {
	id := h.current()
	if id == "" {
		return errors.New("no run to cancel")
	}
	if w.Events > 0 || w.Kind != "" {
		if _, err := ed.WaitFor(h.ctx, id, h.waitCond(id, w, false)); err != nil {
			return err
		}
	}
	return ed.Cancel(h.ctx, id)
}

// accept accepts an edit and checks whether it was applied; an applied
// edit's checkpoint is kept for undo.
func (h *harness) accept(ed *lspclient.Editor, ref *EditRefAction) error {
	id, err := h.editID(ref.Edit)
	if err != nil {
		return err
	}
	res, err := ed.Accept(h.ctx, id)
	if ref.ExpectError != "" {
		return expectErr(err, ref.ExpectError)
	}
	if err != nil {
		return err
	}
	want := true
	if ref.ExpectApplied != nil {
		want = *ref.ExpectApplied
	}
	if res.Applied != want {
		return fmt.Errorf("applied = %v (reason %q), want %v", res.Applied, res.Reason, want)
	}
	if res.Applied {
		h.mu.Lock()
		h.checkpoints = append(h.checkpoints, res.CheckpointID)
		h.mu.Unlock()
	}
	return nil
}

// undo undoes to a checkpoint (by default the last).
func (h *harness) undo(ed *lspclient.Editor, u *UndoAction) error {
	h.mu.Lock()
	cps := append([]string(nil), h.checkpoints...)
	h.mu.Unlock()
	n := u.Checkpoint
	if n == 0 {
		n = len(cps)
	}
	if n < 1 || n > len(cps) {
		return fmt.Errorf("checkpoint %d: the case has %d", n, len(cps))
	}
	var res protocol.UndoResult
	err := ed.Execute(h.ctx, protocol.CommandUndo, protocol.UndoParams{CheckpointID: cps[n-1], Force: u.Force}, &res)
	if u.ExpectError != "" {
		return expectErr(err, u.ExpectError)
	}
	if err != nil {
		return err
	}
	if !res.Applied {
		return fmt.Errorf("undo not applied: %+v", res)
	}
	return nil
}

func (h *harness) waitCond(id string, w *WaitAction, endDefault bool) func([]protocol.RunEvent) bool {
	return func([]protocol.RunEvent) bool {
		evs := h.events(id)
		if h.ended(id, evs) {
			return true // nothing more will come
		}
		switch {
		case w.Events > 0:
			return len(evs) >= w.Events
		case w.Kind != "":
			for _, ev := range evs {
				if ev.Kind == w.Kind {
					return true
				}
			}
			return false
		}
		return !endDefault
	}
}

func (h *harness) addRun(id string, t0 time.Time) {
	h.mu.Lock()
	h.runs = append(h.runs, id)
	h.askTimes[id] = t0
	h.mu.Unlock()
	go h.waitRun(id) // records when the run ends, for its latency
}

// waitCurrent waits for the current run to end (asks run one at a time).
func (h *harness) waitCurrent() {
	if id := h.current(); id != "" {
		h.waitRun(id)
	}
}

func (h *harness) waitRun(id string) {
	// Not lspclient.WaitRun: it looks at the last event only, and a
	// checkpoint event (an accept) may follow the terminal one.
	ed := h.editor()
	if ed == nil {
		return
	}
	cond := func([]protocol.RunEvent) bool { return h.ended(id, h.events(id)) }
	if _, err := ed.WaitFor(h.ctx, id, cond); err == nil && h.editor() == ed {
		h.mu.Lock()
		if _, ok := h.endTimes[id]; !ok {
			h.endTimes[id] = time.Now()
		}
		h.mu.Unlock()
	}
}

func (h *harness) waitAll() {
	h.mu.Lock()
	runs := append([]string(nil), h.runs...)
	h.mu.Unlock()
	for _, id := range runs {
		h.waitRun(id)
	}
}

// editID returns the n-th (1-based; 0 = last) proposed edit of the current
// run, after the run has ended.
func (h *harness) editID(n int) (string, error) {
	id := h.current()
	if id == "" {
		return "", errors.New("no run")
	}
	h.waitRun(id)
	var ids []string
	for _, ev := range h.events(id) {
		if ev.Kind == protocol.EventEditProposed {
			ids = append(ids, ev.EditID)
		}
	}
	if n == 0 {
		n = len(ids)
	}
	if n < 1 || n > len(ids) {
		return "", fmt.Errorf("edit %d: the run proposed %d", n, len(ids))
	}
	return ids[n-1], nil
}

func (h *harness) codeAction(ca *CodeAction) error {
	from, to, err := parseLines(ca.Lines)
	if err != nil {
		return err
	}
	if from == 0 {
		from, to = 1, 1
	}
	params := map[string]any{
		"textDocument": map[string]any{"uri": h.editor().URI(ca.File)},
		"range":        map[string]any{"start": map[string]any{"line": from - 1, "character": 0}, "end": map[string]any{"line": to, "character": 0}},
		"context":      map[string]any{"diagnostics": []any{}},
	}
	var actions []struct {
		Title   string `json:"title"`
		Command struct {
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		} `json:"command"`
	}
	if _, err := h.editor().Conn().Call(h.ctx, "textDocument/codeAction", params, &actions); err != nil {
		return err
	}
	var titles []string
	for _, a := range actions {
		titles = append(titles, a.Title)
		if !strings.Contains(a.Title, ca.Title) {
			continue
		}
		if a.Command.Command != protocol.CommandAsk || len(a.Command.Arguments) != 1 {
			return fmt.Errorf("code action %q does not carry one cairn.ask argument", a.Title)
		}
		t0 := time.Now()
		var ref protocol.RunRef
		if err := h.editor().Execute(h.ctx, protocol.CommandAsk, a.Command.Arguments[0], &ref); err != nil {
			return err
		}
		h.addRun(ref.RunID, t0)
		return nil
	}
	return fmt.Errorf("no code action titled %q among %q", ca.Title, titles)
}

// parseLines parses "L1-L2" or "L" (1-based); "" is no selection.
func parseLines(s string) (int, int, error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, found := strings.Cut(s, "-")
	var from, to int
	if _, err := fmt.Sscanf(a, "%d", &from); err != nil || from < 1 {
		return 0, 0, fmt.Errorf("lines %q: want L1-L2, 1-based", s)
	}
	to = from
	if found {
		if _, err := fmt.Sscanf(b, "%d", &to); err != nil || to < from {
			return 0, 0, fmt.Errorf("lines %q: want L1-L2 with L2 >= L1", s)
		}
	}
	return from, to, nil
}

// collect fills in the metrics and transcript once the case's runs ended.
func (h *harness) collect() {
	r := h.res
	h.mu.Lock()
	runs := append([]string(nil), h.runs...)
	h.mu.Unlock()
	r.Runs = len(runs)
	ids := newIDNormalizer(h.ws)
	for _, id := range runs {
		evs := h.events(id)
		h.mu.Lock()
		t0, t1 := h.askTimes[id], h.endTimes[id]
		h.mu.Unlock()
		if !t1.IsZero() {
			r.LatencyMS += ms(t1.Sub(t0))
		}
		var usage *protocol.Usage
		for _, ev := range evs {
			r.Transcript = append(r.Transcript, ids.event(ev))
			if ev.Kind == protocol.EventFinished && ev.Usage != nil {
				usage = ev.Usage
			}
		}
		if usage != nil {
			r.InputTokens += usage.InputTokens
			r.OutputTokens += usage.OutputTokens
		}
		r.Steps += journalSteps(filepath.Join(h.state, "runs", id, "journal.jsonl"))
	}
	if h.provider != nil {
		// The scripted provider counts the input as sent, and it holds
		// random edit ids whose token counts vary; count it again with the
		// ids normalized, so a scripted case's tokens are reproducible (and
		// runs that did not finish, which report no usage, are counted too).
		reqs := h.provider.Received()
		r.ModelCalls = len(reqs)
		r.InputTokens = countTokens(reqs, ids)
	}
	if srv := h.server(); srv != nil {
		select {
		case err := <-srv.done:
			srv.done <- err
			r.fail(FailCrash, "the server stopped during the case: %v%s", err, srv.stderr.tail())
		default:
		}
	}
}

// journalSteps counts the distinct steps a run's journal started.
func journalSteps(path string) int {
	recs, _, err := checkpoint.ReadJournal(path)
	if err != nil {
		return 0
	}
	seen := map[int]bool{}
	for _, rec := range recs {
		if rec.Type == checkpoint.RecStepStarted {
			seen[rec.Step] = true
		}
	}
	return len(seen)
}

// idNormalizer replaces run, edit, checkpoint and thread ids and the workspace
// path with stable placeholders.
type idNormalizer struct {
	root string
	ids  map[string]string
	n    map[string]int
}

var idRE = regexp.MustCompile(`\b(run|edit|cp|thread)-[0-9a-f]{12}\b`)

func newIDNormalizer(root string) *idNormalizer {
	return &idNormalizer{root: root, ids: map[string]string{}, n: map[string]int{}}
}

func (z *idNormalizer) str(s string) string {
	if z.root != "" {
		s = strings.ReplaceAll(s, z.root, "$ROOT")
	}
	return idRE.ReplaceAllStringFunc(s, func(id string) string {
		if p, ok := z.ids[id]; ok {
			return p
		}
		prefix, _, _ := strings.Cut(id, "-")
		z.n[prefix]++
		p := fmt.Sprintf("%s-%d", prefix, z.n[prefix])
		z.ids[id] = p
		return p
	})
}

func (z *idNormalizer) event(ev protocol.RunEvent) string {
	ev.RunID = z.str(ev.RunID)
	ev.ThreadID = z.str(ev.ThreadID)
	ev.URI = z.str(ev.URI)
	ev.EditID = z.str(ev.EditID)
	ev.CheckpointID = z.str(ev.CheckpointID)
	ev.Error = z.str(ev.Error)
	ev.Summary = z.str(ev.Summary)
	ev.Answer = z.str(ev.Answer)
	// The server's own usage counts the random ids as sent; the Result's
	// tokens are recounted with the ids normalized instead.
	ev.Usage = nil
	if len(ev.Edit) > 0 {
		ev.Edit = json.RawMessage(z.str(string(ev.Edit)))
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
