package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/tools/shell"
)

// Shutdown timing: after stdin is closed a server gets stdinGrace to exit,
// then termGrace after SIGTERM to its process group, then SIGKILL.
const (
	stdinGrace = 300 * time.Millisecond
	termGrace  = 700 * time.Millisecond
)

// server is one configured MCP server and its child process.
type server struct {
	m     *Manager
	cfg   ServerConfig
	trust string
	label string // sanitized name used in tool names

	stderr tailBuffer

	mu      sync.Mutex
	state   string
	err     string
	info    string
	cmd     *exec.Cmd
	session *sdk.ClientSession
	// cancelRemote ends the connection to a remote (http/sse) server.
	cancelRemote context.CancelFunc
	stdin        *os.File // parent ends of the pipes
	stdout       *os.File
	done         chan struct{} // closed once the process has exited
	waitErr      error         // set before done is closed
	registered   map[string]string
	noted        map[string]bool // tools whose schema problem was already reported

	stopCh   chan struct{} // closed when the server is stopped or failed
	stopOnce sync.Once
	downOnce sync.Once
	relistCh chan struct{}
}

func newServer(m *Manager, cfg ServerConfig) *server {
	trust := TrustUntrusted
	if cfg.Trust == TrustTrusted {
		trust = TrustTrusted
	}
	return &server{
		m: m, cfg: cfg, trust: trust, label: sanitize(cfg.Name),
		state:      StateStarting,
		registered: map[string]string{},
		noted:      map[string]bool{},
		stopCh:     make(chan struct{}),
		relistCh:   make(chan struct{}, 1),
	}
}

func (s *server) healthy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == StateRunning || s.state == StateStarting
}

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{Name: s.cfg.Name, State: s.state, Trust: s.trust, Error: s.err, Info: s.info}
	for n := range s.registered {
		st.Tools = append(st.Tools, n)
	}
	sort.Strings(st.Tools)
	return st
}

func (s *server) environ() []string {
	env := shell.StripSecrets(s.m.opts.Environ)
	if len(s.cfg.Env) == 0 {
		return env
	}
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, override := s.cfg.Env[name]; !override {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(s.cfg.Env))
	for k := range s.cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+s.cfg.Env[k])
	}
	return out
}

// start launches the process, performs the handshake and registers the
// tools; any failure is reported and leaves the server failed.
func (s *server) start(ctx context.Context) {
	if s.cfg.Trust != "" && s.cfg.Trust != TrustTrusted && s.cfg.Trust != TrustUntrusted {
		s.m.event(s.cfg.Name, fmt.Sprintf("MCP server %s: unknown trust %q (use \"trusted\" or \"untrusted\"); treating the server as untrusted", s.cfg.Name, s.cfg.Trust))
	}
	if s.cfg.URL != "" {
		s.startRemote(ctx)
		return
	}
	if strings.TrimSpace(s.cfg.Command) == "" {
		s.fail("failed to start: no command configured")
		return
	}
	timeout := s.m.opts.HandshakeTimeout

	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.m.opts.Dir
	cmd.Env = s.environ()
	setProcessGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		s.fail(fmt.Sprintf("failed to start: %v", err))
		return
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		s.fail(fmt.Sprintf("failed to start: %v", err))
		return
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		s.fail(fmt.Sprintf("failed to start: %v", err))
		return
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	closeAll(inR, outW, errW) // the child's ends
	if err != nil {
		closeAll(inW, outR, errR)
		s.fail(fmt.Sprintf("failed to start %q: %v", s.cfg.Command, err))
		return
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.stdin, s.stdout, s.done = cmd, inW, outR, done
	s.mu.Unlock()
	go s.readStderr(errR)
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(done)
	}()
	s.m.logf("mcp %s: started %s (pid %d)", s.cfg.Name, s.cfg.Command, cmd.Process.Pid)

	client := sdk.NewClient(&sdk.Implementation{Name: "cairn", Version: s.m.opts.ClientVersion}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.requestRelist() },
	})
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type connected struct {
		cs  *sdk.ClientSession
		err error
	}
	ch := make(chan connected, 1)
	go func() {
		cs, err := client.Connect(hctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
		ch <- connected{cs, err}
	}()
	var r connected
	select {
	case r = <-ch:
	case <-time.After(timeout + 2*time.Second):
		// The SDK did not give up with the context: cut the pipes.
		s.shutdown()
		r = <-ch
		if r.err == nil {
			_ = r.cs.Close()
			r.err = context.DeadlineExceeded
		}
	}
	if r.err != nil {
		switch {
		case ctx.Err() != nil:
			s.abandon()
		case hctx.Err() == context.DeadlineExceeded:
			s.fail(fmt.Sprintf("no answer to the MCP handshake within %s; the server may be waiting for something else or may not speak MCP over stdio", timeout))
		default:
			msg := "the MCP handshake failed: " + s.explain(r.err)
			if !isGarbage(r.err) && waitFor(done, 200*time.Millisecond) {
				msg += "; " + s.exitNote()
			}
			s.fail(msg)
		}
		return
	}
	s.serve(ctx, r.cs, done)
}

