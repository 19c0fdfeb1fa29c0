package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tokencount"
)

// carefulModel acts like a model that reads its history: it runs the
// counting command unless the conversation shows it already asked for it,
// then answers. A resume that loses the record of the first call makes it
// run the command again, as the model in the reported bug did.
type carefulModel struct {
	mu   sync.Mutex
	reqs []model.Request
}

func (m *carefulModel) Name() string { return "careful" }

func (m *carefulModel) Stream(ctx context.Context, req model.Request, onText func(string)) (*model.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	m.mu.Unlock()
	for _, msg := range req.Messages {
		for _, c := range msg.ToolCalls {
			if c.Name == "run_command" {
				onText("Done.")
				return &model.Response{Text: "Done.", Usage: tokencount.Usage{InputTokens: 10, OutputTokens: 1}}, nil
			}
		}
	}
	return &model.Response{ToolCalls: []model.ToolCall{{ID: fmt.Sprintf("again-%d", n), Name: "run_command",
		Arguments: `{"command":"echo ran >> greet/counter.txt"}`}}, Usage: tokencount.Usage{InputTokens: 10, OutputTokens: 1}}, nil
}

// lastRequest returns the text of the model's last request.
func (m *carefulModel) lastRequest() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.reqs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, msg := range m.reqs[len(m.reqs)-1].Messages {
		b.WriteString(msg.Content + "\n")
	}
	return b.String()
}

const countTurn = `turns:
  - text: "Counting."
    toolCalls:
      - name: run_command
        arguments: {command: "echo ran >> greet/counter.txt"}
      - name: read_file
        arguments: {path: greet/greet.go}
  - text: "Done."
`

// TestResumeWithDamagedJournal records a run that ran a side-effecting
// command (a real file append) and was interrupted, damages each journal
// record in turn, resumes, and checks that the command never runs twice,
// the run finishes, and both the user and the model are told.
func TestResumeWithDamagedJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for _, crash := range []string{"before_tool_result", "before_model_call:2"} {
		t.Run(crash, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			root, state, dir := t.TempDir(), t.TempDir(), t.TempDir()
			writeTxtar(t, root, greetWS)
			script := filepath.Join(dir, "s.yaml")
			os.WriteFile(script, []byte(countTurn), 0o644)
			p := startServerProc(t, ctx, root, state, script, crash)
			runID, err := p.ed.Ask(ctx, "greet/greet.go", 0, 0, "count")
			if err != nil {
				t.Fatal(err)
			}
			p.waitCrash(t)
			if got, _ := os.ReadFile(filepath.Join(root, "greet", "counter.txt")); string(got) != "ran\n" {
				t.Fatalf("the recorded run did not run the command once: %q", got)
			}
			journal, err := os.ReadFile(filepath.Join(state, "runs", runID, "journal.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(journal, []byte("\n"))
			if len(lines[len(lines)-1]) == 0 {
				lines = lines[:len(lines)-1]
			}
			for i := -1; i < len(lines); i++ {
				name := "intact"
				if i >= 0 {
					name = fmt.Sprintf("record %d %s", i+1, recordType(lines[i]))
				}
				t.Run(name, func(t *testing.T) {
					st := t.TempDir()
					copyDir(t, state, st)
					if i >= 0 {
						damaged := bytes.Clone(journal)
						off := len(bytes.Join(lines[:i], nil))
						damaged[off+len(lines[i])-4] ^= 0x01 // one bit of the record's JSON
						os.WriteFile(filepath.Join(st, "runs", runID, "journal.jsonl"), damaged, 0o600)
					}
					m := &carefulModel{}
					e := newEnv(t, greetWS+"-- greet/counter.txt --\nran\n", withState(st), withProvider(m))
					var ref protocol.RunRef
					if err := e.ed.Execute(e.ctx, protocol.CommandResume, protocol.RunRef{RunID: runID}, &ref); err != nil {
						t.Fatalf("resume: %v", err)
					}
					evs, err := e.ed.WaitFor(e.ctx, runID, func(evs []protocol.RunEvent) bool {
						return len(evs) > 0 && lspclient.IsTerminal(last(evs).Kind) && last(evs).Kind != protocol.EventInterrupted
					})
					if err != nil {
						t.Fatal(err)
					}
					if l := last(evs); l.Kind != protocol.EventFinished || l.Answer != "Done." {
						t.Fatalf("resumed run ended %+v; events %s", l, kinds(evs))
					}
					if got := e.read("greet/counter.txt"); got != "ran\n" {
						t.Errorf("counter.txt = %q: the command ran again on resume", got)
					}
					if i < 0 {
						return
					}
					if !strings.Contains(m.lastRequest(), "damaged on disk") {
						t.Errorf("the model was not told about the damaged record")
					}
					if !strings.Contains(strings.Join(e.ed.Messages(), "\n"), "damaged record") {
						t.Errorf("the user was not told about the damaged record; messages: %q", e.ed.Messages())
					}
				})
			}
		})
	}
}

// recordType names a journal line's record type, for test names.
func recordType(line []byte) string {
	_, rest, _ := strings.Cut(string(line), `"type":"`)
	typ, _, _ := strings.Cut(rest, `"`)
	return typ
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
