// Package agent runs questions: the step loop that builds context, streams
// the model, executes tool calls through the registry's pipeline, turns
// proposed file changes into edits the user reviews, and ends each run with
// exactly one of finished, failed or cancelled.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/internal/gcroom"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/tokencount"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/trace"
	"github.com/cairn-dev/cairn/workspace"
)

// Failure classes of the failed event beyond the model's error classes.
const (
	ClassStepLimit   = "step_limit"
	ClassTimeLimit   = "time_limit"
	ClassTokenBudget = "token_budget"
	ClassCostBudget  = "cost_budget"
	ClassLoop        = "loop_detected"
	ClassInternal    = "internal"
	ClassBadRequest  = "bad_request"
)

// State of a run.
type State string

const (
	StateRunning     State = "running"
	StateFinished    State = "finished"
	StateFailed      State = "failed"
	StateCancelled   State = "cancelled"
	StateInterrupted State = "interrupted"
)

// AskRequest starts a run.
type AskRequest struct {
	// Abs is the absolute path of the file asked from ("" for none).
	Abs       string
	Selection *contextengine.Selection
	Question  string
	// ThreadID continues that thread; "" starts a new one.
	ThreadID string
	// Range is the editor's selection as sent (for the started event).
	Range *protocol.Range
	// Model, when set, is the model id this run asks instead of the
	// configured one (an ACP session's model picker).
	Model string
	// Provider, when set, answers this run instead of the configured one:
	// cairn.proposeEdit's run replays one scripted edit_file call, so the
	// edit is a proposal like any other (reviewed, accepted, undone).
	Provider model.Provider
}

// Run is one question being answered.
type Run struct {
	ID       string
	ThreadID string
	Question string
	Started  time.Time

	m      *Manager
	cfg    Config // snapshot at start: a settings change does not alter a running run
	req    AskRequest
	ctx    context.Context
	cancel context.CancelCauseFunc
	drafts *workspace.Drafts

	tr      *trace.Run  // nil-safe
	curStep *trace.Step // the step span of the loop goroutine

	jmu         sync.Mutex // guards journal and journalPath
	journal     *checkpoint.Journal
	journalPath string // set when the journal is closed at the end of the run

	// line numbers and delivers the run's events; once the run has ended,
	// the summary kept of it (retention.go) shares it.
	line *eventLine

	mu       sync.Mutex
	state    State
	events   []protocol.RunEvent
	report   *contextengine.Report
	messages []model.Message
	usage    tokencount.Usage
	done     chan struct{}
	// history is the thread's turns before this run; notes are told to the
	// model before its next call (a hunk the user rejected meanwhile).
	history []contextengine.Turn
	notes   []string
	// notReady names the index sources not ready when the question went
	// ahead (waitForIndex); the finished event repeats them.
	notReady []string
	// simplifiedSchemas is set once a provider rejected a schema feature.
	simplifiedSchemas bool

	// Set by resume: calls whose outcome the journal cannot tell, and what
	// the user should be told about the journal.
	unknown  []unknownCall
	warnings []string
	redOnce  sync.Once
	redactor *redact.Redactor // the run's fork of the session's; see red
}

// red returns the run's redactor: a fork of the session's, so the secret
// values the run learns (from its context, its tool results) are masked
// everywhere in the run without being taught to other runs.
func (r *Run) red() *redact.Redactor {
	r.redOnce.Do(func() {
		base := redact.Default()
		if r.m != nil && r.m.redactor != nil {
			base = r.m.redactor
		}
		r.redactor = base.Fork()
	})
	return r.redactor
}

// redactEvent masks secrets in every text an event carries to the editor.
// Edits are the exception: a proposed edit is the model's text for the
// user's own file (built from redacted context), shown only to the user.
func (r *Run) redactEvent(ev protocol.RunEvent) protocol.RunEvent {
	red := r.red()
	ev.Delta = red.String(ev.Delta)
	ev.Question = red.String(ev.Question)
	ev.Summary = red.String(ev.Summary)
	ev.Answer = red.String(ev.Answer)
	ev.Error = red.String(ev.Error)
	ev.Output = red.String(ev.Output)
	if len(ev.Input) > 0 {
		ev.Input = red.JSON(ev.Input)
	}
	return ev
}