// serve takes a connected session: it records it, watches it, lists the
// tools and registers them.
func (s *server) serve(ctx context.Context, cs *sdk.ClientSession, done <-chan struct{}) {
	timeout := s.m.opts.HandshakeTimeout
	s.mu.Lock()
	s.session = cs
	if ir := cs.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		s.info = strings.TrimSpace(ir.ServerInfo.Name + " " + ir.ServerInfo.Version)
	}
	stopped := s.state != StateStarting
	s.mu.Unlock()
	if stopped {
		_ = cs.Close()
		return
	}
	go s.watch(cs, done)

	lctx, lcancel := context.WithTimeout(ctx, timeout)
	list, err := listTools(lctx, cs)
	timedOut := lctx.Err() == context.DeadlineExceeded
	lcancel()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		s.abandon()
		return
	case timedOut:
		s.fail(fmt.Sprintf("no answer to tools/list within %s", timeout))
		return
	default:
		s.fail(fmt.Sprintf("listing its tools failed: %v", s.explain(err)))
		return
	}
	s.mu.Lock()
	if s.state != StateStarting {
		s.mu.Unlock()
		return
	}
	s.state = StateRunning
	notes := s.syncLocked(list)
	n := len(s.registered)
	s.mu.Unlock()
	s.report(notes)
	s.m.logf("mcp %s: running (%s), %d tools, %s", s.cfg.Name, s.info, n, s.trust)
	go s.relistLoop()
}

func listTools(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// explain turns SDK errors into something a user can act on.
func (s *server) explain(err error) string {
	if isGarbage(err) {
		return err.Error() + " (the server wrote something that is not MCP JSON-RPC to stdout)"
	}
	return err.Error()
}

// isGarbage reports whether err comes from undecodable server output.
func isGarbage(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "invalid character") || strings.Contains(msg, "trailing data") ||
		strings.Contains(msg, "cannot unmarshal") || strings.Contains(msg, "unexpected end of JSON")
}

// watch reports the server's death or a broken connection.
func (s *server) watch(cs *sdk.ClientSession, done <-chan struct{}) {
	connDone := make(chan error, 1)
	go func() { connDone <- cs.Wait() }()
	var msg string
	select {
	case <-s.stopCh:
		return
	case <-done:
		msg = s.exitNote()
	case err := <-connDone:
		// Usually the process is exiting; give it a moment to say so.
		select {
		case <-s.stopCh:
			return
		case <-done:
			msg = s.exitNote()
		case <-time.After(300 * time.Millisecond):
			if err == nil {
				err = errors.New("connection closed")
			}
			msg = "the connection broke: " + s.explain(err)
		}
	}
	s.fail(msg)
}

func (s *server) exitNote() string {
	s.mu.Lock()
	err := s.waitErr
	s.mu.Unlock()
	if err == nil {
		return "the server exited (status 0)"
	}
	return "the server exited (" + err.Error() + ")"
}

func (s *server) stderrNote() string {
	// Let the stderr reader catch up with what the process wrote last.
	time.Sleep(50 * time.Millisecond)
	if t := s.stderr.tail(6, 600); t != "" {
		return "; its stderr ends with:\n" + t
	}
	return ""
}

func (s *server) readStderr(r *os.File) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		s.stderr.add(line)
		s.m.logf("mcp %s stderr: %s", s.cfg.Name, line)
	}
	// Drain an over-long line so the child never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, r)
}

