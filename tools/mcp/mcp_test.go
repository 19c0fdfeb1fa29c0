package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairn-dev/cairn/tools"
)

// recorder collects OnEvent and Logf output.
type recorder struct {
	mu     sync.Mutex
	events []string // "server: message"
	logs   []string
}

func (r *recorder) onEvent(server, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, server+": "+msg)
}

func (r *recorder) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) find(list *[]string, server, substr string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range *list {
		if strings.HasPrefix(e, server+": ") && strings.Contains(e, substr) {
			return e, true
		}
	}
	return "", false
}

func (r *recorder) event(server, substr string) (string, bool) {
	return r.find(&r.events, server, substr)
}

func (r *recorder) log(server, substr string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.logs {
		if strings.HasPrefix(l, "mcp "+server+": ") && strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

func (r *recorder) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "events:\n  " + strings.Join(r.events, "\n  ") + "\nlogs:\n  " + strings.Join(r.logs, "\n  ")
}

func newTestManager(t *testing.T, handshake time.Duration) (*Manager, *tools.Registry, *recorder) {
	t.Helper()
	reg := tools.NewRegistry()
	rec := &recorder{}
	m := NewManager(Options{
		Registry: reg, OnEvent: rec.onEvent, Logf: rec.logf, Dir: t.TempDir(),
		HandshakeTimeout: handshake, ToolTimeout: time.Minute,
	})
	t.Cleanup(func() { within(t, "Close", func() { _ = m.Close() }) })
	return m, reg, rec
}

// within runs f and fails the test if f has not returned after a minute.
// It catches hangs (a Close or an Update that waits for a server that
// never answers), never slowness: no test here asserts how long a thing
// took, since the machine running it may be loaded.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return within a minute", what)
	}
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mcpTools(reg *tools.Registry, server string) []string {
	var out []string
	for _, n := range reg.Names() {
		if strings.HasPrefix(n, "mcp__"+server+"__") {
			out = append(out, n)
		}
	}
	return out
}

// call validates args against the registered schema and invokes the tool
// through the registry's pipeline (timeout, output policy).
func call(t *testing.T, reg *tools.Registry, name, args string) tools.Result {
	t.Helper()
	tool, ok := reg.Get(name)
	if !ok {
		t.Fatalf("tool %s is not registered; have %v", name, reg.Names())
	}
	input, err := tool.Validate(args)
	if err != nil {
		t.Fatalf("validating %s %s: %v", name, args, err)
	}
	res, err := tool.Invoke(context.Background(), &tools.Env{}, input)
	if err != nil {
		t.Fatalf("invoking %s: %v", name, err)
	}
	return res
}

