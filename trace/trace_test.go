package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/tokencount"
)

// testToken has the shape of a GitHub personal access token.
const testToken = "ghp_Zq8Lr2Vb7Nk4Tx1Mw9Pc3Hs6Jd5Fg0Ay2Ue8"

var update = flag.Bool("update", false, "rewrite golden files")

// noRedact keeps test traces readable where redaction is not the point.
func noRedact(s string) string { return s }

// scriptedRun drives the API as the agent loop does for a three-step run:
// read a file, propose an edit (approved), answer.
func scriptedRun(t *testing.T, rec *Recorder, id string) *Run {
	t.Helper()
	run := rec.StartRun(RunInfo{ID: id, Question: "Make Greet handle an empty name.", Provider: "openai", Model: "gpt-4o-mini"})

	s1 := run.StartStep(1)
	m := s1.StartModelCall(ModelRequest{Provider: "openai", Model: "gpt-4o-mini", MaxTokens: 4096})
	m.FirstToken()
	m.End(ModelResult{ResponseID: "chatcmpl-1", Text: "Let me look at Greet.", FinishReason: "tool_calls",
		ToolCalls:   []RecordedToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"greet/greet.go"}`}},
		InputTokens: 1000, OutputTokens: 20, Attempts: 1}, nil)
	tc := s1.StartToolCall(ToolRequest{CallID: "call_1", Name: "read_file", Arguments: `{"path":"greet/greet.go"}`})
	tc.SetApproval("read", "auto", "")
	tc.End(ToolResult{OK: true, Summary: "read greet/greet.go:1-14", OutputBytes: 312}, nil)
	s1.End(nil)

	s2 := run.StartStep(2)
	m = s2.StartModelCall(ModelRequest{Provider: "openai", Model: "gpt-4o-mini", MaxTokens: 4096, ContextDegraded: true})
	m.End(ModelResult{ResponseID: "chatcmpl-2", FinishReason: "tool_calls",
		ToolCalls:   []RecordedToolCall{{ID: "call_2", Name: "edit_file", Arguments: `{"path":"greet/greet.go","oldText":"a","newText":"b"}`}},
		InputTokens: 1400, OutputTokens: 60}, nil)
	tc = s2.StartToolCall(ToolRequest{CallID: "call_2", Name: "edit_file", Arguments: `{"path":"greet/greet.go","oldText":"a","newText":"b"}`})
	tc.SetApproval("write", "allow_once", "audit-7")
	tc.End(ToolResult{OK: true, Summary: "proposed edit", OutputBytes: 40, Redactions: 1, EditID: "edit-1", CheckpointID: "cp-2"}, nil)
	s2.SetCheckpoint("cp-2")
	s2.End(nil)

	s3 := run.StartStep(3)
	m = s3.StartModelCall(ModelRequest{Provider: "openai", Model: "gpt-4o-mini", MaxTokens: 4096})
	m.End(ModelResult{ResponseID: "chatcmpl-3", Text: "Greet now returns \"Hello, world\" for an empty name.", FinishReason: "stop",
		InputTokens: 1500, CachedInputTokens: 1024, OutputTokens: 30}, nil)
	// The loop returns without ending step 3: Run.End closes it.
	run.End(RunResult{Status: "finished"})
	return run
}

var (
	hexID    = regexp.MustCompile(`\b[0-9a-f]{32}\b|\b[0-9a-f]{16}\b`)
	msAttr   = regexp.MustCompile(`("cairn\.(model\.latency_ms|model\.ttft_ms|tool\.duration_ms)": )\d+`)
	timeJSON = regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)"`)
	treeDur  = regexp.MustCompile(`\] [0-9.]+(ns|µs|ms|s|m)+\b`)
	treeMS   = regexp.MustCompile(`\b(ms|ttft_ms)=\d+`)
)

// mask replaces ids (numbered in order of appearance), times and durations.
func mask(s string) string {
	ids := map[string]string{}
	s = hexID.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := ids[id]; !ok {
			kind := "span"
			if len(id) == 32 {
				kind = "trace"
			}
			ids[id] = fmt.Sprintf("<%s-%d>", kind, len(ids)+1)
		}
		return ids[id]
	})
	s = msAttr.ReplaceAllString(s, "${1}0")
	s = timeJSON.ReplaceAllString(s, `"<time>"`)
	s = treeDur.ReplaceAllString(s, "] <dur>")
	s = treeMS.ReplaceAllString(s, "${1}=<ms>")
	return s
}

