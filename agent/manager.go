package agent

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/tokencount"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/trace"
	"github.com/cairn-dev/cairn/workspace"
)

// Config is what runs need that does not change between them.
type Config struct {
	Provider model.Provider
	// ProviderErr says why Provider is nil when settings named one that
	// could not be built (an unknown provider, a missing script): a run
	// refused for want of a provider reports it as the cause.
	ProviderErr     error
	ModelName       string
	ContextWindow   int
	MaxOutputTokens int
	MaxSteps        int           // default 25
	MaxRetries      int           // transient model failures retried per call; default 3
	MaxInvalidTurns int           // consecutive turns of only invalid tool calls before failing; default 2
	MaxRepeats      int           // identical calls allowed before loop detection; default 3
	MaxDuration     time.Duration // wall-clock limit of a run; 0 = none
	MaxTotalTokens  int           // input+output tokens a run may use; 0 = none
	MaxCostUSD      float64       // what a run may cost at the price table's rates; 0 = none
	// Prices is the `model.prices` setting: entries that override or
	// extend trace.DefaultPrices (self-hosted models, new price lists).
	Prices trace.Prices
	// IndexWait bounds how long a question waits for the code index's
	// first build before its context is built: 0 = DefaultIndexWait,
	// negative = as long as it takes. The files the question is about are
	// indexed first either way.
	IndexWait time.Duration
	StateDir  string
	// NewID makes run and edit ids (checkpoint.NewID when nil): evals inject
	// a deterministic one so token counts repeat exactly.
	NewID func(prefix string) string
}

func (c *Config) defaults() {
	if c.MaxSteps == 0 {
		c.MaxSteps = 25
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 3
	}
	if c.MaxInvalidTurns == 0 {
		c.MaxInvalidTurns = 2
	}
	if c.MaxRepeats == 0 {
		c.MaxRepeats = 3
	}
	if c.ContextWindow == 0 {
		c.ContextWindow = 32000
	}
	if c.MaxOutputTokens == 0 {
		c.MaxOutputTokens = 4096
	}
	if c.NewID == nil {
		c.NewID = checkpoint.NewID
	}
}

// Deps are the engines runs use. Optional ones may be nil.
type Deps struct {
	WS          *workspace.Workspace
	Registry    *tools.Registry
	Gate        *tools.Gate
	Checkpoints *checkpoint.Store
	Diagnostics tools.DiagnosticsSource
	// Redactor masks secrets in everything bound for the model; nil uses
	// redact.Default().
	Redactor *redact.Redactor
	// Tracer records a span per run, step, model call and tool call; nil
	// records nothing.
	Tracer *trace.Recorder
	// Index is the code index: the context engine's repo map, definitions
	// and search hits, and the search_code and repo_map tools. Nil: none.
	Index codeindex.Index
	// FaultPoint, when set, is called at each named point of a run, an
	// accept and an undo where a crash test stops the process (see
	// docs/failures.md). Only tests set it: fault injection is not part of
	// the product.
	FaultPoint func(point string)
}

// Manager owns the runs and proposed edits of one workspace.
type Manager struct {
	mu       sync.Mutex
	cfg      Config
	ws       *workspace.Workspace
	registry *tools.Registry
	gate     *tools.Gate
	cps      *checkpoint.Store
	diags    tools.DiagnosticsSource
	redactor *redact.Redactor
	tracer   *trace.Recorder
	index    codeindex.Index
	runs     map[string]*Run // running now; ended runs are retired (retention.go)
	recent   []endedRun      // the last recentRuns runs that ended
	edits    map[string]*Edit
	order    []string // edit ids in proposal order
	// views counts copies of edits (editCopy), taken with the copy under mu,
	// so a larger count is never an older state of the edit.
	views   uint64
	threads *threadStore
	fault   func(point string)
	// endedEmit receives the events of runs that ended before this
	// session (an accept's checkpoint event); nil drops them.
	endedEmit func(protocol.RunEvent)
	// onIndexWait hears a question waiting for the code index (progress).
	onIndexWait func(IndexWait)
}

// SetIndexWaitObserver has f told how each question's wait for the code
// index goes (the server shows it as work-done progress). f is called from
// the run's goroutine and must not block.
func (m *Manager) SetIndexWaitObserver(f func(IndexWait)) {
	m.mu.Lock()
	m.onIndexWait = f
	m.mu.Unlock()
}

func (m *Manager) indexWaitObserver() func(IndexWait) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.onIndexWait
}

// SetEndedRunEvents sends the events of runs that ended before this
// session, such as the checkpoint event of an accept made after a
// restart, to emit (the session's client).
func (m *Manager) SetEndedRunEvents(emit func(protocol.RunEvent)) {
	m.mu.Lock()
	m.endedEmit = emit
	m.mu.Unlock()
}

// NewManager returns a manager.
func NewManager(cfg Config, d Deps) *Manager {
	cfg.defaults()
	if d.Redactor == nil {
		d.Redactor = redact.Default()
	}
	if d.Gate == nil {
		d.Gate = tools.NewGate(tools.DefaultPolicy(), false, nil, nil)
	}
	m := &Manager{cfg: cfg, ws: d.WS, registry: d.Registry, gate: d.Gate, cps: d.Checkpoints, diags: d.Diagnostics,
		redactor: d.Redactor, tracer: d.Tracer, index: d.Index, runs: map[string]*Run{}, edits: map[string]*Edit{},
		fault: d.FaultPoint}
	m.threads = newThreadStore(cfg.StateDir, m.runRedactor)
	return m
}