func TestFakeServerToolsAndResults(t *testing.T) {
	m, reg, rec := newTestManager(t, time.Minute)
	fake := fakeServer("fake", "dynamic")
	fake.Trust = TrustTrusted
	m.Update(context.Background(), []ServerConfig{fake})

	st := m.Servers()
	if len(st) != 1 || st[0].State != StateRunning || st[0].Info != "fake 1.0.0" {
		t.Fatalf("status = %+v\n%s", st, rec.dump())
	}
	want := []string{"mcp__fake__badschema", "mcp__fake__crash", "mcp__fake__echo", "mcp__fake__fail", "mcp__fake__media",
		"mcp__fake__reader", "mcp__fake__sleep", "mcp__fake__swap", "mcp__fake__weird_name_with_spaces", "mcp__fake__wiper"}
	if got := mcpTools(reg, "fake"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tools = %v, want %v", got, want)
	}

	echo, _ := reg.Get("mcp__fake__echo")
	if !strings.HasPrefix(echo.Description, "[MCP server fake] Echoes text.") {
		t.Errorf("description = %q", echo.Description)
	}
	if echo.Risk != tools.RiskWrite || !echo.SideEffects {
		t.Errorf("unannotated trusted tool: risk %s side effects %v, want write, true", echo.Risk, echo.SideEffects)
	}
	if r, _ := reg.Get("mcp__fake__reader"); r.Risk != tools.RiskRead || r.SideEffects {
		t.Errorf("read-only trusted tool: risk %s side effects %v", r.Risk, r.SideEffects)
	}
	if r, _ := reg.Get("mcp__fake__wiper"); r.Risk != tools.RiskDestructive {
		t.Errorf("destructive trusted tool: risk %s", r.Risk)
	}
	// The server's schema is enforced by the registry.
	if _, err := echo.Validate(`{"text": 3}`); err == nil {
		t.Errorf("echo accepted a number for text")
	}
	if _, err := echo.Validate(`{"text": "x", "extra": 1}`); err == nil {
		t.Errorf("echo accepted an extra property")
	}
	res := call(t, reg, "mcp__fake__echo", `{"text":"hello"}`)
	if res.IsError || res.Content != "echo: hello" || !strings.Contains(res.Summary, "fake/echo") {
		t.Errorf("echo result = %+v", res)
	}

	// A schema that does not compile: permissive schema, original shown, reported.
	bad, _ := reg.Get("mcp__fake__badschema")
	if string(bad.Schema) != string(permissiveSchema) || !strings.Contains(bad.Description, "#/$defs/missing") {
		t.Errorf("badschema: schema %s description %q", bad.Schema, bad.Description)
	}
	if e, ok := rec.event("fake", "badschema"); !ok || !strings.Contains(e, "permissive") {
		t.Errorf("no event about the bad schema:\n%s", rec.dump())
	}
	if res := call(t, reg, "mcp__fake__badschema", `{"text":"x"}`); res.Content != "bad: x" {
		t.Errorf("badschema result = %+v", res)
	}

	res = call(t, reg, "mcp__fake__media", `{}`)
	for _, want := range []string{"here you go", "[image image/png, 8 bytes: not shown]",
		"[resource file:///notes.txt (text/plain)]\nembedded text",
		"[resource file:///blob.bin: application/octet-stream, 3 bytes of binary data: not shown]",
		"[resource link file:///linked.md linked.md]"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("media result lacks %q:\n%s", want, res.Content)
		}
	}
	res = call(t, reg, "mcp__fake__fail", `{}`)
	if !res.IsError || res.Content != "no such thing" || !strings.Contains(res.Summary, "failed") {
		t.Errorf("fail result = %+v", res)
	}
	if res := call(t, reg, "mcp__fake__weird_name_with_spaces", `{}`); res.Content != "weird" {
		t.Errorf("weird result = %+v", res)
	}

	// A call that never returns (the fake sleeps an hour) ends with the
	// tool timeout.
	sleep, _ := reg.Get("mcp__fake__sleep")
	sleep.Timeout = 500 * time.Millisecond
	within(t, "a call past its timeout", func() { res = call(t, reg, "mcp__fake__sleep", `{}`) })
	if !res.IsError || !strings.Contains(res.Content, "timed out") {
		t.Errorf("sleep result = %+v", res)
	}
	// The server is still usable after a timed-out call.
	if res := call(t, reg, "mcp__fake__echo", `{"text":"still here"}`); res.Content != "echo: still here" {
		t.Errorf("echo after timeout = %+v", res)
	}
}

func TestListChangedReregisters(t *testing.T) {
	m, reg, rec := newTestManager(t, time.Minute)
	m.Update(context.Background(), []ServerConfig{fakeServer("dyn", "dynamic")})
	if _, ok := reg.Get("mcp__dyn__echo"); !ok {
		t.Fatalf("echo not registered: %v\n%s", reg.Names(), rec.dump())
	}
	if res := call(t, reg, "mcp__dyn__swap", `{}`); res.Content != "swapped" {
		t.Fatalf("swap = %+v", res)
	}
	waitUntil(t, time.Minute, "echo2 to replace echo", func() bool {
		_, echo := reg.Get("mcp__dyn__echo")
		_, echo2 := reg.Get("mcp__dyn__echo2")
		return !echo && echo2
	})
	if res := call(t, reg, "mcp__dyn__echo2", `{"text":"again"}`); res.Content != "echo2: again" {
		t.Errorf("echo2 = %+v", res)
	}
	st := m.Servers()[0]
	if !strings.Contains(strings.Join(st.Tools, ","), "mcp__dyn__echo2") || strings.Contains(strings.Join(st.Tools, ",")+",", "mcp__dyn__echo,") {
		t.Errorf("status tools = %v", st.Tools)
	}
}