// ErrCancelledByUser is the cause recorded when cairn.cancel stops a run.
var ErrCancelledByUser = errors.New("cancelled by the user")

// State returns the run's state.
func (r *Run) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// Warnings returns what a resumed run found wrong with its journal
// (damaged records, calls whose outcome is unknown), for the user.
func (r *Run) Warnings() []string { return append([]string(nil), r.warnings...) }

// Done is closed when the run has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Events returns a copy of the events sent so far.
func (r *Run) Events() []protocol.RunEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.RunEvent(nil), r.events...)
}

// Report returns the context report of the run's latest build.
func (r *Run) Report() *contextengine.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.report
}

// Cancel stops the run; it ends with the cancelled event.
func (r *Run) Cancel() { r.cancel(ErrCancelledByUser) }

// eventLine numbers a run's events and delivers them to emit in that
// order. One goroutine at a time (emitting) drains the outbox, so a run's
// events reach emit in seq order even when an accept's checkpoint is sent
// from a command's goroutine while the loop streams (an editor drops an
// event whose seq is not above the last it saw), and emit may itself send
// (acp accepts from emit). A run that has ended keeps its line in the
// summary the manager keeps of it: each accept after the end takes the
// next seq, however many follow.
type eventLine struct {
	mu       sync.Mutex
	seq      int // the last seq given
	emit     func(protocol.RunEvent)
	outbox   []protocol.RunEvent // numbered, not yet emitted
	emitting bool
}

func newEventLine(seq int, emit func(protocol.RunEvent)) *eventLine {
	return &eventLine{seq: seq, emit: emit}
}

// lastSeq returns the seq of the last event sent.
func (l *eventLine) lastSeq() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// send assigns the next seq and emits the event. Terminal events set state.
func (r *Run) send(ev protocol.RunEvent) {
	ev = r.redactEvent(ev)
	ev.RunID = r.ID
	l := r.line
	l.mu.Lock()
	l.seq++
	ev.Seq = l.seq
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	if l.emit == nil {
		l.mu.Unlock()
		return
	}
	l.outbox = append(l.outbox, ev)
	if l.emitting {
		l.mu.Unlock()
		return // the goroutine emitting delivers it after the ones before it
	}
	l.emitting = true
	l.mu.Unlock()
	l.drain()
}

// drain emits the outbox in order; the caller has set emitting.
func (l *eventLine) drain() {
	ok := false
	defer func() {
		if !ok { // emit panicked: let the next send deliver what is left
			l.mu.Lock()
			l.emitting = false
			l.mu.Unlock()
		}
	}()
	for {
		l.mu.Lock()
		if len(l.outbox) == 0 {
			l.emitting = false
			l.mu.Unlock()
			ok = true
			return
		}
		next := l.outbox[0]
		l.outbox = l.outbox[1:]
		l.mu.Unlock()
		l.emit(next)
	}
}

func (r *Run) finish(st State, ev protocol.RunEvent) {
	r.mu.Lock()
	if r.state != StateRunning {
		r.mu.Unlock()
		return
	}
	r.state = st
	r.mu.Unlock()
	r.jrnl(checkpoint.RecFinished, 0, map[string]any{"state": st, "error": ev.Error, "class": ev.Class})
	// Every ending records what the run used: a failed or cancelled run
	// was paid for too.
	usage := r.usageWithCost(r.usageSnapshot())
	r.m.threads.updateTurn(r.ID, func(t *ThreadTurn) {
		t.Answer, t.Outcome = ev.Answer, string(st)
		if ev.Error != "" {
			t.Outcome += ": " + ev.Error
		}
		if usage.InputTokens > 0 || usage.OutputTokens > 0 {
			t.Usage = &usage
		}
	})
	r.tr.End(trace.RunResult{Status: string(st), Error: ev.Error, Class: ev.Class})
	r.jmu.Lock()
	if r.journal != nil {
		r.journalPath = r.journal.Path
		_ = r.journal.Close()
		r.journal = nil
	}
	r.jmu.Unlock()
	r.send(ev)
}

