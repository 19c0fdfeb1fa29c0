package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvalCommand(t *testing.T) {
	// A few suite cases, gated against the committed baseline.
	out, errOut, code := runCLI(t, "eval", "--baseline", "../../evals/baseline.json", "--run", "^(edit-accept-undo|undo-conflict|cancel-mid-stream)$", "-v", "../../evals/cases")
	if code != 0 {
		t.Fatalf("eval on suite cases: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"3/3 passed (100.0%)", "ok   edit-accept-undo", "tokens:", "latency:", "steps:", "no regression"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// The deliberately broken case fails the command.
	out, _, code = runCLI(t, "eval", "../../evals/testdata/broken.txtar")
	if code != 1 || !strings.Contains(out, "0/1 passed") || !strings.Contains(out, "wrong answer (1): broken") {
		t.Errorf("broken case: exit %d\n%s", code, out)
	}

	// --json is one document.
	out, _, code = runCLI(t, "eval", "--json", "../../evals/cases/reject-edit.txtar")
	var rep struct {
		Total, Passed int
		SuccessRate   float64
		Results       []struct{ Name, Status string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Passed != 1 || rep.Results[0].Name != "reject-edit" {
		t.Errorf("--json: exit %d, %v\n%s", code, err, out)
	}

	// --update-baseline writes a baseline the gate then accepts.
	bl := filepath.Join(t.TempDir(), "baseline.json")
	if _, errOut, code := runCLI(t, "eval", "--update-baseline", "--baseline", bl, "../../evals/cases/reject-edit.txtar"); code != 0 {
		t.Fatalf("--update-baseline: exit %d %s", code, errOut)
	}
	if b, err := os.ReadFile(bl); err != nil || !strings.Contains(string(b), `"reject-edit"`) {
		t.Fatalf("baseline: %s %v", b, err)
	}

	if _, errOut, code := runCLI(t, "eval", "--parallel"); code != 2 {
		t.Errorf("bad flags: exit %d %s", code, errOut)
	}
	if _, _, code := runCLI(t, "eval", t.TempDir()); code != 1 {
		t.Errorf("a directory without cases: exit %d", code)
	}
}

func TestEvalRecordFromAskRun(t *testing.T) {
	dir := t.TempDir()
	if err := copyEmbedded(sampleFS, "_sample/ws", dir); err != nil {
		t.Fatal(err)
	}
	script, _ := sampleFS.ReadFile("_sample/script.yaml")
	sp := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(sp, script, 0o644)
	state := t.TempDir()
	t.Setenv("CAIRN_PROVIDER", "scripted")
	t.Setenv("CAIRN_SCRIPT", sp)
	t.Setenv("CAIRN_STATE_DIR", state)
	if out, errOut, code := runCLI(t, "ask", "--root", dir, "--file", "greet/greet.go", "--range", "6-9", "Handle an empty name"); code != 0 {
		t.Fatalf("ask: %s\n%s", errOut, out)
	}
	runs, err := os.ReadDir(filepath.Join(state, "runs"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	draft := filepath.Join(t.TempDir(), "draft.txtar")
	// A prefix of the run id is enough, as for trace show.
	_, errOut, code := runCLI(t, "eval", "record", "--root", dir, "-o", draft, runs[0].Name()[:len("run-")+4])
	if code != 0 {
		t.Fatalf("eval record: exit %d %s", code, errOut)
	}
	b, _ := os.ReadFile(draft)
	for _, want := range []string{"question: Handle an empty name", "lines: 6-9", "-- greet/greet.go --", "final: finished"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the draft lacks %q:\n%s", want, b)
		}
	}
	// The draft runs as a case.
	if out, errOut, code := runCLI(t, "eval", draft); code != 0 {
		t.Errorf("the recorded draft fails (exit %d):\n%s%s\n%s", code, out, errOut, b)
	}
	if _, _, code := runCLI(t, "eval", "record", "--root", dir); code != 2 {
		t.Errorf("record without a run: exit %d", code)
	}
}