func TestUntrustedServerToolsAreNetwork(t *testing.T) {
	m, reg, rec := newTestManager(t, time.Minute)
	m.Update(context.Background(), []ServerConfig{fakeServer("u", "dynamic")}) // trust unset: untrusted
	names := mcpTools(reg, "u")
	if len(names) == 0 {
		t.Fatalf("no tools:\n%s", rec.dump())
	}
	for _, n := range names {
		tool, _ := reg.Get(n)
		risk, detail := tool.RiskOf(json.RawMessage(`{}`))
		if tool.Risk != tools.RiskNetwork || risk != tools.RiskNetwork || !tool.SideEffects || tool.Idempotent {
			t.Errorf("%s: risk %s/%s side effects %v idempotent %v; want network, side effects, not idempotent", n, tool.Risk, risk, tool.SideEffects, tool.Idempotent)
		}
		if !strings.Contains(detail, "untrusted") || !strings.Contains(tool.Description, "untrusted") {
			t.Errorf("%s: detail %q description %q should say untrusted", n, detail, tool.Description)
		}
		if a, _ := tools.DefaultPolicy().Action(n, risk, ""); a != tools.Ask {
			t.Errorf("%s: default policy says %s, want ask", n, a)
		}
	}
	// Annotations of an untrusted server are not believed.
	if r, _ := reg.Get("mcp__u__reader"); r.Risk != tools.RiskNetwork {
		t.Errorf("untrusted read-only claim believed: %s", r.Risk)
	}
}

func TestCommandNotFound(t *testing.T) {
	m, reg, rec := newTestManager(t, time.Minute)
	within(t, "Update", func() {
		m.Update(context.Background(), []ServerConfig{
			{Name: "missing", Command: "/nonexistent/cairn-mcp-server-xyz"},
			{Name: "nocmd"},
			fakeServer("ok", "dynamic"),
		})
	})
	if e, ok := rec.event("missing", "failed to start"); !ok || !strings.Contains(e, "cairn-mcp-server-xyz") {
		t.Errorf("no start failure reported:\n%s", rec.dump())
	}
	if _, ok := rec.event("nocmd", "no command"); !ok {
		t.Errorf("no 'no command' event:\n%s", rec.dump())
	}
	if len(mcpTools(reg, "missing")) != 0 {
		t.Errorf("tools of a missing server registered")
	}
	// The others keep working.
	if res := call(t, reg, "mcp__ok__echo", `{"text":"fine"}`); res.Content != "echo: fine" {
		t.Errorf("echo = %+v", res)
	}
	for _, st := range m.Servers() {
		want := StateFailed
		if st.Name == "ok" {
			want = StateRunning
		}
		if st.State != want {
			t.Errorf("%s: state %s, want %s (%s)", st.Name, st.State, want, st.Error)
		}
	}
}

func TestServerDiesAtOnce(t *testing.T) {
	m, reg, rec := newTestManager(t, time.Minute)
	m.Update(context.Background(), []ServerConfig{fakeServer("dead", "die")})
	e, ok := rec.event("dead", "handshake failed")
	if !ok {
		t.Fatalf("not reported:\n%s", rec.dump())
	}
	for _, want := range []string{"exit status 1", "npm error 404"} {
		if !strings.Contains(e, want) {
			t.Errorf("event lacks %q: %s", want, e)
		}
	}
	if len(mcpTools(reg, "dead")) != 0 {
		t.Errorf("tools registered")
	}
}

func TestGarbageOnStdout(t *testing.T) {
	// A handshake timeout far beyond the test's patience: the garbage must
	// be reported as such, not as a server that never answered.
	m, reg, rec := newTestManager(t, time.Hour)
	within(t, "Update with a server printing garbage", func() {
		m.Update(context.Background(), []ServerConfig{fakeServer("garbage", "garbage")})
	})
	if e, ok := rec.event("garbage", "handshake failed"); !ok || !strings.Contains(e, "not MCP JSON-RPC") {
		t.Errorf("garbage not reported clearly:\n%s", rec.dump())
	}
	if len(mcpTools(reg, "garbage")) != 0 {
		t.Errorf("tools registered")
	}
}

