package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Store is the local trace store: one JSON Lines file per run,
// <stateDir>/traces/<runID>.jsonl, each line a SpanData written when the
// span ended (the run span is also written first, with status "running",
// when the run starts; a later line for the same span id replaces an
// earlier one). Directories are 0700 and files 0600.
type Store struct {
	dir string
}

// Ext is the trace file extension.
const Ext = ".jsonl"

// ErrNotFound is returned for a run without a trace.
var ErrNotFound = errors.New("no trace for that run")

var runIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidRunID reports whether id can name a trace file.
func ValidRunID(id string) bool { return runIDRe.MatchString(id) && !strings.Contains(id, "..") }

// OpenStore returns the store under stateDir/traces. Nothing is created
// until a trace is written.
func OpenStore(stateDir string) (*Store, error) {
	if stateDir == "" {
		return nil, errors.New("trace: no state directory")
	}
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return nil, err
	}
	return &Store{dir: filepath.Join(abs, "traces")}, nil
}

// Dir is the directory holding the trace files.
func (s *Store) Dir() string { return s.dir }

func (s *Store) ensureDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("trace: creating %s: %w", s.dir, err)
	}
	// MkdirAll leaves an existing directory's mode alone: tighten it.
	if err := os.Chmod(s.dir, 0o700); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	return nil
}

func (s *Store) path(runID string) (string, error) {
	if !ValidRunID(runID) {
		return "", fmt.Errorf("trace: invalid run id %q", runID)
	}
	return filepath.Join(s.dir, runID+Ext), nil
}

// create opens a run's trace file for appending (mode 0600).
func (s *Store) create(runID string) (*os.File, error) {
	p, err := s.path(runID)
	if err != nil {
		return nil, err
	}
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("trace: %w", err)
	}
	return f, nil
}

// Load reads a run's trace. Lines that do not parse (a line torn by a
// crash) are skipped.
func (s *Store) Load(runID string) (*Trace, error) {
	p, err := s.path(runID)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q", ErrNotFound, runID)
	}
	if err != nil {
		return nil, err
	}
	return parseTrace(runID, data), nil
}

func parseTrace(runID string, data []byte) *Trace {
	t := &Trace{RunID: runID}
	index := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var sd SpanData
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&sd); err != nil || sd.SpanID == "" {
			continue
		}
		if i, ok := index[sd.SpanID]; ok {
			// A later record of the same span (the run span's final
			// record) replaces the earlier one and moves to the end.
			t.Spans = append(t.Spans[:i], t.Spans[i+1:]...)
			for id, j := range index {
				if j > i {
					index[id] = j - 1
				}
			}
		}
		index[sd.SpanID] = len(t.Spans)
		t.Spans = append(t.Spans, sd)
	}
	return t
}

// Delete removes a run's trace.
func (s *Store) Delete(runID string) error {
	p, err := s.path(runID)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w %q", ErrNotFound, runID)
		}
		return err
	}
	return nil
}

// Summary is one line of `cairn trace list`.
type Summary struct {
	RunID    string        `json:"runId"`
	TraceID  string        `json:"traceId"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"durationNs"`
	Status   string        `json:"status"` // finished, failed, cancelled, interrupted; running: no end recorded
	Error    string        `json:"error,omitempty"`
	Question string        `json:"question,omitempty"`
	Provider string        `json:"provider,omitempty"`
	Model    string        `json:"model,omitempty"`
	Usage    Usage         `json:"usage"`
	Steps    int           `json:"steps"`
	Spans    int           `json:"spans"`
}

// Summarize computes a trace's summary. Tokens and cost are summed over
// the model spans, so an interrupted run (no final run record) and a
// resumed one (a run span per resumption) count everything they used;
// status, error and question come from the latest run span.
func (t *Trace) Summarize() Summary {
	s := Summary{RunID: t.RunID, Spans: len(t.Spans), Status: StatusRunning}
	roots := t.Roots()
	var last time.Time
	for i := range t.Spans {
		if e := t.Spans[i].End; e.After(last) {
			last = e
		}
	}
	if len(roots) > 0 {
		first, root := roots[0], roots[len(roots)-1]
		s.TraceID = root.TraceID
		s.Start = first.Start
		s.Question = AttrString(root.Attrs, AttrRunQuestion)
		s.Provider = AttrString(root.Attrs, AttrProviderName)
		s.Model = AttrString(root.Attrs, AttrRequestModel)
		if st := AttrString(root.Attrs, AttrRunStatus); st != "" {
			s.Status = st
		}
		s.Error = root.StatusMessage
		if !root.End.IsZero() {
			last = root.End
		}
		if !last.IsZero() {
			s.Duration = last.Sub(first.Start)
		}
	}
	s.Usage = t.usage()
	for i := range t.Spans {
		if t.Spans[i].Kind == KindStep {
			s.Steps++
		}
	}
	return s
}