// startedEvent says what the run is about, for clients that did not start it.
func (r *Run) startedEvent() protocol.RunEvent {
	ev := protocol.RunEvent{Kind: protocol.EventStarted, ThreadID: r.ThreadID, Question: r.Question, Range: r.req.Range}
	if r.req.Abs != "" {
		ev.URI = workspace.FileURI(r.m.ws.ClientPath(r.req.Abs))
	}
	if ev.Range == nil && r.req.Selection != nil {
		ev.Range = &protocol.Range{Start: protocol.Position{Line: uint32(max(r.req.Selection.StartLine-1, 0))},
			End: protocol.Position{Line: uint32(r.req.Selection.EndLine)}}
	}
	return ev
}

// addNote queues a message for the model, sent before its next call.
func (r *Run) addNote(note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == StateRunning {
		r.notes = append(r.notes, note)
	}
}

// takeNotes moves queued notes into the conversation as a user message.
func (r *Run) takeNotes() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.notes) == 0 {
		return
	}
	r.messages = append(r.messages, model.Message{Role: model.RoleUser, Content: strings.Join(r.notes, "\n\n")})
	r.notes = nil
}

func (r *Run) logf(level slog.Level, msg string, args ...any) {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = r.red().String(v)
		case error:
			args[i] = r.red().String(v.Error())
		}
	}
	slog.Log(context.Background(), level, msg, append([]any{"run", r.ID}, args...)...)
}

// loop is the run's body.
func (r *Run) loop() {
	defer close(r.done)
	defer func() {
		if p := recover(); p != nil {
			r.logf(slog.LevelError, "run panicked", "panic", p)
			r.finish(StateFailed, protocol.RunEvent{Kind: protocol.EventFailed, Error: fmt.Sprintf("internal error: %v", p), Class: ClassInternal})
		}
	}()
	r.send(r.startedEvent())
	r.notReady = r.waitForIndex()
	if r.ctx.Err() != nil {
		r.endCancelled()
		return
	}
	built, err := r.buildContext(0)
	if err != nil {
		r.finish(StateFailed, protocol.RunEvent{Kind: protocol.EventFailed, Error: err.Error(), Class: ClassBadRequest})
		return
	}
	r.mu.Lock()
	r.messages = []model.Message{{Role: model.RoleSystem, Content: built.System}, {Role: model.RoleUser, Content: built.User}}
	r.mu.Unlock()
	r.jrnl(checkpoint.RecContext, 0, contextRecord{System: r.blob(built.System), User: r.blob(built.User), Report: r.blob(built.Report.Markdown())})
	r.steps(&loopState{seenCalls: map[string]int{}})
}

// loopState is what the step loop carries from step to step; resume
// rebuilds it from the journal.
type loopState struct {
	rerun        []rerunCall // calls to run again when a resumed run starts
	step         int         // the last step started
	invalidTurns int
	seenCalls    map[string]int
	shrunk       bool
}

type rerunCall struct {
	call  model.ToolCall
	index int // of its tool message
}