// runRedactor returns the redactor of a running run (it knows the values
// the run learned), else the session's.
func (m *Manager) runRedactor(runID string) *redact.Redactor {
	if r, ok := m.live(runID); ok && runID != "" {
		return r.red()
	}
	return m.redactor
}

// faultPoint calls the crash tests' hook, if any, at a named point.
func (m *Manager) faultPoint(point string) {
	if m.fault != nil {
		m.fault(point)
	}
}

// SetConfig replaces the run configuration (a settings change); running runs keep theirs.
func (m *Manager) SetConfig(cfg Config) {
	cfg.defaults()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cfg = cfg
}

// Config returns the current configuration.
func (m *Manager) Config() Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

// Workspace returns the workspace.
func (m *Manager) Workspace() *workspace.Workspace { return m.ws }

// Checkpoints returns the checkpoint store.
func (m *Manager) Checkpoints() *checkpoint.Store { return m.cps }

func (m *Manager) toolSchemaTokens() int {
	n := 0
	for _, s := range m.registry.Specs() {
		n += tokencount.Count(s.Name) + tokencount.Count(s.Description) + tokencount.Count(string(s.Schema)) + 8
	}
	return n
}

// noProvider is the error of a run that cannot start for want of a
// provider, naming the cause when there is one; nil when there is a provider.
func (cfg Config) noProvider() error {
	switch {
	case cfg.Provider != nil:
		return nil
	case cfg.ProviderErr != nil:
		return fmt.Errorf("no usable model provider: %w", cfg.ProviderErr)
	}
	return fmt.Errorf("no model provider is configured: set model.provider (or CAIRN_PROVIDER)")
}

// Start begins a run in the background and returns it at once. emit
// receives every event, in order, from the run's goroutine.
func (m *Manager) Start(parent context.Context, req AskRequest, emit func(protocol.RunEvent)) (*Run, error) {
	m.mu.Lock()
	cfg := m.cfg
	m.mu.Unlock()
	if req.Provider != nil {
		cfg.Provider, cfg.ProviderErr = req.Provider, nil
	}
	if err := cfg.noProvider(); err != nil {
		return nil, err
	}
	if req.Model != "" {
		cfg.ModelName = req.Model
	}
	runID := cfg.NewID("run")
	turn := contextengine.Turn{Question: req.Question}
	if req.Abs != "" {
		turn.File = m.ws.Rel(req.Abs)
	}
	if req.Selection != nil {
		turn.StartLine, turn.EndLine = req.Selection.StartLine, req.Selection.EndLine
	}
	threadID, history, err := m.threads.begin(req.ThreadID, cfg.NewID("thread"), runID, turn)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(parent)
	r := &Run{ID: runID, ThreadID: threadID, Question: req.Question, Started: time.Now(), req: req, ctx: ctx, cancel: cancel,
		drafts: workspace.NewDrafts(m.ws), line: newEventLine(0, emit), state: StateRunning, done: make(chan struct{}), history: history}
	r.m = m
	r.cfg = cfg
	if cfg.StateDir != "" {
		j, err := checkpoint.OpenJournal(journalPath(cfg.StateDir, r.ID))
		if err != nil {
			slog.Error("cannot open the run journal; the run will not be resumable", "run", r.ID, "err", err)
		} else {
			r.journal = j
			rel := ""
			if req.Abs != "" {
				rel = m.ws.Rel(req.Abs)
			}
			started := map[string]any{"question": req.Question, "file": rel, "selection": req.Selection, "threadId": threadID}
			if req.Model != "" {
				started["model"] = req.Model
			}
			r.jrnl(checkpoint.RecRunStarted, 0, started)
		}
	}
	r.tr = m.tracer.StartRun(trace.RunInfo{ID: r.ID, Question: req.Question, Provider: providerName(cfg.Provider), Model: cfg.ModelName, Redact: r.red().String})
	m.mu.Lock()
	m.runs[r.ID] = r
	m.mu.Unlock()
	go func() {
		r.loop()
		cancel(nil)
		m.retire(r)
	}()
	return r, nil
}

func providerName(p model.Provider) string {
	if p == nil {
		return ""
	}
	return p.Name()
}

// Tracer returns the trace recorder (nil when tracing is off).
func (m *Manager) Tracer() *trace.Recorder { return m.tracer }

// Run returns a run by id: a running one, or a summary of one that ended
// (read from its journal).
func (m *Manager) Run(id string) (*Run, bool) {
	if r, ok := m.live(id); ok {
		return r, true
	}
	return m.ended(id)
}

// Runs returns the running runs and the most recently ended ones, oldest
// first.
func (m *Manager) Runs() []*Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Run, 0, len(m.runs)+len(m.recent))
	for _, r := range m.runs {
		out = append(out, r)
	}
	for _, e := range m.recent {
		if _, live := m.runs[e.id]; !live {
			out = append(out, m.run(e))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// CancelAll cancels every running run (the client went away).
func (m *Manager) CancelAll(cause error) {
	for _, r := range m.Runs() {
		r.cancel(cause)
	}
}
