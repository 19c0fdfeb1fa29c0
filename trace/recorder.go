package trace

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

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
	prices Prices
	now    func() time.Time
	tp     *sdktrace.TracerProvider
	tracer oteltrace.Tracer
	export sdktrace.SpanProcessor // the OTLP batch span processor, or nil

	mu     sync.Mutex
	active map[string]int             // run ids being recorded (never pruned)
	runs   map[oteltrace.TraceID]*Run // runs being recorded, for the store processor
}

// NewRecorder opens the local store (creating StateDir/traces with mode
// 0700 and applying retention) and, when an endpoint is configured, the
// OTLP exporter.
func NewRecorder(opts Options) (*Recorder, error) {
	r := &Recorder{opts: opts, active: map[string]int{}, runs: map[oteltrace.TraceID]*Run{}}
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
		exp, err := newOTLPExporter(ep)
		if err != nil {
			return nil, fmt.Errorf("trace: OTLP export to %s: %w", ep, err)
		}
		r.export = exportFilter{rec: r, content: opts.ExportContent,
			next: sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithBatchTimeout(2*time.Second))}
	}
	version := opts.ServiceVersion
	if version == "" {
		version = "dev"
	}
	r.tp = newProvider(r, r.export, version)
	r.tracer = r.tp.Tracer("github.com/cairn-dev/cairn/trace", oteltrace.WithInstrumentationVersion(version))
	return r, nil
}

// redactorOf returns the redaction of the run recorded under a trace id:
// its own (RunInfo.Redact) while it is being recorded, else the recorder's.
func (r *Recorder) redactorOf(id oteltrace.TraceID) func(string) string {
	if run := r.runOf(id); run != nil {
		return run.redact
	}
	return r.redact
}

// runOf returns the run being recorded under a trace id, or nil.
func (r *Recorder) runOf(id oteltrace.TraceID) *Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[id]
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
func (r *Recorder) Exporting() bool { return r != nil && r.export != nil }

// Flush sends the spans the exporter has queued.
func (r *Recorder) Flush(ctx context.Context) error {
	if r == nil || r.export == nil {
		return nil
	}
	return r.export.ForceFlush(ctx)
}

// Close flushes and stops the exporter. Runs still open are not ended (and
// keep writing the local store).
func (r *Recorder) Close(ctx context.Context) error {
	if r == nil || r.export == nil {
		return nil
	}
	return r.export.Shutdown(ctx)
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
	// Redact masks secrets in this run's spans, stored and exported: the
	// run's own redactor, which knows the secret values the run learned on
	// top of the session's. Nil: Options.Redact.
	Redact func(string) string
}

