package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
)

// coldCorpus copies code nobody here wrote (the Go tree's encoding
// packages) into a fresh directory: with a fresh state directory, nothing
// of it is indexed when the editor connects.
func coldCorpus(t *testing.T) string {
	t.Helper()
	src := filepath.Join(testenv.GOROOT(t), "src", "encoding")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
	return dst
}

const doneScript = "turns:\n  - text: done\n"

// firstUserText is the text of the messages of the model's first request.
func firstRequestText(t *testing.T, p *model.Scripted) string {
	t.Helper()
	reqs := p.Received()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	var b strings.Builder
	for _, m := range reqs[0].Messages {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}

// progressLog keeps the $/progress messages an editor saw.
type progressLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *progressLog) add(kind, text string) {
	l.mu.Lock()
	l.msgs = append(l.msgs, kind+": "+text)
	l.mu.Unlock()
}

func (l *progressLog) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.msgs, "\n")
}

// A cairn.ask issued right after initialized on a fresh workspace waits for
// the code index (within index.waitMs): the first model request holds the
// repository map and search hits, the run's progress says it is indexing,
// and nothing is reported not ready.
func TestAskRightAfterInitializedWaitsForIndex(t *testing.T) {
	root := coldCorpus(t)
	var progress progressLog
	e := newEnv(t, "", withRoot(root), withScript(doneScript),
		withSettings(map[string]any{"index": map[string]any{"waitMs": 120000}}),
		withEditor(lspclient.Options{Progress: progress.add}))
	evs := e.waitRun(e.ask("json/stream.go", 40, 60, "How does the Decoder find the end of one JSON value before decoding it with decodeState?"))
	end := last(evs)
	if end.Kind != protocol.EventFinished {
		t.Fatalf("run ended %s: %s", end.Kind, end.Error)
	}
	if len(end.NotReady) != 0 {
		t.Errorf("finished says not ready %v after waiting", end.NotReady)
	}
	first := firstRequestText(t, e.provider)
	for _, want := range []string{"## Repository map", "Search hit for"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first model request lacks %q", want)
		}
	}
	if !strings.Contains(progress.all(), "indexing the workspace") {
		t.Errorf("no run progress said the question waits for indexing; progress:\n%s", progress.all())
	}
}

// Past a tiny index.waitMs on a cold workspace the question goes ahead: the
// files it is about were indexed first (the asked file's package is in the
// map and searchable), and both the finished event and the context report
// name the sources that were not ready.
func TestAskPastIndexWaitNamesSourcesNotReady(t *testing.T) {
	root := coldCorpus(t)
	e := newEnv(t, "", withRoot(root), withScript(doneScript),
		withSettings(map[string]any{"index": map[string]any{"waitMs": 1}}))
	runID := e.ask("json/stream.go", 40, 60, "How does the Decoder find the end of one JSON value before decoding it with decodeState?")
	evs := e.waitRun(runID)
	end := last(evs)
	if end.Kind != protocol.EventFinished {
		t.Fatalf("run ended %s: %s", end.Kind, end.Error)
	}
	if len(end.NotReady) == 0 {
		t.Fatalf("finished names no source not ready after a 1 ms wait on a cold workspace: %+v", end)
	}
	for _, s := range end.NotReady {
		if s != "repo map" && s != "search" {
			t.Errorf("finished names an unknown source %q", s)
		}
	}
	report, err := e.ed.ContextReport(e.ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report, "## Not ready") || !strings.Contains(report, end.NotReady[0]) {
		t.Errorf("the context report does not name the sources not ready %v:\n%s", end.NotReady, report)
	}
	first := firstRequestText(t, e.provider)
	if !strings.Contains(first, "## Repository map") {
		t.Errorf("the first model request has no repository map: the asked file's package was not indexed first")
	}
	if !strings.Contains(first, "decode.go") {
		t.Errorf("the first model request does not mention json/decode.go (same package as the asked file)")
	}
	if !strings.Contains(first, "Search hit for") {
		t.Errorf("the first model request has no search hit from the asked file's package")
	}
}

// A request read after initialize but before the initialized notification
// (a client that races, like an editor command issued as the server
// starts) is answered once initialized arrives, not refused.
func TestRequestBeforeInitializedIsQueued(t *testing.T) {
	serverEnd, clientEnd := net.Pipe()
	done := make(chan error, 1)
	state := t.TempDir()
	go func() {
		done <- server.Serve(context.Background(), serverEnd, serverEnd, server.Options{
			Getenv: func(k string) string {
				if k == "CAIRN_STATE_DIR" {
					return state
				}
				return ""
			}})
	}()
	rc := &rawConn{t: t, c: clientEnd, r: bufio.NewReader(clientEnd)}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// initialize and, without waiting for its answer, a command.
	rc.send(frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://%s","capabilities":{}}}`, root)))
	rc.send(frame(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"cairn.listThreads","arguments":[{}]}}`))
	responses := make(chan map[string]any, 4)
	go func() {
		for {
			m, ok := rc.tryNext()
			if !ok {
				close(responses)
				return
			}
			responses <- m
		}
	}()
	byID := map[float64]map[string]any{}
	waitID := func(id float64) map[string]any {
		t.Helper()
		deadline := time.After(time.Minute)
		for byID[id] == nil {
			select {
			case m, ok := <-responses:
				if !ok {
					t.Fatalf("the connection ended before response %v", id)
				}
				n, _ := m["id"].(float64)
				byID[n] = m
			case <-deadline:
				t.Fatalf("no response %v", id)
			}
		}
		return byID[id]
	}
	if m := waitID(1); m["error"] != nil {
		t.Fatalf("initialize: %v", m)
	}
	if m := byID[2]; m != nil {
		t.Fatalf("the command was answered before initialized: %v", m)
	}
	rc.send(frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
	m := waitID(2)
	if m["error"] != nil {
		t.Fatalf("a command sent before initialized was refused: %v", m["error"])
	}
	rc.send(frame(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`))
	waitID(3)
	rc.send(frame(`{"jsonrpc":"2.0","method":"exit"}`))
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the server did not exit")
	}
}

// tryNext reads frames until a response; false when the connection ends.
func (rc *rawConn) tryNext() (map[string]any, bool) {
	for {
		rc.c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		n := -1
		for {
			line, err := rc.r.ReadString('\n')
			if err != nil {
				return nil, false
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		if n < 0 {
			return nil, false
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(rc.r, body); err != nil {
			return nil, false
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, false
		}
		if _, ok := m["method"]; ok {
			continue
		}
		return m, true
	}
}
