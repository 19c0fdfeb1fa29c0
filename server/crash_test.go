package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
)

// TestMain lets the test binary act as `cairn serve` for the crash matrix,
// which needs a real process to kill.
func TestMain(m *testing.M) {
	if os.Getenv("CAIRN_TEST_SERVE") == "1" {
		err := server.Serve(context.Background(), os.Stdin, os.Stdout, server.Options{FaultPoint: crashAt(os.Getenv("CAIRN_CRASH_AT"))})
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("CAIRN_TEST_LOG") == "" {
		// Keep test and benchmark output readable; CAIRN_TEST_LOG=1 shows logs.
		slog.SetDefault(slog.New(slog.DiscardHandler))
	}
	os.Exit(m.Run())
}

// crashExitCode is the exit status of an injected crash.
const crashExitCode = 86

// crashAt returns the fault-injection hook of the crash tests: spec is a
// comma-separated list of points (agent.Deps.FaultPoint names them), each
// optionally with ":N" to crash the N-th time the point is reached. The
// process exits with crashExitCode there, as if it were killed.
func crashAt(spec string) func(point string) {
	if spec == "" {
		return nil
	}
	var mu sync.Mutex
	reached := map[string]int{}
	return func(point string) {
		for _, p := range strings.Split(spec, ",") {
			name, nth, _ := strings.Cut(p, ":")
			if name != point {
				continue
			}
			mu.Lock()
			reached[point]++
			n := reached[point]
			mu.Unlock()
			want := 1
			if v, err := strconv.Atoi(nth); err == nil {
				want = v
			}
			if n == want {
				os.Exit(crashExitCode)
			}
		}
	}
}

type procRWC struct {
	io.Reader
	io.WriteCloser
}

// serverProc is a server process with an editor connected to it.
type serverProc struct {
	cmd *exec.Cmd
	ed  *lspclient.Editor
}

func startServerProc(t *testing.T, ctx context.Context, root, state, script, crashAt string) *serverProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CAIRN_TEST_SERVE=1", "CAIRN_STATE_DIR="+state, "CAIRN_PROVIDER=scripted",
		"CAIRN_SCRIPT="+script, "CAIRN_CRASH_AT="+crashAt)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ed, err := lspclient.Connect(ctx, procRWC{out, in}, root, lspclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &serverProc{cmd: cmd, ed: ed}
}

// waitCrash waits for the injected crash.
func (p *serverProc) waitCrash(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != crashExitCode {
			t.Fatalf("the server did not crash at the injection point: %v", err)
		}
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		t.Fatal("the server did not crash")
	}
}

func (p *serverProc) stop(ctx context.Context) {
	_ = p.ed.Close(ctx)
	_ = p.cmd.Wait()
}

const crashTurns = `
  - text: "I will count and read."
    toolCalls:
      - name: run_command
        arguments: {command: "echo ran >> greet/counter.txt"}
      - name: read_file
        arguments: {path: greet/greet.go}
  - toolCalls:
      - name: edit_file
        arguments: {path: greet/greet.go, oldText: "\"Hello, \" + name", newText: "\"Hi, \" + name"}
  - text: "Counted and edited."
`

func scriptFrom(turn int) string {
	lines := strings.Split(strings.TrimPrefix(crashTurns, "\n"), "\n")
	var turns [][]string
	for _, l := range lines {
		if strings.HasPrefix(l, "  - ") {
			turns = append(turns, nil)
		}
		if len(turns) > 0 {
			turns[len(turns)-1] = append(turns[len(turns)-1], l)
		}
	}
	var b strings.Builder
	b.WriteString("turns:\n")
	for _, tl := range turns[turn-1:] {
		b.WriteString(strings.Join(tl, "\n") + "\n")
	}
	return b.String()
}