// steps runs the step loop from st until the run ends.
func (r *Run) steps(st *loopState) {
	cfg := r.cfg
	env := &tools.Env{WS: r.m.ws, Drafts: r.drafts, Diagnostics: r.m.diags, Index: r.m.index, RunID: r.ID}
	for {
		st.step++
		step := st.step
		if step > cfg.MaxSteps {
			r.finish(StateFailed, protocol.RunEvent{Kind: protocol.EventFailed, Class: ClassStepLimit,
				Error: fmt.Sprintf("stopped after %d steps without a final answer (step limit)", cfg.MaxSteps)})
			return
		}
		if ev, stop := r.budgetExceeded(); stop {
			r.finish(StateFailed, ev)
			return
		}
		if r.ctx.Err() != nil {
			r.endCancelled()
			return
		}
		r.takeNotes()
		r.mu.Lock()
		nmsg := len(r.messages)
		r.mu.Unlock()
		r.jrnl(checkpoint.RecStepStarted, step, map[string]any{"messages": nmsg})
		r.curStep = r.tr.StartStep(step)
		r.m.faultPoint("before_model_call")
		resp, err := r.callModel(step)
		if err != nil {
			if r.ctx.Err() != nil {
				r.endCancelled()
				return
			}
			if model.ClassOf(err) == model.ClassContextLength && !st.shrunk {
				// Rebuild with a smaller budget and retry once.
				st.shrunk = true
				r.logf(slog.LevelWarn, "context too long; rebuilding smaller", "err", err)
				if b, berr := r.buildContext(1); berr == nil {
					r.mu.Lock()
					r.messages[1].Content = b.User
					r.mu.Unlock()
					r.jrnl(checkpoint.RecContext, step, contextRecord{System: r.blob(b.System), User: r.blob(b.User), Report: r.blob(b.Report.Markdown())})
					st.step--
					continue
				}
			}
			r.finish(StateFailed, protocol.RunEvent{Kind: protocol.EventFailed, Error: err.Error(), Class: string(model.ClassOf(err))})
			return
		}
		r.mu.Lock()
		r.usage.Add(resp.Usage)
		r.messages = append(r.messages, model.Message{Role: model.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		r.mu.Unlock()
		r.jrnl(checkpoint.RecModelResult, step, resp)

		if len(resp.ToolCalls) == 0 {
			pu := r.usageWithCost(r.usageSnapshot())
			r.curStep.End(nil)
			r.finish(StateFinished, protocol.RunEvent{Kind: protocol.EventFinished, Answer: resp.Text,
				Usage: &pu, NotReady: r.notReady,
				Truncated: resp.FinishReason == model.FinishLength})
			return
		}

		invalid := 0
		for _, call := range resp.ToolCalls {
			if r.ctx.Err() != nil {
				r.endCancelled()
				return
			}
			key := call.Name + "\x00" + strings.TrimSpace(call.Arguments)
			st.seenCalls[key]++
			if st.seenCalls[key] > cfg.MaxRepeats {
				r.finish(StateFailed, protocol.RunEvent{Kind: protocol.EventFailed, Class: ClassLoop,
					Error: fmt.Sprintf("the model called %s with the same input %d times (loop detected)", call.Name, st.seenCalls[key])})
				return
			}
			content, wasInvalid := r.execTool(step, env, call)
			if wasInvalid {
				invalid++
			}
			r.mu.Lock()
			r.messages = append(r.messages, model.Message{Role: model.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Content: content})
			r.mu.Unlock()
		}
		r.curStep.End(nil)
		if invalid == len(resp.ToolCalls) {
			st.invalidTurns++
			if st.invalidTurns >= cfg.MaxInvalidTurns {
				r.finish(StateFailed, protocol.RunEvent{Kind: protocol.EventFailed, Class: string(model.ClassInvalidTool),
					Error: fmt.Sprintf("the model made invalid tool calls %d turns in a row", st.invalidTurns)})
				return
			}
		} else {
			st.invalidTurns = 0
		}
	}
}

// budgetExceeded checks the run-level stop conditions other than steps:
// wall-clock time and total tokens.
func (r *Run) budgetExceeded() (protocol.RunEvent, bool) {
	cfg := r.cfg
	if cfg.MaxDuration > 0 && time.Since(r.Started) > cfg.MaxDuration {
		return protocol.RunEvent{Kind: protocol.EventFailed, Class: ClassTimeLimit,
			Error: fmt.Sprintf("stopped after %s (wall-clock limit %s)", time.Since(r.Started).Round(time.Second), cfg.MaxDuration)}, true
	}
	if cost := r.usageWithCost(r.usageSnapshot()).CostUSD; cfg.MaxCostUSD > 0 && cost > cfg.MaxCostUSD {
		return protocol.RunEvent{Kind: protocol.EventFailed, Class: ClassCostBudget,
			Error: fmt.Sprintf("stopped after spending $%.4f (cost budget $%.4f)", cost, cfg.MaxCostUSD)}, true
	}
	u := r.usageSnapshot()
	if cfg.MaxTotalTokens > 0 && u.InputTokens+u.OutputTokens > cfg.MaxTotalTokens {
		return protocol.RunEvent{Kind: protocol.EventFailed, Class: ClassTokenBudget,
			Error: fmt.Sprintf("stopped after using %d tokens (token budget %d)", u.InputTokens+u.OutputTokens, cfg.MaxTotalTokens)}, true
	}
	return protocol.RunEvent{}, false
}

func (r *Run) endCancelled() {
	cause := context.Cause(r.ctx)
	msg := "cancelled"
	if cause != nil && !errors.Is(cause, context.Canceled) {
		msg = cause.Error()
	}
	r.finish(StateCancelled, protocol.RunEvent{Kind: protocol.EventCancelled, Error: msg})
}

func (r *Run) usageSnapshot() tokencount.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usage
}

// streamProgressEvery is how many text deltas may be streamed between two
// journal records; a resumed run skips that many seq numbers so they are
// never reused.
const streamProgressEvery = 32

// jrnlNoSync records streaming progress without waiting for the disk: it
// only has to survive a process crash, and it is written often.
func (r *Run) jrnlNoSync(typ string, step int) {
	seq := r.line.lastSeq()
	r.jmu.Lock()
	defer r.jmu.Unlock()
	if r.journal != nil {
		_ = r.journal.AppendNoSync(typ, step, seq)
	}
}

// jrnl appends a record to the run's journal. After the run ended (the
// journal is closed), records such as an edit accepted later reopen it for
// the one append.
func (r *Run) jrnl(typ string, step int, data any) {
	seq := r.line.lastSeq()
	r.jmu.Lock()
	defer r.jmu.Unlock()
	j := r.journal
	if j == nil {
		if r.journalPath == "" {
			return
		}
		var err error
		if j, err = checkpoint.OpenJournal(r.journalPath); err != nil {
			r.logf(slog.LevelError, "reopening the journal failed", "type", typ, "err", err)
			return
		}
		defer j.Close()
	}
	// Every string bound for the journal is redacted; file contents go to
	// the blob store, not here.
	if _, err := j.Append(typ, step, seq, r.red().Value(data)); err != nil {
		r.logf(slog.LevelError, "journal append failed", "type", typ, "err", err)
	}
}

// buildContext builds the first user message; shrink > 0 halves the window.
func (r *Run) buildContext(shrink int) (*contextengine.Built, error) {
	cfg := r.cfg
	req := contextengine.Request{
		Question:      r.req.Question,
		Selection:     r.req.Selection,
		WS:            r.m.ws,
		RecentEdits:   r.m.ws.Recent.Newest(10),
		ContextWindow: cfg.ContextWindow >> shrink,
		MaxOutput:     cfg.MaxOutputTokens,
		ToolSchemas:   r.m.toolSchemaTokens(),
		History:       r.history,
	}
	if r.req.Abs != "" {
		req.File = r.m.ws.Rel(r.req.Abs)
		text, ok, err := r.m.ws.ReadFile(r.req.Abs)
		if err != nil {
			return nil, err
		}
		if ok {
			if workspace.IsBinary([]byte(text)) {
				return nil, fmt.Errorf("%s is a binary file", req.File)
			}
			req.FileText = text
		}
	}
	if r.m.diags != nil {
		req.Diagnostics = r.m.diags.Diagnostics("")
	}
	req.Redactor = r.red()
	if ix := r.m.index; ix != nil {
		req.Index, req.IndexPending = ix, !codeindex.IsReady(ix)
		req.NotReady = r.notReady
	}
	b, err := contextengine.Build(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.report = b.Report
	r.mu.Unlock()
	if items := contextItems(r.m.ws, b.Report); len(items) > 0 {
		r.send(protocol.RunEvent{Kind: protocol.EventContext, Context: items})
	}
	return b, nil
}

// callModel sends the conversation (fitted to the budget) with retries for
// transient failures.
func (r *Run) callModel(step int) (*model.Response, error) {
	cfg := r.cfg
	r.mu.Lock()
	msgs := append([]model.Message(nil), r.messages...)
	report := r.report
	r.mu.Unlock()
	if report != nil {
		avail := report.Budget.Available
		msgs = contextengine.FitHistory(msgs, avail, report)
	}
	req := model.Request{Model: cfg.ModelName, Messages: msgs, Tools: r.m.registry.Specs(), MaxTokens: cfg.MaxOutputTokens,
		OnReasoning: func(delta string) {
			if delta != "" {
				r.send(protocol.RunEvent{Kind: protocol.EventThought, Delta: delta})
			}
		}}
	degraded := report != nil && report.Degraded
	mc := r.curStep.StartModelCall(trace.ModelRequest{Provider: providerName(cfg.Provider), Model: cfg.ModelName,
		MaxTokens: cfg.MaxOutputTokens, ContextDegraded: degraded, Prices: r.prices()})
	attempts := 0
	policy := model.DefaultRetryPolicy()
	policy.MaxAttempts = cfg.MaxRetries + 1
	policy.OnRetry = func(attempt int, err error, wait time.Duration) {
		r.jrnl(checkpoint.RecModelError, step, modelErrorRecord(err, attempt, true))
		r.logf(slog.LevelWarn, "model call failed; retrying", "class", model.ClassOf(err), "attempt", attempt, "wait", wait, "err", err)
	}
	// The model's answer takes longer than a collection: one due soon
	// runs now rather than in the next context build (a no-op in a
	// process that does not own its runtime).
	gcroom.Idle()
	resp, err := model.Retry(r.ctx, policy, func() (*model.Response, error) {
		attempts++
		if r.simplifiedSchemas {
			req.Tools = simplifiedSpecs(req.Tools)
		}
		deltas := 0
		return cfg.Provider.Stream(r.ctx, req, func(delta string) {
			if delta == "" {
				return
			}
			r.send(protocol.RunEvent{Kind: protocol.EventText, Delta: delta})
			if deltas == 0 {
				mc.FirstToken()
			}
			if deltas++; deltas%streamProgressEvery == 0 {
				r.jrnlNoSync(checkpoint.RecStreamProgress, step)
			}
			r.m.faultPoint("mid_stream")
		})
	})
	if err != nil {
		mc.End(trace.ModelResult{Attempts: attempts, ErrorClass: string(model.ClassOf(err))}, err)
		if r.ctx.Err() == nil {
			r.jrnl(checkpoint.RecModelError, step, modelErrorRecord(err, attempts, false))
		}
	}
	if err != nil && model.ClassOf(err) == model.ClassSchema && !r.simplifiedSchemas && r.ctx.Err() == nil {
		// The provider rejects a schema feature: retry once with simplified
		// schemas (Cairn still validates inputs against the full ones).
		r.logf(slog.LevelWarn, "the provider rejected a tool schema; retrying with simplified schemas", "err", err)
		r.simplifiedSchemas = true
		return r.callModel(step)
	}
	if err != nil {
		return nil, err
	}
	if resp.Usage.InputTokens == 0 && resp.Usage.OutputTokens == 0 {
		in := 0
		for _, m := range msgs {
			in += tokencount.Count(m.Content)
		}
		resp.Usage = tokencount.Usage{InputTokens: in, OutputTokens: tokencount.Count(resp.Text), Estimated: true}
	}
	calls := make([]trace.RecordedToolCall, 0, len(resp.ToolCalls))
	for _, c := range resp.ToolCalls {
		calls = append(calls, trace.RecordedToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	mc.End(trace.ModelResult{ResponseID: resp.ID, Text: resp.Text, ToolCalls: calls, FinishReason: resp.FinishReason,
		InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens, CachedInputTokens: resp.Usage.CachedInputTokens,
		CacheWriteTokens: resp.Usage.CacheWriteTokens, Estimated: resp.Usage.Estimated, Attempts: attempts}, nil)
	return resp, nil
}

// execTool runs one call through the pipeline and returns the content for
// the model and whether the call itself was invalid (unknown tool, bad JSON,
// schema failure). The intent is journaled and synced before the tool runs
// and the result after, so a resume knows which side effects happened.
func (r *Run) execTool(step int, env *tools.Env, call model.ToolCall) (content string, invalid bool) {
	input := json.RawMessage(call.Arguments)
	if !json.Valid(input) {
		input, _ = json.Marshal(call.Arguments) // show the raw text as a JSON string
	}
	r.send(protocol.RunEvent{Kind: protocol.EventToolCall, CallID: call.ID, Tool: call.Name, Input: input})
	tc := r.curStep.StartToolCall(trace.ToolRequest{CallID: call.ID, Name: call.Name, Arguments: call.Arguments, Extension: strings.HasPrefix(call.Name, "mcp__")})
	var span trace.ToolResult
	finish := func(ok bool, summary, content string) string {
		okv := ok
		r.send(protocol.RunEvent{Kind: protocol.EventToolResult, CallID: call.ID, Tool: call.Name, OK: &okv, Summary: summary, Output: content})
		if !ok {
			content = "error: " + content
		}
		span.OK, span.Summary, span.OutputBytes = ok, summary, len(content)
		tc.End(span, nil)
		r.jrnl(checkpoint.RecToolResult, step, toolResultRecord{CallID: call.ID, Tool: call.Name, OK: ok, Summary: summary, Content: r.blob(content)})
		return content
	}
	tool, found := r.m.registry.Get(call.Name)
	if !found {
		msg := fmt.Sprintf("unknown tool %q; available tools: %s", call.Name, strings.Join(r.m.registry.Names(), ", "))
		span.Invalid, span.ErrorClass = true, "unknown_tool"
		return finish(false, "unknown tool", msg), true
	}
	valid, err := tool.Validate(call.Arguments)
	if err != nil {
		span.Invalid, span.ErrorClass = true, "invalid_input"
		return finish(false, "invalid input", err.Error()), true
	}
	req := tool.Request(valid)
	req.RunID, req.CallID, req.Tool = r.ID, call.ID, call.Name
	req.Input = r.red().String(string(valid))
	risk := req.Risk
	decision, err := r.m.gate.Decide(r.ctx, req,
		step, r.red().String(summarizeInput(valid))) // the audit log masks with the session's values only

	if err != nil && r.ctx.Err() != nil {
		return finish(false, "cancelled", "cancelled before it ran"), false
	}
	r.jrnl(checkpoint.RecApproval, step, approvalRecord{CallID: call.ID, Tool: call.Name, Risk: string(risk), Decision: string(decision)})
	tc.SetApproval(string(risk), string(decision), call.ID)
	if risk != tools.RiskRead || !decision.Allowed() {
		r.send(protocol.RunEvent{Kind: protocol.EventApproval, CallID: call.ID, Decision: string(decision)})
	}
	if !decision.Allowed() {
		msg := fmt.Sprintf("the call to %s was denied (%s risk, decision %s); do not retry it, find another way or explain what you need", call.Name, risk, decision)
		span.ErrorClass = "denied"
		return finish(false, "denied", msg), false
	}
	r.jrnl(checkpoint.RecToolIntent, step, toolIntentRecord{CallID: call.ID, Tool: call.Name, Input: valid, SideEffects: tool.SideEffects && risk != tools.RiskRead, Decision: string(decision)})
	r.m.faultPoint("after_tool_intent")
	// Commands that may write get a snapshot, so a rewind can restore the
	// files they change.
	var snap *snapshot
	if tool.SideEffects && r.m.cps != nil && (risk == tools.RiskWrite || risk == tools.RiskDestructive || risk == tools.RiskInstall) {
		snap = takeSnapshot(r.m.ws)
	}
	res, err := tool.Invoke(r.ctx, env, valid)
	secretNote := ""
	if snap != nil {
		changes, secret := snap.diff(r.m.ws, r.m.cps.Blobs, r.holdsSecrets)
		if len(changes) > 0 || snap.capped > 0 {
			r.jrnl(checkpoint.RecCommandChanges, step, commandChangesRecord{CallID: call.ID, Changes: changes, NotCovered: snap.capped, SecretFiles: secret})
		}
		if secretNote = secretFileNote(secret); secretNote != "" {
			r.logf(slog.LevelWarn, "a command changed files that hold secrets; their previous content is kept for rewind", "files", strings.Join(secret, ", "))
		}
	}
	r.m.faultPoint("before_tool_result")
	if err != nil {
		if r.ctx.Err() != nil {
			return finish(false, "cancelled", "cancelled while running; it may have partly happened"), false
		}
		r.logf(slog.LevelError, "tool failed", "tool", call.Name, "err", err)
		res = tools.Result{Content: fmt.Sprintf("%s failed: %v", call.Name, err), IsError: true, Summary: "failed"}
	}
	res.Content += secretNote
	if red, findings := r.red().Redact(res.Content); len(findings) > 0 {
		res.Content = red
		span.Redactions = len(findings)
		r.mu.Lock()
		if r.report != nil {
			if r.report.Redactions == nil {
				r.report.Redactions = map[string]int{}
			}
			for _, f := range findings {
				r.report.Redactions[f.Kind]++
			}
		}
		r.mu.Unlock()
	}
	if res.Change != nil {
		if after, n := maskNewSecrets(r.red(), res.Change.Before, res.Change.After); n > 0 {
			res.Change.After = after
			if _, _, err := r.drafts.Write(res.Change.Abs, after); err != nil {
				r.logf(slog.LevelError, "masking secrets in a proposed edit", "err", err)
			}
			res.Content += fmt.Sprintf(" (%d secret(s) you wrote were masked in the proposal; the user can fill them in)", n)
		}
		e := r.m.proposeEdit(r, step, []tools.FileChange{*res.Change})
		r.jrnl(checkpoint.RecEdit, step, r.editRecord(e))
		span.EditID = e.ID
		res.Content += fmt.Sprintf(" (edit id %s)", e.ID)
	}
	if len(res.Plan) > 0 && !res.IsError {
		// Before the result, so a client shows the plan when the call ends.
		r.send(protocol.RunEvent{Kind: protocol.EventPlan, Plan: planEntries(r.red(), res.Plan)})
	}
	content = finish(!res.IsError, res.Summary, res.Content)
	r.m.faultPoint("after_tool_result")
	return content, false
}

func simplifiedSpecs(specs []model.ToolSpec) []model.ToolSpec {
	out := make([]model.ToolSpec, len(specs))
	for i, s := range specs {
		s.Schema = model.SimplifySchema(s.Schema)
		out[i] = s
	}
	return out
}

func summarizeInput(input json.RawMessage) string {
	s := string(input)
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// journalPath is where a run's journal lives.
func journalPath(stateDir, runID string) string {
	return filepath.Join(stateDir, "runs", runID, "journal.jsonl")
}
