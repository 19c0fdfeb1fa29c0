package trace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/redact"
)

// Options configure a Recorder. The zero value records to nothing but still
// tracks usage and cost; set StateDir for the local store.
type Options struct {
	// StateDir is the server's state directory; traces go to StateDir/traces.
	// Empty: no local store.
	StateDir string
	// Redact masks secrets in every string before it is stored or exported.
	// Nil: redact.Default().String.
	Redact func(string) string
	// MaxAge and MaxRuns bound the local store (applied when the Recorder is
	// created and after each run ends). Zero means the default (30 days,
	// 200 runs); negative means no limit.
	MaxAge  time.Duration
	MaxRuns int
	// OTLPEndpoint is the `trace.otlpEndpoint` setting: the OTLP/HTTP base
	// URL ("http://collector:4318"; "/v1/traces" is appended unless the
	// path already ends with it). Empty: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
	// (used as is), else $OTEL_EXPORTER_OTLP_ENDPOINT, else no export.
	// "none" disables export whatever the environment says.
	OTLPEndpoint string
	// ExportContent also exports the question, the model's responses and
	// tool arguments over OTLP (they are always kept in the local store).
	ExportContent bool
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// Prices overrides or extends DefaultPrices.
	Prices Prices
	// ServiceVersion is reported as the OTLP resource's service.version.
	ServiceVersion string
	// Now is the clock (nil: time.Now); tests pin it.
	Now func() time.Time
	// OnError is told about store and export failures (nil: ignored). The
	// agent never fails because tracing did.
	OnError func(error)
}

// Default retention.
const (
	DefaultMaxAge  = 30 * 24 * time.Hour
	DefaultMaxRuns = 200
)

// Recorder creates run traces. It is safe for concurrent use. A nil
// *Recorder is valid and records nothing: every method on it and on the
// nil handles it returns is a no-op, so callers never check.
type Recorder struct {
	opts   Options
	redact func(string) string
	store  *Store
	exp    exporter
	prices Prices
	now    func() time.Time

	mu     sync.Mutex
	active map[string]int // run ids being recorded (never pruned)
}

// exporter sends finished spans somewhere other than the local store.
type exporter interface {
	export(sd SpanData)
	flush(ctx context.Context) error
	shutdown(ctx context.Context) error
}

// NewRecorder opens the local store (creating StateDir/traces with mode
// 0700 and applying retention) and, when an endpoint is configured, the
// OTLP exporter.
func NewRecorder(opts Options) (*Recorder, error) {
	r := &Recorder{opts: opts, active: map[string]int{}}
	r.redact = opts.Redact
	if r.redact == nil {
		r.redact = redact.Default().String
	}
	r.now = opts.Now
	if r.now == nil {
		r.now = time.Now
	}
	r.prices = DefaultPrices().With(opts.Prices)
	if opts.Getenv == nil {
		r.opts.Getenv = os.Getenv
	}
	if opts.StateDir != "" {
		st, err := OpenStore(opts.StateDir)
		if err != nil {
			return nil, err
		}
		if err := st.ensureDir(); err != nil {
			return nil, err
		}
		r.store = st
		if _, err := r.prune(); err != nil {
			r.report(err)
		}
	}
	if ep := OTLPEndpoint(opts.OTLPEndpoint, r.opts.Getenv); ep != "" {
		exp, err := newOTLPExporter(ep, opts)
		if err != nil {
			return nil, fmt.Errorf("trace: OTLP export to %s: %w", ep, err)
		}
		r.exp = exp
	}
	return r, nil
}

// OTLPEndpoint resolves the traces URL from the setting and the
// environment (see Options.OTLPEndpoint); "" means no export.
func OTLPEndpoint(setting string, getenv func(string) string) string {
	if setting == "none" {
		return ""
	}
	if setting != "" {
		return tracesURL(setting)
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("OTEL_SDK_DISABLED") == "true" || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return ""
	}
	if u := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
		return withScheme(u)
	}
	if u := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		return tracesURL(u)
	}
	return ""
}

// Store is the local store, or nil.
func (r *Recorder) Store() *Store {
	if r == nil {
		return nil
	}
	return r.store
}

// Prices is the price table in effect.
func (r *Recorder) Prices() Prices {
	if r == nil {
		return DefaultPrices()
	}
	return r.prices
}

// Exporting reports whether spans go to an OTLP endpoint.
func (r *Recorder) Exporting() bool { return r != nil && r.exp != nil }