// TestCrashMatrix kills the server at each journal point, restarts it, and
// checks the conservative resume: no side-effecting command runs twice, the
// files equal the last complete checkpoint, events stay consistent.
func TestCrashMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	cases := []struct {
		point      string
		resumeFrom int    // first script turn the resumed run needs
		counter    string // counter.txt after the resumed run
		told       bool   // the model must be told a call may or may not have happened
	}{
		{"before_model_call", 1, "ran\n", false},
		{"mid_stream", 1, "ran\n", false},
		{"after_tool_intent", 2, "", true},       // intent journaled, command never started
		{"before_tool_result", 2, "ran\n", true}, // command ran, result lost: not replayed
		{"after_tool_result", 2, "ran\n", false},
	}
	for _, c := range cases {
		t.Run(c.point, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			root, state, dir := t.TempDir(), t.TempDir(), t.TempDir()
			writeTxtar(t, root, greetWS)
			orig, _ := os.ReadFile(filepath.Join(root, "greet/greet.go"))
			s1 := filepath.Join(dir, "s1.yaml")
			s2 := filepath.Join(dir, "s2.yaml")
			os.WriteFile(s1, []byte(scriptFrom(1)), 0o644)
			os.WriteFile(s2, []byte(scriptFrom(c.resumeFrom)), 0o644)

			p1 := startServerProc(t, ctx, root, state, s1, c.point)
			runID, err := p1.ed.Ask(ctx, "greet/greet.go", 0, 0, "count and edit")
			if err != nil {
				t.Fatal(err)
			}
			p1.waitCrash(t)
			seen := p1.ed.Events(runID)
			lastSeq := 0
			if len(seen) > 0 {
				lastSeq = seen[len(seen)-1].Seq
			}
			if ev0, err := p2Interrupted(seen); err == nil {
				t.Fatalf("interrupted before the restart: %+v", ev0)
			}

			p2 := startServerProc(t, ctx, root, state, s2, "")
			defer p2.stop(ctx)
			ev, err := p2.ed.WaitKind(ctx, runID, protocol.EventInterrupted)
			if err != nil {
				t.Fatalf("no interrupted event after restart: %v", err)
			}
			var ref protocol.RunRef
			if err := p2.ed.Execute(ctx, protocol.CommandResume, protocol.RunRef{RunID: runID}, &ref); err != nil {
				t.Fatalf("resume: %v", err)
			}
			evs, err := p2.ed.WaitFor(ctx, runID, func(evs []protocol.RunEvent) bool {
				return len(evs) > 1 && lspclient.IsTerminal(last(evs).Kind)
			})
			if err != nil {
				t.Fatal(err)
			}
			if l := last(evs); l.Kind != protocol.EventFinished || l.Answer != "Counted and edited." {
				t.Fatalf("resumed run ended %+v; events %s", l, kinds(evs))
			}
			// Seq numbers never go back: the interrupted event follows what was
			// journaled, and the resumed events follow it.
			prev := ev.Seq
			for _, e := range evs[1:] {
				if e.Seq <= prev {
					t.Fatalf("seq went back: %d after %d (%s)", e.Seq, prev, kinds(evs))
				}
				prev = e.Seq
			}
			if ev.Seq <= lastSeq {
				t.Errorf("the interrupted event (seq %d) does not follow the last event the client saw (seq %d)", ev.Seq, lastSeq)
			}
			got, _ := os.ReadFile(filepath.Join(root, "greet", "counter.txt"))
			if string(got) != c.counter {
				t.Errorf("counter.txt = %q, want %q (a side effect ran twice or was replayed)", got, c.counter)
			}
			if now, _ := os.ReadFile(filepath.Join(root, "greet/greet.go")); string(now) != string(orig) {
				t.Errorf("a proposal reached the disk without accept")
			}
			edits := ofKind(evs, protocol.EventEditProposed)
			if len(edits) != 1 {
				t.Fatalf("want one proposed edit after resume, got %s", kinds(evs))
			}
			res, err := p2.ed.Accept(ctx, edits[0].EditID)
			if err != nil || !res.Applied {
				t.Fatalf("accept after resume: %+v %v", res, err)
			}
			told := toldUncertain(t, state, runID)
			if told != c.told {
				t.Errorf("model told about an uncertain call: %v, want %v", told, c.told)
			}
		})
	}
}