// fail marks the server failed, withdraws its tools, stops the process and
// reports msg. A server already stopped or failed is left alone.
func (s *server) fail(msg string) {
	s.mu.Lock()
	if s.state != StateStarting && s.state != StateRunning {
		s.mu.Unlock()
		return
	}
	s.state = StateFailed
	s.err = msg
	withdrawn := s.withdrawLocked()
	started := s.cmd != nil
	s.mu.Unlock()
	if withdrawn > 0 {
		msg += fmt.Sprintf("; its %d tools are withdrawn", withdrawn)
	}
	if started {
		msg += s.stderrNote()
	}
	s.shutdown()
	s.m.event(s.cfg.Name, "MCP server "+s.cfg.Name+": "+msg)
}

// abandon stops a server whose start was cancelled, without reporting.
func (s *server) abandon() {
	s.mu.Lock()
	if s.state == StateStarting || s.state == StateRunning {
		s.state = StateStopped
	}
	s.withdrawLocked()
	s.mu.Unlock()
	s.shutdown()
}

// stop stops the server on request (Close, configuration change).
func (s *server) stop() {
	s.mu.Lock()
	if s.state == StateStarting || s.state == StateRunning {
		s.state = StateStopped
	}
	s.withdrawLocked()
	s.mu.Unlock()
	s.shutdown()
}

func (s *server) withdrawLocked() int {
	n := len(s.registered)
	for name := range s.registered {
		s.m.opts.Registry.Unregister(name)
	}
	s.registered = map[string]string{}
	return n
}

// shutdown ends the session and the process group; it is idempotent and
// bounded (about a second and a half at worst).
func (s *server) shutdown() {
	s.stopOnce.Do(func() { close(s.stopCh) })
	s.downOnce.Do(func() {
		s.mu.Lock()
		cmd, cs, stdin, stdout, done, cancelRemote := s.cmd, s.session, s.stdin, s.stdout, s.done, s.cancelRemote
		s.mu.Unlock()
		if cancelRemote != nil {
			// A remote server's session ends with its connection.
			defer cancelRemote()
		}
		if cs != nil {
			// Closing the session closes our ends of the pipes; the server
			// sees end of input (the MCP stdio shutdown sequence).
			go func() { _ = cs.Close() }()
		} else {
			closeAll(stdin, stdout)
		}
		if cmd == nil {
			return
		}
		if !waitFor(done, stdinGrace) {
			signalGroup(cmd, false)
			if !waitFor(done, termGrace) {
				signalGroup(cmd, true)
				waitFor(done, 2*time.Second)
			}
		}
		// Whatever the server left behind in its group goes too.
		signalGroup(cmd, true)
		closeAll(stdin, stdout)
	})
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	if ch == nil {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

func (s *server) requestRelist() {
	select {
	case s.relistCh <- struct{}{}:
	default: // one pending re-list covers this notification too
	}
}

func (s *server) relistLoop() {
	for {
		select {
		case <-s.stopCh:
			return
		case <-s.relistCh:
		}
		s.mu.Lock()
		cs := s.session
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), s.m.opts.HandshakeTimeout)
		go func() {
			select {
			case <-s.stopCh:
				cancel()
			case <-ctx.Done():
			}
		}()
		list, err := listTools(ctx, cs)
		cancel()
		if err != nil {
			select {
			case <-s.stopCh:
				return
			default:
			}
			s.m.event(s.cfg.Name, fmt.Sprintf("MCP server %s: re-listing its tools after a change failed: %v; the previous tools stay registered", s.cfg.Name, s.explain(err)))
			continue
		}
		s.mu.Lock()
		if s.state != StateRunning {
			s.mu.Unlock()
			return
		}
		notes := s.syncLocked(list)
		n := len(s.registered)
		s.mu.Unlock()
		s.report(notes)
		s.m.logf("mcp %s: tool list changed, %d tools", s.cfg.Name, n)
	}
}

func (s *server) report(notes []string) {
	for _, n := range notes {
		s.m.event(s.cfg.Name, "MCP server "+s.cfg.Name+": "+n)
	}
}