// Flush sends the spans the exporter has queued.
func (r *Recorder) Flush(ctx context.Context) error {
	if r == nil || r.exp == nil {
		return nil
	}
	return r.exp.flush(ctx)
}

// Close flushes and stops the exporter. Runs still open are not ended.
func (r *Recorder) Close(ctx context.Context) error {
	if r == nil || r.exp == nil {
		return nil
	}
	return r.exp.shutdown(ctx)
}

func (r *Recorder) report(err error) {
	if err != nil && r.opts.OnError != nil {
		r.opts.OnError(err)
	}
}

func (r *Recorder) prune() (int, error) {
	if r.store == nil {
		return 0, nil
	}
	maxAge, maxRuns := r.opts.MaxAge, r.opts.MaxRuns
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	if maxRuns == 0 {
		maxRuns = DefaultMaxRuns
	}
	r.mu.Lock()
	keep := make(map[string]bool, len(r.active))
	for id := range r.active {
		keep[id] = true
	}
	r.mu.Unlock()
	return r.store.Prune(Retention{MaxAge: maxAge, MaxRuns: maxRuns}, r.now(), keep)
}

// RunInfo describes a run being started.
type RunInfo struct {
	ID       string // the run id; also the trace file name
	Question string
	Provider string // model provider, e.g. "openai"
	Model    string // model id
	// Attrs are extra attributes of the run span.
	Attrs map[string]any
}

// Run records one run. Its methods are safe for concurrent use; a nil *Run
// is a no-op.
type Run struct {
	rec     *Recorder
	id      string
	traceID string
	sp      *span
	info    RunInfo

	mu       sync.Mutex
	file     *os.File
	open     map[*span]bool // started, not yet ended child spans
	usage    Usage
	steps    int
	tools    int
	ended    bool
	writeErr error
}

// StartRun starts the run's trace; the run span is written at once (status
// "running") so an interrupted run still appears in `cairn trace list`.
func (r *Recorder) StartRun(info RunInfo) *Run {
	if r == nil {
		return nil
	}
	run := &Run{rec: r, id: info.ID, traceID: newID(16), info: info, open: map[*span]bool{}}
	run.usage.CostKnown = true
	var resumed *SpanData
	if r.store != nil && ValidRunID(info.ID) {
		// A run id that already has a trace is being resumed (cairn.resume):
		// keep its trace id, and carry its usage so budgets span both.
		if prev, err := r.store.Load(info.ID); err == nil && prev.Root() != nil {
			resumed = prev.Root()
			run.traceID = resumed.TraceID
			run.usage = prev.usage()
		}
	}
	attrs := map[string]any{
		AttrOperationName:  OperationInvokeAgent,
		AttrAgentName:      AgentName,
		AttrConversationID: info.ID,
		AttrRunID:          info.ID,
		AttrRunStatus:      StatusRunning,
	}
	if info.Question != "" {
		attrs[AttrRunQuestion] = info.Question
	}
	if info.Provider != "" {
		attrs[AttrProviderName] = info.Provider
	}
	if info.Model != "" {
		attrs[AttrRequestModel] = info.Model
	}
	if resumed != nil {
		attrs[AttrRunResumed] = true
		attrs[AttrRunResumedFrom] = resumed.SpanID
	}
	for k, v := range info.Attrs {
		attrs[k] = v
	}
	run.sp = run.newSpan(KindRun, "invoke_agent "+AgentName, "", attrs)
	if r.store != nil {
		r.mu.Lock()
		r.active[info.ID]++
		r.mu.Unlock()
		f, err := r.store.create(info.ID)
		if err != nil {
			run.writeErr = err
			r.report(err)
		} else {
			run.file = f
		}
	}
	if resumed != nil && resumed.End.IsZero() {
		// Close the interrupted run span (local store only).
		prev := *resumed
		prev.End = run.sp.data.Start
		prev.Status = StatusCancelled
		prev.StatusMessage = "interrupted"
		prev.Attrs = make(map[string]any, len(resumed.Attrs))
		for k, v := range resumed.Attrs {
			prev.Attrs[k] = v
		}
		prev.Attrs[AttrRunStatus] = "interrupted"
		run.write(prev, false)
	}
	// The provisional run record: local store only.
	sd := run.sp.snapshot()
	sd.Status = StatusRunning
	run.write(sd, false)
	return run
}

// ID is the run id ("" for a nil run).
func (run *Run) ID() string {
	if run == nil {
		return ""
	}
	return run.id
}

