package trace

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/tokencount"
)

// Step records one step of the loop (one model call and the tool calls it
// asked for). A nil *Step is a no-op.
type Step struct {
	run *Run
	sp  *span
	n   int
}

// StartStep starts step n (1-based) under the run.
func (run *Run) StartStep(n int) *Step {
	if run == nil {
		return nil
	}
	run.mu.Lock()
	run.steps++
	run.mu.Unlock()
	// The store processor writes a provisional record as the step starts,
	// so the spans of a step that never ends (the process died) still hang
	// under it.
	return &Step{run: run, n: n, sp: run.child(run.sp, KindStep, "step "+strconv.Itoa(n), map[string]any{AttrStep: n})}
}

// SetAttr sets an attribute of the step span.
func (s *Step) SetAttr(key string, value any) {
	if s != nil {
		s.sp.setAttr(key, value)
	}
}

// SetCheckpoint links the step to the checkpoint (journal record) that
// ends it.
func (s *Step) SetCheckpoint(id string) { s.SetAttr(AttrCheckpointID, id) }

// AddEvent adds an event to the step span.
func (s *Step) AddEvent(name string, attrs map[string]any) {
	if s != nil {
		s.sp.addEvent(name, attrs)
	}
}

// End ends the step; a non-nil err marks it failed (context.Canceled:
// cancelled).
func (s *Step) End(err error) {
	if s == nil {
		return
	}
	st, msg := statusOf(err)
	s.sp.end(st, msg, nil)
}

// ModelRequest describes a model call being made.
type ModelRequest struct {
	Provider  string // "openai", "anthropic", "scripted", "replay"
	Model     string // model id requested
	MaxTokens int
	// ContextDegraded is true when the context engine had to drop or shrink
	// items to fit the budget (or the call is a retry with a smaller build).
	ContextDegraded bool
	// Prices, when set, is the price table in effect for this call (the
	// defaults with the `model.prices` setting applied); nil uses the
	// recorder's.
	Prices Prices
	Attrs  map[string]any
}

// ModelCall records one model call (with its retries). A nil *ModelCall
// is a no-op.
type ModelCall struct {
	step     *Step
	sp       *span
	req      ModelRequest
	start    time.Time
	ttftOnce bool
}

// StartModelCall starts a model span ("chat <model>") under the step.
func (s *Step) StartModelCall(req ModelRequest) *ModelCall {
	if s == nil {
		return nil
	}
	attrs := map[string]any{
		AttrOperationName:   OperationChat,
		AttrProviderName:    req.Provider,
		AttrSystem:          req.Provider,
		AttrRequestModel:    req.Model,
		AttrStep:            s.n,
		AttrContextDegraded: req.ContextDegraded,
	}
	if req.MaxTokens > 0 {
		attrs[AttrRequestMaxTokens] = req.MaxTokens
	}
	for k, v := range req.Attrs {
		attrs[k] = v
	}
	name := OperationChat
	if req.Model != "" {
		name += " " + req.Model
	}
	sp := s.run.child(s.sp, KindModel, name, attrs)
	return &ModelCall{step: s, sp: sp, req: req, start: sp.start}
}

// FirstToken marks the arrival of the first text delta (time to first
// token); calls after the first are ignored. Safe to call from the
// provider's streaming callback.
func (m *ModelCall) FirstToken() {
	if m == nil {
		return
	}
	m.sp.mu.Lock()
	first := !m.ttftOnce
	m.ttftOnce = true
	m.sp.mu.Unlock()
	if first {
		m.sp.setAttr(AttrTTFTMS, m.step.run.rec.now().Sub(m.start).Milliseconds())
	}
}

// SetAttr sets an attribute of the model span.
func (m *ModelCall) SetAttr(key string, value any) {
	if m != nil {
		m.sp.setAttr(key, value)
	}
}