// syncLocked registers list and unregisters the tools that vanished. It
// returns the problems to report (each tool's problem once).
func (s *server) syncLocked(list []*sdk.Tool) []string {
	var notes []string
	note := func(key, msg string) {
		if !s.noted[key] {
			s.noted[key] = true
			notes = append(notes, msg)
		}
	}
	want := map[string]string{}
	for _, mt := range list {
		if mt == nil || mt.Name == "" {
			continue
		}
		name := ToolName(s.cfg.Name, mt.Name)
		if other, clash := want[name]; clash {
			note("clash:"+mt.Name, fmt.Sprintf("tools %q and %q both map to %s; %q is not offered", other, mt.Name, name, mt.Name))
			continue
		}
		t := s.tool(name, mt)
		schemaErr := ""
		schema, err := inputSchema(mt)
		if err == nil {
			t.Schema = schema
			if err := s.m.opts.Registry.Register(t); err == nil {
				want[name] = mt.Name
				continue
			} else {
				schemaErr = err.Error()
			}
		} else {
			schemaErr = err.Error()
		}
		// Fall back to a permissive object schema; show the model the
		// original so it still knows the parameters.
		t = s.tool(name, mt)
		t.Schema = permissiveSchema
		if raw, err := json.Marshal(mt.InputSchema); err == nil && mt.InputSchema != nil {
			t.Description = capString(t.Description+"\nInput schema (not checked by Cairn): "+string(raw), maxDescription)
		}
		if err := s.m.opts.Registry.Register(t); err != nil {
			note("reg:"+mt.Name, fmt.Sprintf("tool %q could not be registered: %v", mt.Name, err))
			continue
		}
		want[name] = mt.Name
		note("schema:"+mt.Name, fmt.Sprintf("the input schema of tool %q could not be used (%s); it is registered with a permissive object schema and the server checks its input", mt.Name, schemaErr))
	}
	for name := range s.registered {
		if _, ok := want[name]; !ok {
			s.m.opts.Registry.Unregister(name)
		}
	}
	s.registered = want
	return notes
}

// tool builds the registry entry for one MCP tool (without its schema).
func (s *server) tool(name string, mt *sdk.Tool) *tools.Tool {
	ann := mt.Annotations
	if s.trust != TrustTrusted {
		ann = nil // an untrusted server's annotations are not believed
	}
	risk, side, idem := Classify(s.trust, ann)
	mcpName := mt.Name
	label := s.cfg.Name + "/" + mcpName
	return &tools.Tool{
		Name:           name,
		Description:    description(s.cfg.Name, s.trust, mt),
		Risk:           risk,
		Timeout:        s.m.opts.ToolTimeout,
		MaxOutputBytes: s.m.opts.MaxOutputBytes,
		SideEffects:    side,
		Idempotent:     idem,
		Classify: func(json.RawMessage) (tools.Risk, string) {
			return risk, "MCP tool " + mcpName + " of server " + s.cfg.Name + " (" + s.trust + ")"
		},
		Run: func(ctx context.Context, _ *tools.Env, input json.RawMessage) (tools.Result, error) {
			return s.call(ctx, mcpName, label, input)
		},
	}
}

// call runs one MCP tool. It returns at the latest when ctx ends or the
// server stops; a server that is gone gives an error result at once.
func (s *server) call(ctx context.Context, mcpName, label string, input json.RawMessage) (tools.Result, error) {
	s.mu.Lock()
	state, cs, why := s.state, s.session, s.err
	s.mu.Unlock()
	if state != StateRunning || cs == nil {
		if why == "" {
			why = "it is " + state
		}
		return tools.Result{
			Content: fmt.Sprintf("MCP server %s is not available (%s); its tool %s cannot be called", s.cfg.Name, why, mcpName),
			IsError: true, Summary: label + ": server not available",
		}, nil
	}
	if len(strings.TrimSpace(string(input))) == 0 {
		input = json.RawMessage(`{}`)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stopCh:
			cancel()
		case <-cctx.Done():
		}
	}()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: mcpName, Arguments: input})
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err() // timeout or cancellation: Invoke and the agent report it
		}
		s.mu.Lock()
		why = s.err
		s.mu.Unlock()
		msg := fmt.Sprintf("calling %s on MCP server %s failed: %v", mcpName, s.cfg.Name, err)
		if why != "" {
			msg = fmt.Sprintf("calling %s on MCP server %s failed: %s", mcpName, s.cfg.Name, why)
		}
		return tools.Result{Content: msg, IsError: true, Summary: label + ": call failed"}, nil
	}
	return convertResult(label, res), nil
}

// tailBuffer keeps the last lines a server wrote to stderr.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *tailBuffer) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, capString(line, 300))
	if len(b.lines) > 20 {
		b.lines = append(b.lines[:0:0], b.lines[len(b.lines)-20:]...)
	}
}

func (b *tailBuffer) tail(n, max int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := b.lines
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return capString(strings.Join(lines, "\n"), max)
}
