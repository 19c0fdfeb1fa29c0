package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/workspace"
)

func newManager(t testing.TB, script string, state string) (*Manager, *model.Scripted) {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n\nfunc A() int { return 1 }\n"), 0o644)
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := model.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	p := model.NewScripted(s)
	cps, err := checkpoint.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(Config{Provider: p, StateDir: state, MaxSteps: 200, MaxRepeats: 1000},
		Deps{WS: ws, Registry: tools.NewBuiltinRegistry(root), Checkpoints: cps})
	return m, p
}

func waitEvent(t testing.TB, ch <-chan protocol.RunEvent, kind string) protocol.RunEvent {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event", kind)
		}
	}
}

func readSteps(n int) string {
	var b strings.Builder
	b.WriteString("turns:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - toolCalls: [{name: read_file, arguments: {path: a.go, startLine: %d}}]\n", i+1)
	}
	return b.String()
}

func TestStopConditions(t *testing.T) {
	cases := []struct {
		name  string
		cfg   func(*Config)
		class string
	}{
		{"step limit", func(c *Config) { c.MaxSteps = 3 }, ClassStepLimit},
		{"token budget", func(c *Config) { c.MaxTotalTokens = 50 }, ClassTokenBudget},
		{"loop detection", func(c *Config) { c.MaxRepeats = 2 }, ClassLoop},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := readSteps(10)
			if c.class == ClassLoop {
				script = "turns:\n" + strings.Repeat("  - toolCalls: [{name: read_file, arguments: {path: a.go}}]\n", 10)
			}
			m, _ := newManager(t, script, t.TempDir())
			cfg := m.Config()
			c.cfg(&cfg)
			m.SetConfig(cfg)
			ch := make(chan protocol.RunEvent, 1000)
			if _, err := m.Start(context.Background(), AskRequest{Question: "q"}, func(ev protocol.RunEvent) { ch <- ev }); err != nil {
				t.Fatal(err)
			}
			ev := waitEvent(t, ch, protocol.EventFailed)
			if ev.Class != c.class {
				t.Fatalf("class %s (%s), want %s", ev.Class, ev.Error, c.class)
			}
		})
	}
	t.Run("wall clock", func(t *testing.T) {
		m, _ := newManager(t, "turns:\n  - text: slow\n    delayMs: 50\n    toolCalls: [{name: read_file, arguments: {path: a.go}}]\n  - text: again\n", t.TempDir())
		cfg := m.Config()
		cfg.MaxDuration = time.Millisecond
		m.SetConfig(cfg)
		ch := make(chan protocol.RunEvent, 1000)
		m.Start(context.Background(), AskRequest{Question: "q"}, func(ev protocol.RunEvent) { ch <- ev })
		if ev := waitEvent(t, ch, protocol.EventFailed); ev.Class != ClassTimeLimit {
			t.Fatalf("class %s", ev.Class)
		}
	})
}

// BenchmarkJournalPerStep measures a step's journal writes (step, model
// result, approval, intent, result: each synced) on top of the step.
func BenchmarkJournalPerStep(b *testing.B) {
	j, err := checkpoint.OpenJournal(filepath.Join(b.TempDir(), "j.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	resp := model.Response{Text: "reading", ToolCalls: []model.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j.Append(checkpoint.RecStepStarted, i, i, map[string]int{"messages": 3})
		j.Append(checkpoint.RecModelResult, i, i, resp)
		j.Append(checkpoint.RecApproval, i, i, approvalRecord{CallID: "c1", Tool: "read_file", Risk: "read", Decision: "policy_allow"})
		j.Append(checkpoint.RecToolIntent, i, i, toolIntentRecord{CallID: "c1", Tool: "read_file", Input: []byte(`{"path":"a.go"}`)})
		j.Append(checkpoint.RecToolResult, i, i, toolResultRecord{CallID: "c1", OK: true, Summary: "read a.go", Content: "0123456789abcdef"})
	}
}

// BenchmarkResume50Steps measures resuming a run interrupted after 50
// steps: journal replay, blob reads and workspace checks, up to the
// resumed run's first event.
func BenchmarkResume50Steps(b *testing.B) {
	state := b.TempDir()
	m, p := newManager(b, readSteps(50)+"  - stall: true\n", state)
	ch := make(chan protocol.RunEvent, 10000)
	run, err := m.Start(context.Background(), AskRequest{Question: "q"}, func(ev protocol.RunEvent) { ch <- ev })
	if err != nil {
		b.Fatal(err)
	}
	// Once the stalled 51st model call has begun, the journal is a crash
	// image: the loop journals each step (synchronously) before the next call.
	deadline := time.Now().Add(time.Minute)
	for p.Remaining() > 0 {
		if time.Now().After(deadline) {
			b.Fatal("the run did not reach its 51st model call")
		}
		time.Sleep(time.Millisecond)
	}
	journal, _ := os.ReadFile(journalPath(state, run.ID))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		state2 := b.TempDir()
		os.MkdirAll(filepath.Dir(journalPath(state2, run.ID)), 0o700)
		os.WriteFile(journalPath(state2, run.ID), journal, 0o600)
		os.Symlink(filepath.Join(state, "blobs"), filepath.Join(state2, "blobs"))
		m2, _ := newManager(b, "turns:\n  - stall: true\n", state2)
		m2.ws = m.ws
		got := make(chan struct{}, 1)
		b.StartTimer()
		r2, err := m2.Resume(context.Background(), run.ID, func(ev protocol.RunEvent) {
			if ev.Kind == protocol.EventStarted {
				select {
				case got <- struct{}{}:
				default:
				}
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		<-got
		b.StopTimer()
		r2.Cancel()
		<-r2.Done()
	}
	run.Cancel()
}