func TestGarbageAfterHandshake(t *testing.T) {
	m, reg, rec := newTestManager(t, time.Minute)
	m.Update(context.Background(), []ServerConfig{fakeServer("noisy", "garbage-later", "CAIRN_MCP_FAKE_DELAY", "5000")})
	tool, ok := reg.Get("mcp__noisy__echo")
	if !ok {
		t.Fatalf("noisy did not register its tools before the noise:\n%s", rec.dump())
	}
	waitUntil(t, time.Minute, "the noise to be reported", func() bool { _, ok := rec.event("noisy", "withdrawn"); return ok })
	if len(mcpTools(reg, "noisy")) != 0 {
		t.Errorf("tools not withdrawn: %v", reg.Names())
	}
	res, err := tool.Invoke(context.Background(), &tools.Env{}, json.RawMessage(`{"text":"x"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "not available") {
		t.Errorf("call to a withdrawn tool = %+v, %v", res, err)
	}
}

func TestHangingHandshakeTimesOut(t *testing.T) {
	m, reg, rec := newTestManager(t, 10*time.Second) // the hang is only declared after it: long enough for a loaded machine to start the other server
	within(t, "Update with a hanging server", func() {
		m.Update(context.Background(), []ServerConfig{fakeServer("hang", "hang"), fakeServer("ok", "dynamic")})
	})
	if _, ok := rec.event("hang", "no answer to the MCP handshake within 10s"); !ok {
		t.Errorf("hang not reported:\n%s", rec.dump())
	}
	if len(mcpTools(reg, "hang")) != 0 {
		t.Errorf("tools registered")
	}
	if res := call(t, reg, "mcp__ok__echo", `{"text":"fine"}`); res.Content != "echo: fine" {
		t.Errorf("echo = %+v", res)
	}
}

func TestHangingToolsList(t *testing.T) {
	m, reg, rec := newTestManager(t, 10*time.Second) // tools/list is only declared hanging after it: long enough for a loaded machine to get through initialize
	within(t, "Update with a hanging tools/list", func() {
		m.Update(context.Background(), []ServerConfig{fakeServer("slow", "hang-list")})
	})
	if e, ok := rec.event("slow", "no answer to tools/list within 10s"); !ok || strings.Contains(e, "withdrawn") {
		t.Errorf("hanging tools/list not reported:\n%s", rec.dump())
	}
	if len(mcpTools(reg, "slow")) != 0 || m.Servers()[0].State != StateFailed {
		t.Errorf("tools %v, status %+v", reg.Names(), m.Servers())
	}
}

func TestServerExitsAfterHandshake(t *testing.T) {
	m, reg, rec := newTestManager(t, time.Minute)
	m.Update(context.Background(), []ServerConfig{fakeServer("quitter", "exit", "CAIRN_MCP_FAKE_DELAY", "5000"), fakeServer("ok", "dynamic")})
	tool, ok := reg.Get("mcp__quitter__echo")
	if !ok {
		t.Fatalf("quitter did not register before exiting:\n%s", rec.dump())
	}
	waitUntil(t, time.Minute, "the exit to be reported", func() bool { _, ok := rec.event("quitter", "exited"); return ok })
	e, _ := rec.event("quitter", "exited")
	for _, want := range []string{"exit status 3", "withdrawn", "fake: giving up"} {
		if !strings.Contains(e, want) {
			t.Errorf("exit event lacks %q: %s", want, e)
		}
	}
	if len(mcpTools(reg, "quitter")) != 0 {
		t.Errorf("tools not withdrawn: %v", reg.Names())
	}
	// Answered at once as "not available", not after the tool timeout.
	res, err := tool.Invoke(context.Background(), &tools.Env{}, json.RawMessage(`{"text":"x"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "not available") {
		t.Errorf("call to a dead server = %+v, %v", res, err)
	}
	if st := m.Servers(); st[1].Name != "quitter" || st[1].State != StateFailed || !strings.Contains(st[1].Error, "exit status 3") {
		t.Errorf("status = %+v", st)
	}
	if res := call(t, reg, "mcp__ok__echo", `{"text":"fine"}`); res.Content != "echo: fine" {
		t.Errorf("the other server: %+v", res)
	}

	// Update retries a failed server.
	m.Update(context.Background(), []ServerConfig{fakeServer("quitter", "exit", "CAIRN_MCP_FAKE_DELAY", "60000"), fakeServer("ok", "dynamic")})
	if _, ok := reg.Get("mcp__quitter__echo"); !ok {
		t.Errorf("quitter not restarted by Update:\n%s", rec.dump())
	}
}

func TestCrashDuringCall(t *testing.T) {
	m, reg, rec := newTestManager(t, time.Minute)
	m.Update(context.Background(), []ServerConfig{fakeServer("crashy", "dynamic")})
	// The crash ends the call with a failure, not with the (minute-long)
	// tool timeout.
	var res tools.Result
	within(t, "a call whose server crashes", func() { res = call(t, reg, "mcp__crashy__crash", `{}`) })
	if !res.IsError || strings.Contains(res.Content, "timed out") {
		t.Errorf("crash call = %+v", res)
	}
	waitUntil(t, time.Minute, "the crash to be reported", func() bool { _, ok := rec.event("crashy", "exit status 3"); return ok })
	if len(mcpTools(reg, "crashy")) != 0 {
		t.Errorf("tools not withdrawn: %v", reg.Names())
	}
}

func TestUpdateStopsRemovedAndChangedServers(t *testing.T) {
	m, reg, rec := newTestManager(t, time.Minute)
	a, b := fakeServer("a", "dynamic"), fakeServer("b", "dynamic")
	m.Update(context.Background(), []ServerConfig{a, b})
	if len(mcpTools(reg, "a")) == 0 || len(mcpTools(reg, "b")) == 0 {
		t.Fatalf("not started: %v\n%s", reg.Names(), rec.dump())
	}
	b.Trust = TrustTrusted
	m.Update(context.Background(), []ServerConfig{b})
	if len(mcpTools(reg, "a")) != 0 {
		t.Errorf("a's tools still registered after removal")
	}
	if r, ok := reg.Get("mcp__b__reader"); !ok || r.Risk != tools.RiskRead {
		t.Errorf("b not restarted as trusted: %+v", r)
	}
	rec.mu.Lock()
	for _, e := range rec.events { // only the bad schema note of each server instance
		if !strings.Contains(e, "badschema") {
			t.Errorf("unexpected event: %s", e)
		}
	}
	rec.mu.Unlock()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(reg.Names()); n != 0 {
		t.Errorf("after Close %d tools remain: %v", n, reg.Names())
	}
	m.Update(context.Background(), []ServerConfig{a}) // no-op after Close
	if n := len(reg.Names()); n != 0 {
		t.Errorf("Update after Close registered tools")
	}
}

func TestCloseAbortsHandshake(t *testing.T) {
	// The handshake would wait an hour: only Close can end it in time.
	m, _, rec := newTestManager(t, time.Hour)
	done := make(chan struct{})
	go func() {
		m.Update(context.Background(), []ServerConfig{fakeServer("hang", "hang")})
		close(done)
	}()
	waitUntil(t, time.Minute, "the hanging server to start", func() bool {
		_, ok := rec.find(&rec.logs, "mcp hang", "started")
		return ok
	})
	within(t, "Close during a handshake", func() { _ = m.Close() })
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Update did not return after Close")
	}
	if _, ok := rec.event("hang", ""); ok {
		t.Errorf("a deliberate Close was reported as a failure:\n%s", rec.dump())
	}
}

func TestConfigValidation(t *testing.T) {
	m, _, rec := newTestManager(t, time.Minute)
	bad := fakeServer("x.y", "dynamic")
	bad.Trust = "yes please"
	m.Update(context.Background(), []ServerConfig{bad, fakeServer("x_y", "dynamic"), {Name: ""}})
	if _, ok := rec.event("x.y", "unknown trust"); !ok {
		t.Errorf("unknown trust not reported:\n%s", rec.dump())
	}
	if _, ok := rec.event("x_y", "clash"); !ok {
		t.Errorf("clash not reported:\n%s", rec.dump())
	}
	if _, ok := rec.event("", "without a name"); !ok {
		t.Errorf("nameless server not reported:\n%s", rec.dump())
	}
	st := m.Servers()
	if len(st) != 1 || st[0].Trust != TrustUntrusted || st[0].State != StateRunning {
		t.Errorf("status = %+v", st)
	}
}

func TestToolName(t *testing.T) {
	cases := map[[2]string]string{
		{"fs", "read_file"}:                 "mcp__fs__read_file",
		{"every thing", "get-sum"}:          "mcp__every_thing__get-sum",
		{"gh", "repos.list/all"}:            "mcp__gh__repos_list_all",
		{"", ""}:                            "mcp______",
		{"ünï", "tool"}:                     "mcp___n___tool",
		{"server", strings.Repeat("x", 80)}: "",
	}
	for in, want := range cases {
		got := ToolName(in[0], in[1])
		if len(got) > 64 {
			t.Errorf("ToolName(%q, %q) = %q: longer than 64", in[0], in[1], got)
		}
		if want != "" && got != want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
	long1, long2 := ToolName("s", strings.Repeat("y", 70)+"a"), ToolName("s", strings.Repeat("y", 70)+"b")
	if long1 == long2 || len(long1) != 64 {
		t.Errorf("long names %q %q", long1, long2)
	}
}

func TestClassify(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		trust      string
		ann        *sdk.ToolAnnotations
		risk       tools.Risk
		side, idem bool
	}{
		{"", &sdk.ToolAnnotations{ReadOnlyHint: true}, tools.RiskNetwork, true, false},
		{TrustUntrusted, nil, tools.RiskNetwork, true, false},
		{"bogus", &sdk.ToolAnnotations{ReadOnlyHint: true}, tools.RiskNetwork, true, false},
		{TrustTrusted, nil, tools.RiskWrite, true, false},
		{TrustTrusted, &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}, tools.RiskRead, false, true},
		{TrustTrusted, &sdk.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true}, tools.RiskDestructive, true, true},
		{TrustTrusted, &sdk.ToolAnnotations{DestructiveHint: &no}, tools.RiskWrite, true, false},
		{TrustTrusted, &sdk.ToolAnnotations{}, tools.RiskWrite, true, false},
	}
	for i, c := range cases {
		r, s, id := Classify(c.trust, c.ann)
		if r != c.risk || s != c.side || id != c.idem {
			t.Errorf("case %d: got %s %v %v, want %s %v %v", i, r, s, id, c.risk, c.side, c.idem)
		}
	}
}