// ModelResult is what a model call produced (the fields of model.Response,
// plus what the loop knows about the call).
type ModelResult struct {
	ResponseID    string
	ResponseModel string // model id the provider reported, if any
	Text          string
	ToolCalls     []RecordedToolCall
	FinishReason  string
	InputTokens   int
	OutputTokens  int
	// CachedInputTokens and CacheWriteTokens are the parts of InputTokens
	// the provider read from and wrote to its prompt cache.
	CachedInputTokens int
	CacheWriteTokens  int
	Estimated         bool // tokens estimated by Cairn
	Attempts          int  // tries including retries (0: not counted)
	// ErrorClass is the model error class of a failed call (model.ClassOf).
	ErrorClass string
}

// End ends the model call. On success the usage is priced, added to the
// run's totals, and the whole response is recorded as the
// cairn.model.response event for replay. On failure (err != nil) the span
// carries the error and its class; tokens in res still count.
func (m *ModelCall) End(res ModelResult, err error) {
	if m == nil {
		return
	}
	run := m.step.run
	prices := m.req.Prices
	if prices == nil {
		prices = run.rec.prices
	}
	cost, known := prices.Cost(m.req.Provider, m.req.Model, res.usage())
	attrs := map[string]any{
		AttrUsageInputTokens:  res.InputTokens,
		AttrUsageOutputTokens: res.OutputTokens,
		AttrCostUSD:           cost,
		AttrCostKnown:         known,
		AttrLatencyMS:         run.rec.now().Sub(m.start).Milliseconds(),
		AttrModelToolCalls:    len(res.ToolCalls),
	}
	if res.CachedInputTokens > 0 {
		attrs[AttrUsageCacheReadTokens] = res.CachedInputTokens
	}
	if res.CacheWriteTokens > 0 {
		attrs[AttrUsageCacheWriteTokens] = res.CacheWriteTokens
	}
	if res.ResponseID != "" {
		attrs[AttrResponseID] = res.ResponseID
	}
	if res.ResponseModel != "" {
		attrs[AttrResponseModel] = res.ResponseModel
	}
	if res.FinishReason != "" {
		attrs[AttrResponseFinish] = []string{res.FinishReason}
	}
	if res.Estimated {
		attrs[AttrUsageEstimated] = true
	}
	if res.Attempts > 0 {
		attrs[AttrModelAttempts] = res.Attempts
	}
	if err == nil {
		ev := map[string]any{
			AttrRespText:   res.Text,
			AttrRespFinish: res.FinishReason,
			AttrRespID:     res.ResponseID,
			AttrRespInput:  res.InputTokens,
			AttrRespOutput: res.OutputTokens,
		}
		if res.Estimated {
			ev[AttrRespEstimated] = true
		}
		if len(res.ToolCalls) > 0 {
			b, _ := json.Marshal(res.ToolCalls)
			ev[AttrRespToolCalls] = string(b)
		}
		m.sp.addEvent(EventModelResponse, ev)
	} else {
		class := res.ErrorClass
		if class == "" {
			class = "_OTHER"
		}
		attrs[AttrErrorType] = class
		attrs[AttrErrorClass] = class
	}
	st, msg := statusOf(err)
	if m.sp.end(st, msg, attrs) {
		run.mu.Lock()
		run.usage.InputTokens += res.InputTokens
		run.usage.OutputTokens += res.OutputTokens
		run.usage.CachedInputTokens += res.CachedInputTokens
		run.usage.CacheWriteTokens += res.CacheWriteTokens
		run.usage.CostUSD = roundCost(run.usage.CostUSD + cost)
		run.usage.CostKnown = run.usage.CostKnown && known
		run.usage.Estimated = run.usage.Estimated || res.Estimated
		run.usage.ModelCalls++
		run.mu.Unlock()
	}
}

func (res ModelResult) usage() tokencount.Usage {
	return tokencount.Usage{InputTokens: res.InputTokens, OutputTokens: res.OutputTokens,
		CachedInputTokens: res.CachedInputTokens, CacheWriteTokens: res.CacheWriteTokens, Estimated: res.Estimated}
}

// ToolRequest describes a tool call the model asked for.
type ToolRequest struct {
	CallID    string
	Name      string
	Arguments string // raw, as the model produced them (stored as an event)
	// Extension is true for an MCP tool (gen_ai.tool.type "extension").
	Extension bool
	Attrs     map[string]any
}