// TraceID is the run's OpenTelemetry trace id (32 hex digits).
func (run *Run) TraceID() string {
	if run == nil {
		return ""
	}
	return run.traceID
}

// Usage returns the tokens and cost of the model calls ended so far
// (including those before a resumption).
func (run *Run) Usage() Usage {
	if run == nil {
		return Usage{}
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.usage
}

// Err is the first error writing the local trace, if any.
func (run *Run) Err() error {
	if run == nil {
		return nil
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.writeErr
}

// SetAttr sets an attribute of the run span.
func (run *Run) SetAttr(key string, value any) {
	if run == nil {
		return
	}
	run.sp.setAttr(key, value)
}

// AddEvent adds an event to the run span.
func (run *Run) AddEvent(name string, attrs map[string]any) {
	if run == nil {
		return
	}
	run.sp.addEvent(name, attrs)
}

// RunResult is how a run ended.
type RunResult struct {
	Status string // finished, failed, cancelled, interrupted
	Error  string // the failure or cancellation message
	Class  string // the failed event's class
}

// End ends the run: spans still open are ended (ok when the run finished,
// cancelled when it was cancelled, error otherwise), the run span gets the
// totals (tokens, cost, steps, tool calls) and is written, and retention
// is applied. Later calls do nothing.
func (run *Run) End(res RunResult) {
	if run == nil {
		return
	}
	run.mu.Lock()
	if run.ended {
		run.mu.Unlock()
		return
	}
	run.ended = true
	var open []*span
	for s := range run.open {
		open = append(open, s)
	}
	run.mu.Unlock()
	status, msg := StatusOK, ""
	switch res.Status {
	case "finished", "":
	case "cancelled", "interrupted":
		status, msg = StatusCancelled, res.Error
	default:
		status, msg = StatusError, res.Error
	}
	// Innermost first, so a step's end is written after its children's.
	sortSpansDeepFirst(open)
	for _, s := range open {
		m := msg
		if m == "" && status != StatusOK {
			m = "run ended: " + res.Status
		}
		s.end(status, m, nil)
	}
	u := run.Usage()
	run.mu.Lock()
	steps, tools := run.steps, run.tools
	run.mu.Unlock()
	attrs := map[string]any{
		AttrRunStatus:         res.Status,
		AttrUsageInputTokens:  u.InputTokens,
		AttrUsageOutputTokens: u.OutputTokens,
		AttrCostUSD:           u.CostUSD,
		AttrCostKnown:         u.CostKnown,
		AttrRunSteps:          steps,
		AttrRunModelCalls:     u.ModelCalls,
		AttrRunToolCalls:      tools,
	}
	if u.Estimated {
		attrs[AttrUsageEstimated] = true
	}
	if res.Class != "" {
		attrs[AttrErrorClass] = res.Class
		attrs[AttrErrorType] = res.Class
	}
	run.sp.end(status, msg, attrs)
	run.mu.Lock()
	f := run.file
	run.file = nil
	run.mu.Unlock()
	if f != nil {
		if err := f.Close(); err != nil {
			run.fail(err)
		}
	}
	r := run.rec
	if r.store != nil {
		r.mu.Lock()
		if r.active[run.id]--; r.active[run.id] <= 0 {
			delete(r.active, run.id)
		}
		r.mu.Unlock()
		if _, err := r.prune(); err != nil {
			r.report(err)
		}
	}
}

func (run *Run) fail(err error) {
	run.mu.Lock()
	if run.writeErr == nil {
		run.writeErr = err
	}
	run.mu.Unlock()
	run.rec.report(err)
}

// write redacts a finished span and appends it to the run's file and, when
// export is true, hands it to the exporter.
func (run *Run) write(sd SpanData, export bool) {
	r := run.rec
	if n := redactSpan(&sd, r.redact); n > 0 {
		sd.Attrs[AttrTraceRedactions] = int64(n)
	}
	run.mu.Lock()
	f := run.file
	if f != nil {
		b, err := json.Marshal(sd)
		if err == nil {
			b = append(b, '\n')
			_, err = f.Write(b)
		}
		if err != nil && run.writeErr == nil {
			run.writeErr = err
			r.report(fmt.Errorf("trace %s: %w", run.id, err))
		}
	}
	run.mu.Unlock()
	if export && r.exp != nil {
		r.exp.export(sd)
	}
}

// newSpan creates a live span of this run.
func (run *Run) newSpan(kind, name, parent string, attrs map[string]any) *span {
	s := &span{run: run, depth: 0}
	s.data = SpanData{TraceID: run.traceID, SpanID: newID(8), ParentID: parent, Kind: kind, Name: name,
		Start: run.rec.now(), Status: StatusRunning, Attrs: map[string]any{}}
	for k, v := range attrs {
		if nv := normValue(v); nv != nil {
			s.data.Attrs[k] = nv
		}
	}
	return s
}

// child starts a span under parent and tracks it as open.
func (run *Run) child(parent *span, kind, name string, attrs map[string]any) *span {
	s := run.newSpan(kind, name, parent.data.SpanID, attrs)
	s.depth = parent.depth + 1
	run.mu.Lock()
	if run.ended {
		run.mu.Unlock()
		s.ended = true // a span started after the run ended is dropped
		return s
	}
	run.open[s] = true
	run.mu.Unlock()
	return s
}

// span is a live span.
type span struct {
	run   *Run
	depth int

	mu    sync.Mutex
	data  SpanData
	ended bool
}

func (s *span) setAttr(key string, value any) {
	nv := normValue(value)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	if nv == nil {
		delete(s.data.Attrs, key)
		return
	}
	s.data.Attrs[key] = nv
}

func (s *span) addEvent(name string, attrs map[string]any) {
	ev := Event{Name: name, Time: s.run.rec.now()}
	if len(attrs) > 0 {
		ev.Attrs = make(map[string]any, len(attrs))
		for k, v := range attrs {
			if nv := normValue(v); nv != nil {
				ev.Attrs[k] = nv
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.data.Events = append(s.data.Events, ev)
	}
}

// snapshot copies the span's data.
func (s *span) snapshot() SpanData {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copyLocked()
}

func (s *span) copyLocked() SpanData {
	sd := s.data
	sd.Attrs = make(map[string]any, len(s.data.Attrs)+1)
	for k, v := range s.data.Attrs {
		if ss, ok := v.([]string); ok {
			v = append([]string(nil), ss...)
		}
		sd.Attrs[k] = v
	}
	sd.Events = make([]Event, len(s.data.Events))
	for i, ev := range s.data.Events {
		ev2 := ev
		if ev.Attrs != nil {
			ev2.Attrs = make(map[string]any, len(ev.Attrs))
			for k, v := range ev.Attrs {
				ev2.Attrs[k] = v
			}
		}
		sd.Events[i] = ev2
	}
	if len(sd.Events) == 0 {
		sd.Events = nil
	}
	return sd
}

// end finishes the span once, merges attrs, writes and exports it.
func (s *span) end(status, msg string, attrs map[string]any) bool {
	now := s.run.rec.now()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return false
	}
	s.ended = true
	for k, v := range attrs {
		if nv := normValue(v); nv != nil {
			s.data.Attrs[k] = nv
		}
	}
	s.data.End = now
	s.data.Status = status
	s.data.StatusMessage = msg
	sd := s.copyLocked()
	s.mu.Unlock()
	run := s.run
	run.mu.Lock()
	delete(run.open, s)
	run.mu.Unlock()
	run.write(sd, true)
	return true
}

func sortSpansDeepFirst(spans []*span) {
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j].depth > spans[j-1].depth; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
}

// statusOf maps an error to a span status.
func statusOf(err error) (string, string) {
	switch {
	case err == nil:
		return StatusOK, ""
	case errors.Is(err, context.Canceled):
		return StatusCancelled, err.Error()
	default:
		return StatusError, err.Error()
	}
}

func newID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// redactSpan masks secrets in every string of sd and returns how many
// values changed.
func redactSpan(sd *SpanData, f func(string) string) int {
	n := 0
	str := func(s string) string {
		if s == "" {
			return s
		}
		out := f(s)
		if out != s {
			n++
		}
		return out
	}
	vals := func(m map[string]any) {
		for k, v := range m {
			switch x := v.(type) {
			case string:
				m[k] = str(x)
			case []string:
				c := make([]string, len(x))
				for i := range x {
					c[i] = str(x[i])
				}
				m[k] = c
			}
		}
	}
	sd.Name = str(sd.Name)
	sd.StatusMessage = str(sd.StatusMessage)
	if sd.Attrs == nil {
		sd.Attrs = map[string]any{}
	}
	vals(sd.Attrs)
	for i := range sd.Events {
		sd.Events[i].Name = str(sd.Events[i].Name)
		vals(sd.Events[i].Attrs)
	}
	return n
}