func TestGoldenScriptedRun(t *testing.T) {
	rec, err := NewRecorder(Options{StateDir: t.TempDir(), Redact: noRedact, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	run := scriptedRun(t, rec, "run-golden")
	if err := run.Err(); err != nil {
		t.Fatal(err)
	}
	tr, err := rec.Store().Load("run-golden")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTree(&buf, tr); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("\n")
	sum := tr.Summarize()
	sum.Start, sum.Duration = time.Time{}, 0
	sj, _ := json.MarshalIndent(sum, "", "  ")
	buf.Write(sj)
	buf.WriteString("\n\n")
	// The document, spans in a stable order (by kind, then step, then name).
	sort.SliceStable(tr.Spans, func(i, j int) bool {
		a, b := tr.Spans[i], tr.Spans[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if sa, sb := AttrInt(a.Attrs, AttrStep), AttrInt(b.Attrs, AttrStep); sa != sb {
			return sa < sb
		}
		return a.Name < b.Name
	})
	doc, _ := json.MarshalIndent(tr, "", "  ")
	buf.Write(doc)
	buf.WriteString("\n")
	got := mask(buf.String())

	golden := filepath.Join("testdata", "scripted_run.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("trace differs from %s (run with -update to accept):\n%s", golden, got)
	}

	// Totals on the run span and from Usage agree: 3900 in (1024 of them
	// cached), 110 out at gpt-4o-mini prices (0.15 / 0.075 cached / 0.60
	// per 1M).
	u := run.Usage()
	wantCost := ((3900-1024)*0.15 + 1024*0.075 + 110*0.60) / 1e6
	if u.InputTokens != 3900 || u.CachedInputTokens != 1024 || tr.Summarize().Usage.CachedInputTokens != 1024 || u.OutputTokens != 110 || !u.CostKnown || fmt.Sprintf("%.9f", u.CostUSD) != fmt.Sprintf("%.9f", wantCost) || u.ModelCalls != 3 {
		t.Errorf("usage %+v, want 3900/110 tokens costing %.9f", u, wantCost)
	}
	if fmt.Sprintf("%.9f", tr.Summarize().Usage.CostUSD) != fmt.Sprintf("%.9f", wantCost) {
		t.Errorf("stored cost %v", tr.Summarize().Usage.CostUSD)
	}

	// Replay data: three responses in order, with the tool calls.
	resps, err := tr.Responses()
	if err != nil {
		t.Fatal(err)
	}
	if len(resps) != 3 || resps[0].ToolCalls[0].Name != "read_file" || resps[1].ToolCalls[0].Arguments != `{"path":"greet/greet.go","oldText":"a","newText":"b"}` ||
		!strings.HasPrefix(resps[2].Text, "Greet now") || resps[2].FinishReason != "stop" || resps[0].Step != 1 || resps[2].InputTokens != 1500 {
		t.Errorf("responses: %+v", resps)
	}
}

func TestStructure(t *testing.T) {
	rec, err := NewRecorder(Options{StateDir: t.TempDir(), Redact: noRedact, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	scriptedRun(t, rec, "run-s")
	tr, err := rec.Store().Load("run-s")
	if err != nil {
		t.Fatal(err)
	}
	root := tr.Root()
	if root == nil || root.Status != StatusOK || root.End.IsZero() || tr.Spans[len(tr.Spans)-1].Kind != KindRun {
		t.Fatalf("run span: %+v", root)
	}
	steps := tr.Children(root.SpanID)
	if len(steps) != 3 {
		t.Fatalf("%d steps", len(steps))
	}
	for i, st := range steps {
		if st.Kind != KindStep || st.TraceID != root.TraceID || st.End.Before(st.Start) || st.Status != StatusOK {
			t.Errorf("step %d: %+v", i+1, st)
		}
		for _, c := range tr.Children(st.SpanID) {
			if c.Start.Before(st.Start) || c.End.After(st.End) {
				t.Errorf("%s is not inside %s", c.Name, st.Name)
			}
		}
	}
	kids := tr.Children(steps[0].SpanID)
	if len(kids) != 2 || kids[0].Name != "chat gpt-4o-mini" || kids[1].Name != "execute_tool read_file" {
		t.Fatalf("step 1 children: %v", kids)
	}
	m := kids[0]
	for k, want := range map[string]string{AttrOperationName: "chat", AttrProviderName: "openai", AttrRequestModel: "gpt-4o-mini",
		AttrResponseID: "chatcmpl-1", AttrUsageInputTokens: "1000", AttrUsageOutputTokens: "20", AttrModelToolCalls: "1", AttrContextDegraded: "false"} {
		if got := AttrString(m.Attrs, k); got != want {
			t.Errorf("model %s = %q, want %q", k, got, want)
		}
	}
	if got := AttrStrings(m.Attrs, AttrResponseFinish); len(got) != 1 || got[0] != "tool_calls" {
		t.Errorf("finish reasons %v", got)
	}
	tool := tr.Children(steps[1].SpanID)[1]
	for k, want := range map[string]string{AttrToolName: "edit_file", AttrToolCallID: "call_2", AttrToolRisk: "write", AttrToolApproval: "allow_once",
		AttrApprovalID: "audit-7", AttrToolOK: "true", AttrToolOutputBytes: "40", AttrToolRedactions: "1", AttrCheckpointID: "cp-2", AttrEditID: "edit-1"} {
		if got := AttrString(tool.Attrs, k); got != want {
			t.Errorf("tool %s = %q, want %q", k, got, want)
		}
	}
}

func TestNilRecorderIsNoOp(t *testing.T) {
	var rec *Recorder
	run := rec.StartRun(RunInfo{ID: "x"})
	st := run.StartStep(1)
	m := st.StartModelCall(ModelRequest{})
	m.FirstToken()
	m.SetAttr("k", 1)
	m.End(ModelResult{}, nil)
	tc := st.StartToolCall(ToolRequest{})
	tc.SetApproval("read", "auto", "")
	tc.SetAttr("k", 1)
	tc.End(ToolResult{}, nil)
	st.SetCheckpoint("c")
	st.End(nil)
	run.SetAttr("k", 1)
	run.AddEvent("e", nil)
	run.End(RunResult{})
	if run.Usage() != (Usage{}) || run.ID() != "" || run.Err() != nil || rec.Store() != nil || rec.Flush(context.Background()) != nil || rec.Close(context.Background()) != nil {
		t.Error("nil recorder did something")
	}
}

func TestConcurrentUse(t *testing.T) {
	rec, err := NewRecorder(Options{StateDir: t.TempDir(), Redact: noRedact, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := rec.StartRun(RunInfo{ID: fmt.Sprintf("run-c%d", r), Provider: "scripted"})
			var inner sync.WaitGroup
			for s := 1; s <= 5; s++ {
				inner.Add(1)
				go func() {
					defer inner.Done()
					st := run.StartStep(s)
					m := st.StartModelCall(ModelRequest{Provider: "scripted", Model: "s"})
					go m.FirstToken()
					m.FirstToken()
					m.End(ModelResult{InputTokens: 10, OutputTokens: 1}, nil)
					for c := 0; c < 3; c++ {
						tc := st.StartToolCall(ToolRequest{CallID: fmt.Sprint(c), Name: "read_file"})
						go tc.SetAttr("x", c)
						tc.End(ToolResult{OK: true}, nil)
					}
					_ = run.Usage()
					st.End(nil)
				}()
			}
			// End races with the steps: spans started after End are dropped.
			inner.Wait()
			run.End(RunResult{Status: "finished"})
		}()
	}
	wg.Wait()
	list, err := rec.Store().List()
	if err != nil || len(list) != 4 {
		t.Fatalf("list: %v, %v", list, err)
	}
	for _, s := range list {
		if s.Usage.InputTokens != 50 || s.Steps != 5 || s.Spans != 1+5*(1+1+3) || s.Usage.CostUSD != 0 || !s.Usage.CostKnown {
			t.Errorf("%+v", s)
		}
	}
}

func TestRunEndClosesOpenSpans(t *testing.T) {
	rec, err := NewRecorder(Options{StateDir: t.TempDir(), Redact: noRedact, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	run := rec.StartRun(RunInfo{ID: "run-cancel"})
	st := run.StartStep(1)
	st.StartModelCall(ModelRequest{Provider: "openai", Model: "gpt-4o"})
	run.End(RunResult{Status: "cancelled", Error: "cancelled by the user"})
	run.End(RunResult{Status: "finished"}) // ignored
	st.End(nil)                            // ignored
	tr, _ := rec.Store().Load("run-cancel")
	if len(tr.Spans) != 3 {
		t.Fatalf("%d spans", len(tr.Spans))
	}
	// Innermost first: model, step, run.
	for i, k := range []string{KindModel, KindStep, KindRun} {
		if sp := tr.Spans[i]; sp.Kind != k || sp.Status != StatusCancelled || sp.End.IsZero() {
			t.Errorf("span %d: %s %s", i, sp.Kind, sp.Status)
		}
	}
	if s := tr.Summarize(); s.Status != "cancelled" || s.Error != "cancelled by the user" {
		t.Errorf("summary %+v", s)
	}
}

func TestInterruptedRunAndTornLine(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(Options{StateDir: dir, Redact: noRedact, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	run := rec.StartRun(RunInfo{ID: "run-int", Question: "q?", Provider: "anthropic", Model: "claude-sonnet-4-5-20250929"})
	st := run.StartStep(1)
	m := st.StartModelCall(ModelRequest{Provider: "anthropic", Model: "claude-sonnet-4-5-20250929"})
	m.End(ModelResult{InputTokens: 1_000_000, OutputTokens: 100_000}, nil)
	// The process dies here, mid-write.
	f, _ := os.OpenFile(filepath.Join(dir, "traces", "run-int.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"traceId":"ab`)
	f.Close()
	tr, err := OpenStoreMust(t, dir).Load("run-int")
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Summarize()
	if s.Status != StatusRunning || s.Question != "q?" || s.Usage.InputTokens != 1_000_000 || s.Usage.CostUSD != 3+1.5 || s.Steps != 1 {
		t.Errorf("summary %+v", s)
	}
}

func OpenStoreMust(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPermissions(t *testing.T) {
	dir := t.TempDir()
	// A traces directory left with a wide mode is tightened.
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "traces"), 0o755)
	rec, err := NewRecorder(Options{StateDir: dir, Redact: noRedact, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	scriptedRun(t, rec, "run-perm")
	st, err := os.Stat(filepath.Join(dir, "traces"))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("traces dir mode %v (%v)", st.Mode().Perm(), err)
	}
	fi, err := os.Stat(filepath.Join(dir, "traces", "run-perm.jsonl"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trace file mode %v (%v)", fi.Mode().Perm(), err)
	}
}

func TestRedactionBeforeWrite(t *testing.T) {
	secret := testToken
	dir := t.TempDir()
	r := redact.Default()
	if r.String(secret) == secret {
		t.Fatal("the redactor does not detect the test token")
	}
	// Default redaction (Options.Redact nil).
	rec, err := NewRecorder(Options{StateDir: dir, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	run := rec.StartRun(RunInfo{ID: "run-secret", Question: "why does token " + secret + " fail?"})
	run.SetAttr("custom.header", "Authorization: token "+secret)
	st := run.StartStep(1)
	m := st.StartModelCall(ModelRequest{Provider: "openai", Model: "gpt-4o"})
	m.End(ModelResult{Text: "the token " + secret + " is revoked"}, nil)
	tc := st.StartToolCall(ToolRequest{CallID: "c", Name: "run_command", Arguments: `{"command":"curl -H 'Authorization: token ` + secret + `'"}`})
	tc.End(ToolResult{OK: false, Summary: "exit 1"}, errors.New("curl with "+secret+" failed"))
	run.End(RunResult{Status: "failed", Error: "model said " + secret})
	data, err := os.ReadFile(filepath.Join(dir, "traces", "run-secret.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte(secret[4:])) {
		t.Fatalf("the secret reached the trace file:\n%s", data)
	}
	if !bytes.Contains(data, []byte("[REDACTED:")) {
		t.Errorf("no redaction marker in:\n%s", data)
	}
	tr, _ := rec.Store().Load("run-secret")
	if AttrInt(tr.Root().Attrs, AttrTraceRedactions) < 3 {
		t.Errorf("run span redactions: %v", tr.Root().Attrs[AttrTraceRedactions])
	}
}

func TestDelete(t *testing.T) {
	rec, err := NewRecorder(Options{StateDir: t.TempDir(), Redact: noRedact, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	scriptedRun(t, rec, "run-del1")
	scriptedRun(t, rec, "run-del2")
	st := rec.Store()
	if err := st.Delete("run-del1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("run-del1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("load after delete: %v", err)
	}
	if err := st.Delete("run-del1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	list, _ := st.List()
	if len(list) != 1 || list[0].RunID != "run-del2" {
		t.Errorf("list after delete: %+v", list)
	}
	for _, bad := range []string{"../x", "", ".hidden", "a/b", "a..b", strings.Repeat("x", 200)} {
		if err := st.Delete(bad); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Delete(%q): %v", bad, err)
		}
	}
	if id, err := st.Resolve("run-d"); err != nil || id != "run-del2" {
		t.Errorf("Resolve prefix: %q %v", id, err)
	}
}

func TestRetention(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	mk := func(id string, age time.Duration) {
		p := filepath.Join(dir, "traces", id+".jsonl")
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(`{"traceId":"00","spanId":"01","kind":"run","name":"invoke_agent cairn","start":"2026-01-01T00:00:00Z","status":"ok"}`+"\n"), 0o600)
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	for i := 0; i < 6; i++ {
		mk(fmt.Sprintf("run-%d", i), time.Duration(i)*24*time.Hour) // run-0 newest
	}
	mk("run-old", 40*24*time.Hour)
	// Opening a recorder applies the defaults: 30 days.
	rec, err := NewRecorder(Options{StateDir: dir, Redact: noRedact, OTLPEndpoint: "none", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ids := func() []string {
		es, _ := rec.Store().entries()
		var out []string
		for _, e := range es {
			out = append(out, e.id)
		}
		sort.Strings(out)
		return out
	}
	if got := strings.Join(ids(), " "); got != "run-0 run-1 run-2 run-3 run-4 run-5" {
		t.Errorf("after open: %s", got)
	}
	// Count: keep the 3 newest; an active run is never removed and counts.
	n, err := rec.Store().Prune(Retention{MaxRuns: 3}, now, map[string]bool{"run-5": true})
	if err != nil || n != 3 {
		t.Errorf("pruned %d (%v)", n, err)
	}
	if got := strings.Join(ids(), " "); got != "run-0 run-1 run-5" {
		t.Errorf("after count prune: %s", got)
	}
	// Age, applied when a run ends, with the configured limits.
	rec2, err := NewRecorder(Options{StateDir: dir, Redact: noRedact, OTLPEndpoint: "none", MaxAge: 36 * time.Hour, MaxRuns: -1, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ids(), " "); got != "run-0 run-1" {
		t.Errorf("after age prune at open: %s", got)
	}
	rec3, _ := NewRecorder(Options{StateDir: dir, Redact: noRedact, OTLPEndpoint: "none", MaxRuns: 1, MaxAge: -1})
	_ = rec2
	run := rec3.StartRun(RunInfo{ID: "run-new"})
	run.End(RunResult{Status: "finished"})
	if got := strings.Join(ids(), " "); got != "run-new" {
		t.Errorf("after run end with MaxRuns 1: %s", got)
	}
}

func TestPrices(t *testing.T) {
	p := DefaultPrices()
	cases := []struct {
		provider, model string
		want            Price
		known           bool
	}{
		{"openai", "gpt-4o", Price{Input: 2.5, Output: 10, CachedInput: 1.25}, true},
		{"openai", "gpt-4o-mini", Price{Input: 0.15, Output: 0.6, CachedInput: 0.075}, true},
		{"openai", "gpt-4o-2024-08-06", Price{Input: 2.5, Output: 10, CachedInput: 1.25}, true},
		{"openai", "GPT-4o-mini-2024-07-18", Price{Input: 0.15, Output: 0.6, CachedInput: 0.075}, true},
		{"openai", "openai/gpt-4.1-mini", Price{Input: 0.4, Output: 1.6, CachedInput: 0.1}, true},
		{"openai", "o3-mini", Price{Input: 1.1, Output: 4.4, CachedInput: 0.55}, true},
		{"anthropic", "claude-sonnet-4-5-20250929", Price{Input: 3, Output: 15, CachedInput: 0.3, CacheWrite: 3.75}, true},
		{"anthropic", "claude-haiku-4-5", Price{Input: 1, Output: 5, CachedInput: 0.1, CacheWrite: 1.25}, true},
		{"scripted", "gpt-4o", Price{}, true},
		{"replay", "anything", Price{}, true},
		{"openai", "qwen2.5-coder", Price{}, false},
		{"openai", "gpt-4ox", Price{}, false},
	}
	for _, c := range cases {
		got, known := p.Lookup(c.provider, c.model)
		if got != c.want || known != c.known {
			t.Errorf("Lookup(%s, %s) = %v %v, want %v %v", c.provider, c.model, got, known, c.want, c.known)
		}
	}
	p2 := p.With(Prices{"Qwen2.5-Coder": {Input: 0.1, Output: 0.2}, "gpt-4o": {}})
	if c, known := p2.Cost("openai", "qwen2.5-coder:7b", tokencount.Usage{InputTokens: 2_000_000, OutputTokens: 1_000_000}); !known || fmt.Sprintf("%.4f", c) != "0.4000" {
		t.Errorf("override: %v %v", c, known)
	}
	if c, _ := p2.Cost("openai", "gpt-4o", tokencount.Usage{InputTokens: 1e6, OutputTokens: 1e6}); c != 0 {
		t.Errorf("free override: %v", c)
	}
	if _, ok := p["qwen2.5-coder"]; ok {
		t.Error("With modified the receiver")
	}
	var fromJSON Prices
	if err := json.Unmarshal([]byte(`{"my-model":{"input":1,"output":2}}`), &fromJSON); err != nil || fromJSON["my-model"] != (Price{Input: 1, Output: 2}) {
		t.Errorf("json: %v %v", fromJSON, err)
	}
}

func TestCachedCost(t *testing.T) {
	p := DefaultPrices()
	cases := []struct {
		provider, model string
		u               tokencount.Usage
		want            float64
	}{
		// 1M uncached + 1M output, no cache: the list price.
		{"anthropic", "claude-sonnet-4-5", tokencount.Usage{InputTokens: 1e6, OutputTokens: 1e6}, 3 + 15},
		// 10M input of which 8M read at 0.30 and 1M written at 3.75; 1M uncached at 3.
		{"anthropic", "claude-sonnet-4-5", tokencount.Usage{InputTokens: 10e6, CachedInputTokens: 8e6, CacheWriteTokens: 1e6}, 3 + 8*0.3 + 3.75},
		// OpenAI: no write charge; 2M of 4M cached at half price.
		{"openai", "gpt-4o", tokencount.Usage{InputTokens: 4e6, CachedInputTokens: 2e6}, 2*2.5 + 2*1.25},
		// A reported cached figure above the input is capped at the input.
		{"openai", "gpt-4o", tokencount.Usage{InputTokens: 1e6, CachedInputTokens: 5e6}, 1.25},
	}
	for _, c := range cases {
		got, known := p.Cost(c.provider, c.model, c.u)
		if !known || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Cost(%s, %+v) = %v %v, want %v", c.model, c.u, got, known, c.want)
		}
	}
	// An override without cache rates prices cached tokens as input.
	own := p.With(Prices{"my-model": {Input: 1, Output: 2}})
	if got, _ := own.Cost("openai", "my-model", tokencount.Usage{InputTokens: 1e6, CachedInputTokens: 1e6}); got != 1 {
		t.Errorf("override without cache rates: %v", got)
	}
	if _, known := p.Cost("openai", "llama3", tokencount.Usage{InputTokens: 10}); known {
		t.Error("an unknown model has a price")
	}
}

func TestOTLPEndpointResolution(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		setting string
		env     map[string]string
		want    string
	}{
		{"", nil, ""},
		{"none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318"}, ""},
		{"http://c:4318", nil, "http://c:4318/v1/traces"},
		{"c:4318", nil, "http://c:4318/v1/traces"},
		{"https://c/otlp/", nil, "https://c/otlp/v1/traces"},
		{"http://c:4318/v1/traces", nil, "http://c:4318/v1/traces"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://e:4318"}, "http://e:4318/v1/traces"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://e:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:1/custom"}, "http://t:1/custom"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://e:4318", "OTEL_SDK_DISABLED": "true"}, ""},
	}
	for _, c := range cases {
		if got := OTLPEndpoint(c.setting, env(c.env)); got != c.want {
			t.Errorf("OTLPEndpoint(%q, %v) = %q, want %q", c.setting, c.env, got, c.want)
		}
	}
}

func BenchmarkDisabled(b *testing.B) {
	var rec *Recorder
	for b.Loop() {
		run := rec.StartRun(RunInfo{ID: "x"})
		st := run.StartStep(1)
		m := st.StartModelCall(ModelRequest{Provider: "openai", Model: "gpt-4o"})
		m.End(ModelResult{InputTokens: 1}, nil)
		st.End(nil)
		run.End(RunResult{})
	}
}

func BenchmarkRecordToStore(b *testing.B) {
	rec, err := NewRecorder(Options{StateDir: b.TempDir(), Redact: noRedact, OTLPEndpoint: "none", MaxRuns: -1, MaxAge: -1})
	if err != nil {
		b.Fatal(err)
	}
	run := rec.StartRun(RunInfo{ID: "bench"})
	defer run.End(RunResult{})
	for b.Loop() {
		st := run.StartStep(1)
		m := st.StartModelCall(ModelRequest{Provider: "openai", Model: "gpt-4o"})
		m.End(ModelResult{InputTokens: 1, Text: "hello"}, nil)
		tc := st.StartToolCall(ToolRequest{CallID: "c", Name: "read_file", Arguments: `{"path":"a.go"}`})
		tc.End(ToolResult{OK: true}, nil)
		st.End(nil)
	}
}

func TestResumedRun(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(Options{StateDir: dir, Redact: noRedact, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	run := rec.StartRun(RunInfo{ID: "run-res", Question: "q", Provider: "openai", Model: "gpt-4o"})
	st := run.StartStep(1)
	st.StartModelCall(ModelRequest{Provider: "openai", Model: "gpt-4o"}).End(ModelResult{InputTokens: 100, OutputTokens: 10}, nil)
	st.End(nil)
	// The process dies: run.End is never called. A new server resumes it.
	rec2, err := NewRecorder(Options{StateDir: dir, Redact: noRedact, OTLPEndpoint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	run2 := rec2.StartRun(RunInfo{ID: "run-res", Question: "q", Provider: "openai", Model: "gpt-4o"})
	if run2.TraceID() != run.TraceID() {
		t.Error("a resumed run gets a new trace id")
	}
	if u := run2.Usage(); u.InputTokens != 100 || u.ModelCalls != 1 {
		t.Errorf("usage carried over: %+v", u)
	}
	st = run2.StartStep(2)
	st.StartModelCall(ModelRequest{Provider: "openai", Model: "gpt-4o"}).End(ModelResult{InputTokens: 200, OutputTokens: 20}, nil)
	run2.End(RunResult{Status: "finished"})
	tr, _ := rec2.Store().Load("run-res")
	roots := tr.Roots()
	if len(roots) != 2 || roots[0].Status != StatusCancelled || AttrString(roots[0].Attrs, AttrRunStatus) != "interrupted" ||
		!AttrBool(roots[1].Attrs, AttrRunResumed) || AttrInt(roots[1].Attrs, AttrUsageInputTokens) != 300 {
		t.Fatalf("roots: %+v", roots)
	}
	s := tr.Summarize()
	if s.Status != "finished" || s.Usage.InputTokens != 300 || s.Usage.OutputTokens != 30 || s.Steps != 2 || !s.Start.Equal(roots[0].Start) {
		t.Errorf("summary %+v", s)
	}
	var buf bytes.Buffer
	WriteTree(&buf, tr)
	if strings.Count(buf.String(), "invoke_agent cairn") != 2 {
		t.Errorf("tree:\n%s", buf.String())
	}
}