// Run records one run. Its methods are safe for concurrent use; a nil *Run
// is a no-op.
type Run struct {
	rec     *Recorder
	id      string
	traceID oteltrace.TraceID
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
	run := &Run{rec: r, id: info.ID, info: info, open: map[*span]bool{}}
	_, _ = rand.Read(run.traceID[:])
	run.usage.CostKnown = true
	var resumed *SpanData
	if r.store != nil && ValidRunID(info.ID) {
		// A run id that already has a trace is being resumed (cairn.resume):
		// keep its trace id, and carry its usage so budgets span both.
		if prev, err := r.store.Load(info.ID); err == nil && prev.Root() != nil {
			if tid, err := oteltrace.TraceIDFromHex(prev.Root().TraceID); err == nil {
				resumed = prev.Root()
				run.traceID = tid
				run.usage = prev.usage()
			}
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
	r.mu.Lock()
	r.runs[run.traceID] = run
	r.mu.Unlock()
	start := r.now()
	if resumed != nil && resumed.End.IsZero() {
		// Close the interrupted run span (local store only: the SDK never
		// had it in this process).
		prev := *resumed
		prev.End = start
		prev.Status = StatusCancelled
		prev.StatusMessage = "interrupted"
		prev.Attrs = make(map[string]any, len(resumed.Attrs))
		for k, v := range resumed.Attrs {
			prev.Attrs[k] = v
		}
		prev.Attrs[AttrRunStatus] = "interrupted"
		run.write(prev)
	}
	// The store processor writes the provisional run record as it starts.
	run.sp = run.newSpan(KindRun, "invoke_agent "+AgentName, nil, attrs, start)
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
	return run.traceID.String()
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
	if u.CachedInputTokens > 0 {
		attrs[AttrUsageCacheReadTokens] = u.CachedInputTokens
	}
	if u.CacheWriteTokens > 0 {
		attrs[AttrUsageCacheWriteTokens] = u.CacheWriteTokens
	}
	if res.Class != "" {
		attrs[AttrErrorClass] = res.Class
		attrs[AttrErrorType] = res.Class
	}
	run.sp.end(status, msg, attrs)
	run.rec.mu.Lock()
	if run.rec.runs[run.traceID] == run {
		delete(run.rec.runs, run.traceID)
	}
	run.rec.mu.Unlock()
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

// redact masks secrets in one of this run's strings.
func (run *Run) redact(s string) string {
	if run.info.Redact != nil {
		return run.info.Redact(s)
	}
	return run.rec.redact(s)
}

// write redacts a span record and appends it to the run's file.
func (run *Run) write(sd SpanData) {
	redactRecord(&sd, run.redact)
	run.mu.Lock()
	defer run.mu.Unlock()
	f := run.file
	if f == nil {
		return
	}
	b, err := json.Marshal(sd)
	if err == nil {
		b = append(b, '\n')
		_, err = f.Write(b)
	}
	if err != nil && run.writeErr == nil {
		run.writeErr = err
		run.rec.report(fmt.Errorf("trace %s: %w", run.id, err))
	}
}

// newSpan starts an SDK span of this run (under parent, or the run span
// itself when parent is nil).
func (run *Run) newSpan(kind, name string, parent *span, attrs map[string]any, start time.Time) *span {
	ctx := context.WithValue(context.Background(), traceIDKey{}, run.traceID)
	opts := []oteltrace.SpanStartOption{oteltrace.WithTimestamp(start), oteltrace.WithSpanKind(oteltrace.SpanKindInternal)}
	if parent != nil {
		ctx = oteltrace.ContextWithSpan(ctx, parent.otel)
	} else {
		opts = append(opts, oteltrace.WithNewRoot())
	}
	if kind == KindModel {
		opts = append(opts, oteltrace.WithSpanKind(oteltrace.SpanKindClient))
	}
	kvs := append(keyValues(attrs), attribute.String(attrSpanKind, kind))
	opts = append(opts, oteltrace.WithAttributes(kvs...))
	_, sp := run.rec.tracer.Start(ctx, name, opts...)
	return &span{run: run, start: start, otel: sp}
}

// child starts a span under parent and tracks it as open.
func (run *Run) child(parent *span, kind, name string, attrs map[string]any) *span {
	run.mu.Lock()
	ended := run.ended
	run.mu.Unlock()
	if ended {
		// A span started after the run ended is dropped.
		return &span{run: run, start: run.rec.now(), ended: true}
	}
	s := run.newSpan(kind, name, parent, attrs, run.rec.now())
	s.depth = parent.depth + 1
	run.mu.Lock()
	run.open[s] = true
	run.mu.Unlock()
	return s
}

// span is a live span: an SDK span and what Cairn tracks of it.
type span struct {
	run   *Run
	depth int
	start time.Time
	otel  oteltrace.Span // nil for a dropped span

	mu    sync.Mutex
	ended bool
}

// setAttr sets an attribute; a nil value is ignored (OpenTelemetry has no
// way to remove one).
func (s *span) setAttr(key string, value any) {
	nv := normValue(value)
	if nv == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.otel.SetAttributes(keyValue(key, nv))
	}
}

func (s *span) addEvent(name string, attrs map[string]any) {
	now := s.run.rec.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.otel.AddEvent(name, oteltrace.WithTimestamp(now), oteltrace.WithAttributes(keyValues(attrs)...))
	}
}

// end finishes the span once with attrs added; the store processor writes
// it and the export processor queues it.
func (s *span) end(status, msg string, attrs map[string]any) bool {
	now := s.run.rec.now()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return false
	}
	s.ended = true
	s.mu.Unlock()
	kvs := append(keyValues(attrs), attribute.String(attrSpanStatus, status))
	s.otel.SetAttributes(kvs...)
	switch status {
	case StatusOK:
		s.otel.SetStatus(codes.Ok, "")
	case StatusError, StatusCancelled:
		s.otel.SetStatus(codes.Error, msg)
	}
	run := s.run
	run.mu.Lock()
	delete(run.open, s)
	run.mu.Unlock()
	s.otel.End(oteltrace.WithTimestamp(now))
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

// redactRecord masks secrets in every string of sd; a span that had values
// masked carries their number as cairn.trace.redactions.
func redactRecord(sd *SpanData, f func(string) string) {
	if n := redactSpan(sd, f); n > 0 {
		sd.Attrs[AttrTraceRedactions] = int64(n)
	}
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
