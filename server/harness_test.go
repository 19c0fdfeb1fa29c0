package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
)

// env is one test session: a workspace on disk from a txtar archive, the
// real server on one end of an in-memory pipe, and the lspclient editor on
// the other (gopls' integration-test shape).
type env struct {
	t        testing.TB
	ctx      context.Context
	root     string
	state    string
	ed       *lspclient.Editor
	provider *model.Scripted
	done     chan error
}

type envOption func(*envConfig)

type envConfig struct {
	script   string
	settings map[string]any
	editor   lspclient.Options
	getenv   map[string]string
	noProv   bool
	state    string
	root     string
	newID    func(string) string
	provider model.Provider
	server   func(*server.Options)
}

func withScript(s string) envOption           { return func(c *envConfig) { c.script = s } }
func withSettings(s map[string]any) envOption { return func(c *envConfig) { c.settings = s } }
func withEditor(o lspclient.Options) envOption {
	return func(c *envConfig) { c.editor = o }
}
func withEnv(kv map[string]string) envOption { return func(c *envConfig) { c.getenv = kv } }
func withoutProvider() envOption             { return func(c *envConfig) { c.noProv = true } }
func withState(dir string) envOption         { return func(c *envConfig) { c.state = dir } }

// withServerOptions adjusts the server's options (timeouts).
func withServerOptions(f func(*server.Options)) envOption { return func(c *envConfig) { c.server = f } }

// withProvider serves the model from p instead of a script.
func withProvider(p model.Provider) envOption { return func(c *envConfig) { c.provider = p } }

// withRoot serves an existing workspace (a second server on the same files).
func withRoot(dir string) envOption { return func(c *envConfig) { c.root = dir } }

// withCountingIDs makes run, edit and checkpoint ids a counter, so token
// counts of text holding them repeat exactly (golden files).
func withCountingIDs() envOption {
	return func(c *envConfig) {
		var mu sync.Mutex
		n := 0
		c.newID = func(prefix string) string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("%s-%012d", prefix, n)
		}
	}
}

// newEnv writes the archive to a temp workspace and connects an editor.
func newEnv(t testing.TB, archive string, opts ...envOption) *env {
	t.Helper()
	cfg := envConfig{}
	for _, o := range opts {
		o(&cfg)
	}
	root := cfg.root
	if root == "" {
		root = t.TempDir()
		writeTxtar(t, root, archive)
	}
	state := cfg.state
	if state == "" {
		state = t.TempDir()
	}
	vars := map[string]string{"CAIRN_STATE_DIR": state}
	for k, v := range cfg.getenv {
		vars[k] = v
	}
	sopts := server.Options{Getenv: func(k string) string { return vars[k] }, NewID: cfg.newID}
	e := &env{t: t, root: root, state: state, done: make(chan error, 1)}
	if cfg.server != nil {
		cfg.server(&sopts)
	}
	if cfg.provider != nil {
		sopts.Provider = cfg.provider
	} else if !cfg.noProv && (cfg.settings == nil || cfg.script != "") {
		s, err := model.ParseScript([]byte(cfg.script))
		if err != nil {
			t.Fatal(err)
		}
		e.provider = model.NewScripted(s)
		sopts.Provider = e.provider
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	e.ctx = ctx
	serverEnd, clientEnd := net.Pipe()
	go func() { e.done <- server.Serve(context.Background(), serverEnd, serverEnd, sopts) }()
	edOpts := cfg.editor
	if cfg.settings != nil {
		edOpts.Settings = cfg.settings
	}
	ed, err := lspclient.Connect(ctx, clientEnd, root, edOpts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	e.ed = ed
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		defer ccancel()
		_ = ed.Close(cctx)
		select {
		case <-e.done:
		case <-time.After(time.Minute):
			t.Errorf("server did not stop after shutdown/exit")
		}
	})
	return e
}

// writeTxtar writes the files of a txtar archive under root.
func writeTxtar(t testing.TB, root, archive string) {
	t.Helper()
	for _, f := range txtar.Parse([]byte(archive)).Files {
		p := filepath.Join(root, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *env) open(rel string) {
	e.t.Helper()
	if err := e.ed.Open(e.ctx, rel); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) ask(rel string, from, to int, q string) string {
	e.t.Helper()
	id, err := e.ed.Ask(e.ctx, rel, from, to, q)
	if err != nil {
		e.t.Fatalf("ask: %v", err)
	}
	return id
}

func (e *env) waitRun(runID string) []protocol.RunEvent {
	e.t.Helper()
	evs, err := e.ed.WaitRun(e.ctx, runID)
	if err != nil {
		e.t.Fatalf("%v; events so far: %s", err, kinds(evs))
	}
	return evs
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func kinds(evs []protocol.RunEvent) string {
	var ks []string
	for _, ev := range evs {
		ks = append(ks, ev.Kind)
	}
	return strings.Join(ks, ",")
}

func last(evs []protocol.RunEvent) protocol.RunEvent {
	if len(evs) == 0 {
		return protocol.RunEvent{}
	}
	return evs[len(evs)-1]
}

func ofKind(evs []protocol.RunEvent, kind string) []protocol.RunEvent {
	var out []protocol.RunEvent
	for _, ev := range evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// toolMessages returns the tool-result messages the model received in its
// n-th request (1-based).
func (e *env) toolMessages(n int) []model.Message {
	e.t.Helper()
	reqs := e.provider.Received()
	if len(reqs) < n {
		e.t.Fatalf("the model got %d requests, want at least %d", len(reqs), n)
	}
	var out []model.Message
	for _, m := range reqs[n-1].Messages {
		if m.Role == model.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func checkSeq(t *testing.T, evs []protocol.RunEvent) {
	t.Helper()
	for i, ev := range evs {
		if ev.Seq != i+1 {
			t.Fatalf("event %d has seq %d; events: %s", i, ev.Seq, kinds(evs))
		}
	}
	if len(evs) == 0 || evs[0].Kind != protocol.EventStarted {
		t.Fatalf("first event is not started: %s", kinds(evs))
	}
	terminal := 0
	for _, ev := range evs {
		if lspclient.IsTerminal(ev.Kind) {
			terminal++
		}
	}
	if terminal != 1 || !lspclient.IsTerminal(last(evs).Kind) {
		t.Fatalf("want exactly one terminal event, last: %s", kinds(evs))
	}
}
