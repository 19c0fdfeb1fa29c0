package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/trace"
)

func recordTrace(t *testing.T, stateDir, id string) {
	t.Helper()
	rec, err := trace.NewRecorder(trace.Options{StateDir: stateDir, OTLPEndpoint: "none", Redact: func(s string) string { return s }})
	if err != nil {
		t.Fatal(err)
	}
	run := rec.StartRun(trace.RunInfo{ID: id, Question: "Why trim the name?", Provider: "openai", Model: "gpt-4o"})
	st := run.StartStep(1)
	m := st.StartModelCall(trace.ModelRequest{Provider: "openai", Model: "gpt-4o"})
	m.End(trace.ModelResult{ResponseID: "r1", FinishReason: "tool_calls", InputTokens: 1000, OutputTokens: 100,
		ToolCalls: []trace.RecordedToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}}}, nil)
	tc := st.StartToolCall(trace.ToolRequest{CallID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`})
	tc.SetApproval("read", "auto", "")
	tc.End(trace.ToolResult{OK: true, OutputBytes: 10}, nil)
	st.End(nil)
	run.End(trace.RunResult{Status: "finished"})
}

func TestTraceListShowDelete(t *testing.T) {
	state := t.TempDir()
	t.Setenv("CAIRN_STATE_DIR", state)
	if out, _, code := runCLI(t, "trace", "list"); code != 0 || !strings.Contains(out, "no traces") {
		t.Errorf("empty list: %q exit %d", out, code)
	}
	recordTrace(t, state, "run-aaa111")
	recordTrace(t, state, "run-bbb222")

	out, errOut, code := runCLI(t, "trace", "list")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "run-aaa111") || !strings.Contains(out, "finished") ||
		!strings.Contains(out, "1000/100 tok") || !strings.Contains(out, "$0.0035") || !strings.Contains(out, `"Why trim the name?"`) {
		t.Errorf("list: %q %q exit %d", out, errOut, code)
	}
	out, _, code = runCLI(t, "trace", "list", "--json")
	var sums []trace.Summary
	if code != 0 || json.Unmarshal([]byte(out), &sums) != nil || len(sums) != 2 {
		t.Errorf("list --json: %q", out)
	}

	// Flags after the run id, and a unique prefix.
	out, _, code = runCLI(t, "trace", "show", "run-aaa", "--root", t.TempDir())
	if code != 0 || !strings.Contains(out, "invoke_agent cairn  [ok]") || !strings.Contains(out, "└─ step 1") ||
		!strings.Contains(out, "├─ chat gpt-4o") || !strings.Contains(out, "execute_tool read_file") || !strings.Contains(out, "approval=auto") {
		t.Errorf("show:\n%s", out)
	}
	out, _, code = runCLI(t, "trace", "show", "--json", "run-aaa111")
	var doc trace.Trace
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.RunID != "run-aaa111" || len(doc.Spans) != 4 {
		t.Errorf("show --json: %q", out)
	}
	if _, errOut, code := runCLI(t, "trace", "show", "run-"); code != 1 || !strings.Contains(errOut, "ambiguous") {
		t.Errorf("ambiguous: exit %d %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "trace", "show", "run-zzz"); code != 1 || !strings.Contains(errOut, "no trace") {
		t.Errorf("missing: exit %d %q", code, errOut)
	}

	out, _, code = runCLI(t, "trace", "delete", "run-aaa111")
	if code != 0 || out != "deleted run-aaa111\n" {
		t.Errorf("delete: %q exit %d", out, code)
	}
	if _, err := os.Stat(filepath.Join(state, "traces", "run-aaa111.jsonl")); !os.IsNotExist(err) {
		t.Errorf("file still there: %v", err)
	}
	if _, _, code := runCLI(t, "trace", "delete", "run-aaa111"); code != 1 {
		t.Errorf("second delete exit %d", code)
	}
	for _, args := range [][]string{{"trace"}, {"trace", "frob"}, {"trace", "show"}, {"trace", "delete"}, {"trace", "list", "x"}, {"trace", "list", "--bogus"}} {
		if _, _, code := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// Without CAIRN_STATE_DIR the state directory is keyed by the resolved
// root, as the server keys it.
func TestTraceFindsServerStateDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("CAIRN_STATE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", cache)
	ws := t.TempDir()
	real, _ := filepath.EvalSymlinks(ws)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		testenv.Need(t, "no symlinks here: %v", err)
	}
	h := sha256.Sum256([]byte(real))
	state := filepath.Join(cache, "cairn", hex.EncodeToString(h[:8]))
	recordTrace(t, state, "run-xyz")
	out, errOut, code := runCLI(t, "trace", "list", "--root", link)
	if code != 0 || !strings.Contains(out, "run-xyz") {
		t.Errorf("list via symlinked root: %q %q exit %d", out, errOut, code)
	}
}
