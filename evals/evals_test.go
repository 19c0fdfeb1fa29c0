package evals

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/server"
)

var update = flag.Bool("update", false, "rewrite evals/baseline.json from the suite")

// serverCommand starts this test binary as `cairn serve` (see TestMain),
// for the cases that kill the server.
var serverCommand = []string{os.Args[0]}

const serveEnv = "CAIRN_EVALS_TEST_SERVE=1"

// echoMCP starts this test binary as the echo MCP server.
var echoMCP = &MCPCommand{Command: os.Args[0], Env: map[string]string{"CAIRN_EVALS_TEST_MCP": "1"}}

func TestMain(m *testing.M) {
	if os.Getenv("CAIRN_EVALS_TEST_MCP") == "1" {
		if err := ServeEchoMCP(context.Background()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("CAIRN_EVALS_TEST_SERVE") == "1" {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		if err := server.Serve(context.Background(), os.Stdin, os.Stdout, server.Options{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	flag.Parse()
	// The servers log every run; the reports say what failed.
	if os.Getenv("CAIRN_LOG") != "debug" {
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	os.Exit(m.Run())
}

// TestSuite runs evals/cases: every case must pass, and the metrics must
// not regress against evals/baseline.json (the CI gate; -update rewrites
// the baseline).
func TestSuite(t *testing.T) {
	cases, err := LoadDir("cases")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 25 {
		t.Errorf("the suite has %d cases, want at least 25", len(cases))
	}
	rep := RunCases(context.Background(), cases, Options{Timeout: 2 * time.Minute, ServerCommand: serverCommand, ServerEnv: []string{serveEnv}, EchoMCP: echoMCP})
	if !rep.OK() {
		var b strings.Builder
		rep.WriteText(&b, false)
		t.Fatalf("the suite failed:\n%s", b.String())
	}
	if *update {
		if err := WriteBaseline("baseline.json", rep.Baseline()); err != nil {
			t.Fatal(err)
		}
		return
	}
	base, err := LoadBaseline("baseline.json")
	if err != nil {
		t.Fatalf("%v (run go test ./evals -run TestSuite -update)", err)
	}
	if reg := rep.Compare(base); len(reg) > 0 {
		t.Fatalf("regressions against baseline.json (if intended, rerun with -update):\n%s", strings.Join(reg, "\n"))
	}
}

// TestBrokenCasesFail proves the gate can fail: cases kept in testdata,
// outside the suite, must be reported failed with the right failure types.
func TestBrokenCasesFail(t *testing.T) {
	cases, err := LoadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	rep := RunCases(context.Background(), cases, Options{Timeout: 2 * time.Minute})
	if rep.OK() || rep.Failed != len(cases) || rep.SuccessRate != 0 {
		t.Fatalf("want every testdata case failed, got %d/%d passed", rep.Passed, rep.Total)
	}
	want := map[string][]string{
		"broken":      {FailWrongAnswer, FailWrongEdit, FailMissingContext},
		"timeout":     {FailTimeout},
		"wrong-class": {FailInvalidToolCall},
	}
	for _, res := range rep.Results {
		types := map[string]bool{}
		for _, f := range res.Failures {
			types[f.Type] = true
		}
		for _, typ := range want[res.Name] {
			if !types[typ] {
				t.Errorf("%s: no %q failure among %+v", res.Name, typ, res.Failures)
			}
		}
	}
	if res := find(rep, "broken"); res.Type != FailWrongAnswer {
		t.Errorf("broken: grouped under %q, want %q (its first failure)", res.Type, FailWrongAnswer)
	}
	// The case's own 300ms timeout ended it (how long that took is not
	// checked: the machine running this may be loaded).
	if res := find(rep, "timeout"); res.Type != FailTimeout {
		t.Errorf("timeout: %q after %.0fms", res.Type, res.DurationMS)
	}
	var b strings.Builder
	rep.WriteText(&b, false)
	for _, s := range []string{"0/3 passed", "failures by type:", "wrong answer (1): broken", "timeout (1): timeout", "invalid tool call (1): wrong-class"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the text report lacks %q:\n%s", s, b.String())
		}
	}
}

func find(rep *Report, name string) Result {
	for _, r := range rep.Results {
		if r.Name == name {
			return r
		}
	}
	return Result{}
}

// TestDeterministic runs one case 20 times: the same events and tokens
// every time.
func TestDeterministic(t *testing.T) {
	c, err := LoadFile("cases/edit-accept-undo.txtar")
	if err != nil {
		t.Fatal(err)
	}
	cases := make([]*Case, 20)
	for i := range cases {
		cases[i] = c
	}
	rep := RunCases(context.Background(), cases, Options{Parallel: 4})
	first := rep.Results[0]
	if first.Status != StatusPass || len(first.Transcript) == 0 || first.Tokens() == 0 || first.Steps == 0 {
		t.Fatalf("first run: %+v", first)
	}
	for i, r := range rep.Results[1:] {
		if r.Status != first.Status || r.Tokens() != first.Tokens() || r.InputTokens != first.InputTokens ||
			r.Steps != first.Steps || r.ModelCalls != first.ModelCalls {
			t.Errorf("run %d: %s, %d+%d tokens, %d steps; first: %s, %d+%d tokens, %d steps", i+2,
				r.Status, r.InputTokens, r.OutputTokens, r.Steps, first.Status, first.InputTokens, first.OutputTokens, first.Steps)
		}
		if !reflect.DeepEqual(r.Transcript, first.Transcript) {
			t.Errorf("run %d: events differ:\n%s\nfirst:\n%s", i+2, strings.Join(r.Transcript, "\n"), strings.Join(first.Transcript, "\n"))
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"actions:\n  - open: a\n", "no ask"},
		{"actions:\n  - ask: {file: a, question: q}\n    open: b\n", "exactly one action"},
		{"actions:\n  - frobnicate: {}\n  - ask: {file: a, question: q}\n", "unknown action"},
		{"actions:\n  - wait:\n  - ask: {file: a, question: q}\n", "exactly one action"},
		{"provider: gpt\nactions:\n  - ask: {file: a, question: q}\n", "provider"},
		{"approvals: [maybe]\nactions:\n  - ask: {file: a, question: q}\n", "approval answer"},
		{"expectt: {}\nactions:\n  - ask: {file: a, question: q}\n", "expectt"},
		{"timeout: soon\nactions:\n  - ask: {file: a, question: q}\n", "duration"},
		{"turns:\n  - toolCalls: [{arguments: {}}]\nactions:\n  - ask: {file: a, question: q}\n", "no name"},
		{"actions:\n  - ask: {file: a, question: q}\nexpect:\n  files: {a: 3}\n", "files[a]"},
	} {
		_, err := ParseCase("x", []byte(tc.header+"-- a --\na\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to mention %q", tc.header, err, tc.want)
		}
	}
	c, err := ParseCase("ok", []byte("actions:\n  - ask: {file: a, question: q}\n-- a --\nA\n-- expect:a --\nB\n"))
	if err != nil || c.Files["a"] != "A\n" || c.ExpectFiles["a"] != "B\n" || !c.Scripted() {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestPendingCasesParse(t *testing.T) {
	if m, _ := filepath.Glob("pending/*.txtar"); len(m) == 0 {
		return // nothing pending
	}
	cases, err := LoadDir("pending")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Pending == "" {
			t.Errorf("%s: a pending case says what it waits for (pending: ...)", c.Name)
		}
	}
}

func TestCompareBaseline(t *testing.T) {
	results := []Result{
		{Name: "a", Status: StatusPass, Scripted: true, InputTokens: 100},
		{Name: "b", Status: StatusPass, Scripted: true, InputTokens: 300},
	}
	rep := NewReport(results, time.Second)
	base := rep.Baseline()
	if reg := rep.Compare(base); len(reg) != 0 {
		t.Fatalf("a report regresses against its own baseline: %v", reg)
	}
	// 25% more tokens.
	worse := NewReport([]Result{results[0], {Name: "b", Status: StatusPass, Scripted: true, InputTokens: 400}}, time.Second)
	if reg := worse.Compare(base); len(reg) != 1 || !strings.Contains(reg[0], "tokens") {
		t.Errorf("token rise: %v", reg)
	}
	// 10% more: within the limit. A new case does not count.
	ok := NewReport([]Result{results[0], {Name: "b", Status: StatusPass, Scripted: true, InputTokens: 340},
		{Name: "new", Status: StatusPass, Scripted: true, InputTokens: 9000}}, time.Second)
	if reg := ok.Compare(base); len(reg) != 0 {
		t.Errorf("within the limit: %v", reg)
	}
	failing := NewReport([]Result{results[0], {Name: "b", Status: StatusFail, Type: FailWrongEdit, Scripted: true, InputTokens: 300}}, time.Second)
	if reg := failing.Compare(base); len(reg) != 1 || !strings.Contains(reg[0], "success rate") {
		t.Errorf("success drop: %v", reg)
	}
	if failing.ByType[FailWrongEdit][0] != "b" || failing.SuccessRate != 0.5 {
		t.Errorf("report: %+v", failing)
	}
	p := filepath.Join(t.TempDir(), "b.json")
	if err := WriteBaseline(p, base); err != nil {
		t.Fatal(err)
	}
	if b2, err := LoadBaseline(p); err != nil || !reflect.DeepEqual(b2, base) {
		t.Fatalf("round trip: %+v %v", b2, err)
	}
}

func TestStats(t *testing.T) {
	s := stats([]float64{5, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	if s.Avg != 10.5 || s.P95 != 19 {
		t.Errorf("%+v", s)
	}
	if s := stats(nil); s != (Stats{}) {
		t.Errorf("%+v", s)
	}
}

// TestKillAndResume runs a case that SIGKILLs the server (this test binary
// acting as `cairn serve`) mid-run and resumes it on a new one.
func TestKillAndResume(t *testing.T) {
	c, err := LoadFile("cases/resume-after-kill.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if r := RunCase(context.Background(), c, Options{}); r.Status != StatusFail || r.Type != FailBadCase {
		t.Errorf("without a server command: %s %+v, want a bad case", r.Status, r.Failures)
	}
	r := RunCase(context.Background(), c, Options{Timeout: 2 * time.Minute, ServerCommand: serverCommand, ServerEnv: []string{serveEnv}})
	if r.Status != StatusPass {
		t.Fatalf("%s: %+v\n%s", r.Status, r.Failures, strings.Join(r.Transcript, "\n"))
	}
	kinds := ""
	for _, l := range r.Transcript {
		if strings.Contains(l, `"kind":"interrupted"`) {
			kinds += "interrupted,"
		}
		if strings.Contains(l, `"kind":"finished"`) {
			kinds += "finished"
		}
	}
	if kinds != "interrupted,finished" {
		t.Errorf("transcript:\n%s", strings.Join(r.Transcript, "\n"))
	}
}