// ToolCall records one tool call through the pipeline (validation,
// approval, execution). A nil *ToolCall is a no-op.
type ToolCall struct {
	step *Step
	sp   *span
}

// StartToolCall starts a tool span ("execute_tool <name>") under the step.
func (s *Step) StartToolCall(req ToolRequest) *ToolCall {
	if s == nil {
		return nil
	}
	typ := ToolTypeFunction
	if req.Extension {
		typ = ToolTypeExtension
	}
	attrs := map[string]any{
		AttrOperationName: OperationExecuteTool,
		AttrToolName:      req.Name,
		AttrToolCallID:    req.CallID,
		AttrToolType:      typ,
		AttrStep:          s.n,
	}
	for k, v := range req.Attrs {
		attrs[k] = v
	}
	s.run.mu.Lock()
	s.run.tools++
	s.run.mu.Unlock()
	t := &ToolCall{step: s, sp: s.run.child(s.sp, KindTool, OperationExecuteTool+" "+req.Name, attrs)}
	if req.Arguments != "" {
		t.sp.addEvent(EventToolArguments, map[string]any{AttrEventArguments: req.Arguments})
	}
	return t
}

// SetApproval records the call's risk class, the approval decision and
// the id of its audit record (any may be empty).
func (t *ToolCall) SetApproval(risk, decision, approvalID string) {
	if t == nil {
		return
	}
	if risk != "" {
		t.sp.setAttr(AttrToolRisk, risk)
	}
	if decision != "" {
		t.sp.setAttr(AttrToolApproval, decision)
	}
	if approvalID != "" {
		t.sp.setAttr(AttrApprovalID, approvalID)
	}
}

// AddEvent adds an event to the model span (a retry, say).
func (m *ModelCall) AddEvent(name string, attrs map[string]any) {
	if m != nil {
		m.sp.addEvent(name, attrs)
	}
}

// AddEvent adds an event to the tool span.
func (t *ToolCall) AddEvent(name string, attrs map[string]any) {
	if t != nil {
		t.sp.addEvent(name, attrs)
	}
}

// SetAttr sets an attribute of the tool span.
func (t *ToolCall) SetAttr(key string, value any) {
	if t != nil {
		t.sp.setAttr(key, value)
	}
}

// ToolResult is how a tool call ended.
type ToolResult struct {
	OK      bool
	Invalid bool   // unknown tool, bad JSON, schema failure (returned to the model)
	Summary string // the toolResult event's summary
	// OutputBytes is the size of the content returned to the model.
	OutputBytes int
	// Redactions is how many secrets were masked in the output.
	Redactions int
	// Duration of the tool's own execution; 0: the span's duration.
	Duration     time.Duration
	CheckpointID string
	EditID       string
	// ErrorClass, for a failed call ("denied", "invalid_input", "timeout", ...).
	ErrorClass string
}

// End ends the tool call. err is an infrastructure failure; a tool that
// ran and reported an error to the model is res.OK == false with err nil
// (span status "error" either way, so failures are easy to find).
func (t *ToolCall) End(res ToolResult, err error) {
	if t == nil {
		return
	}
	d := res.Duration
	if d == 0 {
		d = t.step.run.rec.now().Sub(t.sp.start)
	}
	attrs := map[string]any{
		AttrToolOK:          res.OK && err == nil,
		AttrToolDurationMS:  d.Milliseconds(),
		AttrToolOutputBytes: res.OutputBytes,
		AttrToolRedactions:  res.Redactions,
	}
	if res.Invalid {
		attrs[AttrToolInvalid] = true
	}
	if res.Summary != "" {
		attrs[AttrToolSummary] = res.Summary
	}
	if res.CheckpointID != "" {
		attrs[AttrCheckpointID] = res.CheckpointID
	}
	if res.EditID != "" {
		attrs[AttrEditID] = res.EditID
	}
	st, msg := statusOf(err)
	if st == StatusOK && !res.OK {
		st, msg = StatusError, res.Summary
	}
	if st != StatusOK {
		class := res.ErrorClass
		if class == "" {
			class = "_OTHER"
		}
		attrs[AttrErrorType] = class
	}
	t.sp.end(st, msg, attrs)
}