// usage sums the model spans.
func (t *Trace) usage() Usage {
	u := Usage{CostKnown: true}
	for i := range t.Spans {
		sp := &t.Spans[i]
		if sp.Kind != KindModel || sp.End.IsZero() {
			continue
		}
		u.InputTokens += AttrInt(sp.Attrs, AttrUsageInputTokens)
		u.OutputTokens += AttrInt(sp.Attrs, AttrUsageOutputTokens)
		u.CachedInputTokens += AttrInt(sp.Attrs, AttrUsageCacheReadTokens)
		u.CacheWriteTokens += AttrInt(sp.Attrs, AttrUsageCacheWriteTokens)
		u.CostUSD += AttrFloat(sp.Attrs, AttrCostUSD)
		u.CostKnown = u.CostKnown && AttrBool(sp.Attrs, AttrCostKnown)
		u.Estimated = u.Estimated || AttrBool(sp.Attrs, AttrUsageEstimated)
		u.ModelCalls++
	}
	u.CostUSD = roundCost(u.CostUSD)
	return u
}

// entry is a trace file in the store.
type entry struct {
	id  string
	mod time.Time
}

func (s *Store) entries() ([]entry, error) {
	des, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, de := range des {
		name := de.Name()
		if de.IsDir() || !strings.HasSuffix(name, Ext) {
			continue
		}
		id := strings.TrimSuffix(name, Ext)
		if !ValidRunID(id) {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, entry{id: id, mod: info.ModTime()})
	}
	return out, nil
}

// List summarizes every stored run, newest first.
func (s *Store) List() ([]Summary, error) {
	es, err := s.entries()
	if err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(es))
	for _, e := range es {
		t, err := s.Load(e.id)
		if err != nil {
			continue // deleted meanwhile
		}
		sum := t.Summarize()
		if sum.Start.IsZero() {
			sum.Start = e.mod
		}
		out = append(out, sum)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.After(out[j].Start)
		}
		return out[i].RunID < out[j].RunID
	})
	return out, nil
}

// Resolve returns the run id that id names: the id itself, or the one
// stored run whose id starts with it.
func (s *Store) Resolve(id string) (string, error) {
	if p, err := s.path(id); err == nil {
		if _, err := os.Stat(p); err == nil {
			return id, nil
		}
	}
	es, err := s.entries()
	if err != nil {
		return "", err
	}
	var match []string
	for _, e := range es {
		if strings.HasPrefix(e.id, id) {
			match = append(match, e.id)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("%w %q", ErrNotFound, id)
	case 1:
		return match[0], nil
	default:
		sort.Strings(match)
		return "", fmt.Errorf("trace: %q is ambiguous: %s", id, strings.Join(match, ", "))
	}
}

// Retention bounds the store. A zero or negative field is no limit.
type Retention struct {
	MaxAge  time.Duration // remove traces last written longer ago
	MaxRuns int           // keep at most this many (the most recently written)
}

// Prune removes traces beyond the retention limits, never those in keep
// (runs being recorded), and returns how many it removed.
func (s *Store) Prune(ret Retention, now time.Time, keep map[string]bool) (int, error) {
	es, err := s.entries()
	if err != nil {
		return 0, err
	}
	sort.Slice(es, func(i, j int) bool {
		if !es[i].mod.Equal(es[j].mod) {
			return es[i].mod.After(es[j].mod)
		}
		return es[i].id > es[j].id
	})
	removed := 0
	var firstErr error
	kept := 0 // runs being recorded count toward MaxRuns
	for _, e := range es {
		if keep[e.id] {
			kept++
		}
	}
	for _, e := range es {
		if keep[e.id] {
			continue
		}
		tooOld := ret.MaxAge > 0 && now.Sub(e.mod) > ret.MaxAge
		tooMany := ret.MaxRuns > 0 && kept >= ret.MaxRuns
		if !tooOld && !tooMany {
			kept++
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, e.id+Ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		removed++
	}
	return removed, firstErr
}