func TestParseServersAndEnviron(t *testing.T) {
	cfgs, err := ParseServers(json.RawMessage(`{"b":{"command":"x","args":["1"],"env":{"TOKEN":"t"},"trust":"trusted"},"a":{"command":"y"}}`))
	if err != nil || len(cfgs) != 2 || cfgs[0].Name != "a" || cfgs[1].Name != "b" || cfgs[1].Trust != TrustTrusted || cfgs[1].Env["TOKEN"] != "t" {
		t.Fatalf("ParseServers = %+v, %v", cfgs, err)
	}
	if c, err := ParseServers(nil); c != nil || err != nil {
		t.Errorf("ParseServers(nil) = %v, %v", c, err)
	}
	if _, err := ParseServers(json.RawMessage(`[1]`)); err == nil {
		t.Errorf("ParseServers accepted an array")
	}

	m := NewManager(Options{Registry: tools.NewRegistry(), Environ: []string{"PATH=/bin", "OPENAI_API_KEY=sk-secret", "HOME=/h", "GITHUB_TOKEN=ght"}})
	defer m.Close()
	s := newServer(m, ServerConfig{Name: "s", Env: map[string]string{"GITHUB_TOKEN": "configured", "HOME": "/other"}})
	env := strings.Join(s.environ(), " ")
	if env != "PATH=/bin GITHUB_TOKEN=configured HOME=/other" {
		t.Errorf("environ = %s", env)
	}
}

func TestConvertResult(t *testing.T) {
	res := convertResult("s/t", &sdk.CallToolResult{StructuredContent: map[string]any{"n": 1}})
	if res.Content != `{"n":1}` || res.IsError {
		t.Errorf("structured = %+v", res)
	}
	res = convertResult("s/t", &sdk.CallToolResult{IsError: true})
	if !res.IsError || res.Summary != "s/t failed" {
		t.Errorf("empty error = %+v", res)
	}
	res = convertResult("s/t", &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("abcd")}}})
	if res.Content != "[audio audio/wav, 4 bytes: not shown]" {
		t.Errorf("audio = %+v", res)
	}
}