func p2Interrupted(evs []protocol.RunEvent) (protocol.RunEvent, error) {
	for _, e := range evs {
		if e.Kind == protocol.EventInterrupted {
			return e, nil
		}
	}
	return protocol.RunEvent{}, errors.New("none")
}

// toldUncertain reports whether the resumed conversation tells the model a
// call may or may not have happened (read from the journaled tool results).
func toldUncertain(t *testing.T, state, runID string) bool {
	t.Helper()
	var found bool
	filepath.Walk(filepath.Join(state, "runs", runID), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			if strings.Contains(string(b), "may or may not have happened") {
				found = true
			}
		}
		return nil
	})
	return found
}

func TestCrashDuringAcceptAndUndo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for _, point := range []string{"during_accept", "during_undo"} {
		t.Run(point, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			root, state, dir := t.TempDir(), t.TempDir(), t.TempDir()
			writeTxtar(t, root, greetWS)
			orig, _ := os.ReadFile(filepath.Join(root, "greet/greet.go"))
			s := filepath.Join(dir, "s.yaml")
			os.WriteFile(s, []byte(scriptFrom(2)), 0o644)
			p1 := startServerProc(t, ctx, root, state, s, point)
			runID, _ := p1.ed.Ask(ctx, "greet/greet.go", 0, 0, "edit")
			evs, err := p1.ed.WaitRun(ctx, runID)
			if err != nil {
				t.Fatal(err)
			}
			editID := ofKind(evs, protocol.EventEditProposed)[0].EditID
			res, err := p1.ed.Accept(ctx, editID)
			cpID := res.CheckpointID
			if point == "during_undo" {
				if err != nil || !res.Applied {
					t.Fatalf("accept: %+v %v", res, err)
				}
				go p1.ed.Undo(ctx, cpID)
			}
			p1.waitCrash(t)
			edited, _ := os.ReadFile(filepath.Join(root, "greet/greet.go"))

			p2 := startServerProc(t, ctx, root, state, s, "")
			defer p2.stop(ctx)
			var runs []map[string]any
			p2.ed.Execute(ctx, protocol.CommandListRuns, map[string]any{}, &runs)
			cps := listCheckpoints(t, state)
			if len(cps) != 1 {
				t.Fatalf("want one checkpoint, got %v", cps)
			}
			switch point {
			case "during_accept":
				if !strings.Contains(string(edited), `"Hi, "`) {
					t.Fatalf("the editor had applied the edit before the crash: %s", edited)
				}
				if cps[0] != "applied" {
					t.Fatalf("the cut-short accept was not settled as applied: %v", cps)
				}
				// It can be undone after the restart.
				id := checkpointID(t, state)
				if u, err := p2.ed.Undo(ctx, id); err != nil || !u.Applied {
					t.Fatalf("undo after restart: %+v %v", u, err)
				}
				if now, _ := os.ReadFile(filepath.Join(root, "greet/greet.go")); string(now) != string(orig) {
					t.Fatalf("not restored: %s", now)
				}
			case "during_undo":
				if string(edited) != string(orig) {
					t.Fatalf("the undo had restored the file before the crash: %s", edited)
				}
				if cps[0] != "undone" {
					t.Fatalf("the cut-short undo was not settled: %v", cps)
				}
			}
		})
	}
}

func listCheckpoints(t *testing.T, state string) []string {
	t.Helper()
	var out []string
	entries, _ := os.ReadDir(filepath.Join(state, "checkpoints"))
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(state, "checkpoints", e.Name()))
		for _, st := range []string{"pending", "applied", "undone", "failed"} {
			if strings.Contains(string(b), fmt.Sprintf(`"status": %q`, st)) {
				out = append(out, st)
			}
		}
	}
	return out
}

func checkpointID(t *testing.T, state string) string {
	entries, _ := os.ReadDir(filepath.Join(state, "checkpoints"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			return strings.TrimSuffix(e.Name(), ".json")
		}
	}
	t.Fatal("no checkpoint")
	return ""
}
