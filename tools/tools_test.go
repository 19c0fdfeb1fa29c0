package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/workspace"
)

func testEnv(t *testing.T, files map[string]string) *Env {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(c), 0o644)
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{WS: ws, Drafts: workspace.NewDrafts(ws)}
}

func call(t *testing.T, env *Env, tool *Tool, args string) Result {
	t.Helper()
	r := NewBuiltinRegistry(env.WS.Root())
	tl, _ := r.Get(tool.Name)
	in, err := tl.Validate(args)
	if err != nil {
		return Result{Content: err.Error(), IsError: true}
	}
	res, err := tl.Invoke(context.Background(), env, in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A call that fails its schema is told every violation and the expected
// input at once: read_file {"file": ...} lacks "path" as much as it has an
// unknown "file".
func TestSchemaErrorsListEveryViolation(t *testing.T) {
	r := NewBuiltinRegistry(t.TempDir())
	tl, _ := r.Get("read_file")
	_, err := tl.Validate(`{"file":"greet/greet.go","startLine":0,"endLine":"5"}`)
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	for _, want := range []string{
		`missing required property "path"`,
		`unexpected property "file" (the properties are "endLine", "path", "startLine")`,
		`property "startLine": minimum: `,
		`property "endLine": `,
		`Expected input (JSON Schema): {"type":"object","properties":{"path":`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n- "); n != 4 {
		t.Errorf("%d violations listed, want 4:\n%s", n, msg)
	}
	if strings.Contains(msg, "validating ") {
		t.Errorf("the validator's schema locations leaked into the message:\n%s", msg)
	}
	// Through the pipeline, the model gets it back as data.
	env := testEnv(t, map[string]string{"a.go": "package a\n"})
	if res := call(t, env, ReadFile(), `{"file":"a.go"}`); !res.IsError || !strings.Contains(res.Content, `missing required property "path"`) {
		t.Errorf("result = %+v", res)
	}
}

func TestSchemasRejectBadInput(t *testing.T) {
	r := NewBuiltinRegistry(t.TempDir())
	cases := map[string][]string{
		"read_file":  {`{}`, `{"path":1}`, `{"path":"a","extra":true}`, `{"path":"a","startLine":0}`, `[1]`, `nope`},
		"edit_file":  {`{"path":"a","oldText":"x"}`, `{"path":"a","oldText":"x","newText":3}`},
		"list_files": {`{"glob":[]}`},
	}
	for name, inputs := range cases {
		tl, ok := r.Get(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		for _, in := range inputs {
			if _, err := tl.Validate(in); err == nil {
				t.Errorf("%s accepted %s", name, in)
			}
		}
	}
	tl, _ := r.Get("read_file")
	if _, err := tl.Validate(`{"path":"a.go","startLine":2}`); err != nil {
		t.Errorf("valid input refused: %v", err)
	}
	for _, s := range r.Specs() {
		var v map[string]any
		if err := json.Unmarshal(s.Schema, &v); err != nil || v["type"] != "object" || s.Description == "" {
			t.Errorf("spec %s is not model-ready", s.Name)
		}
	}
}

func TestEditFileProposesAndReadSeesDraft(t *testing.T) {
	env := testEnv(t, map[string]string{"a.go": "one\ntwo\ntwo\n"})
	if r := call(t, env, EditFile(), `{"path":"a.go","oldText":"two","newText":"2"}`); !r.IsError || !strings.Contains(r.Content, "2 times") {
		t.Errorf("ambiguous oldText: %+v", r)
	}
	if r := call(t, env, EditFile(), `{"path":"a.go","oldText":"three","newText":"3"}`); !r.IsError {
		t.Errorf("missing oldText: %+v", r)
	}
	r := call(t, env, EditFile(), `{"path":"a.go","oldText":"one\n","newText":"1\n"}`)
	if r.IsError || r.Change == nil || r.Change.After != "1\ntwo\ntwo\n" {
		t.Fatalf("edit: %+v", r)
	}
	disk, _ := os.ReadFile(env.WS.Abs("a.go"))
	if string(disk) != "one\ntwo\ntwo\n" {
		t.Fatal("edit_file wrote to disk")
	}
	if r := call(t, env, ReadFile(), `{"path":"a.go","startLine":1,"endLine":1}`); !strings.Contains(r.Content, "1\t1") {
		t.Errorf("read after edit: %q", r.Content)
	}
	if r := call(t, env, EditFile(), `{"path":"new/b.go","oldText":"","newText":"package b\n"}`); r.IsError || !r.Change.Created {
		t.Errorf("create: %+v", r)
	}
	if r := call(t, env, ListFiles(), `{"glob":"**/*.go"}`); !strings.Contains(r.Content, "new/b.go") || !strings.Contains(r.Content, "a.go") {
		t.Errorf("list sees drafts: %q", r.Content)
	}
	if r := call(t, env, EditFile(), `{"path":"a.go","oldText":"","newText":"x"}`); !r.IsError {
		t.Errorf("empty oldText on an existing file must be refused: %+v", r)
	}
}

func TestReadFileEdges(t *testing.T) {
	env := testEnv(t, map[string]string{"bin.dat": "a\x00b", "s.txt": "x\ny\n"})
	if r := call(t, env, ReadFile(), `{"path":"bin.dat"}`); !r.IsError || !strings.Contains(r.Content, "binary") {
		t.Errorf("binary: %+v", r)
	}
	if r := call(t, env, ReadFile(), `{"path":"s.txt","startLine":9}`); !r.IsError {
		t.Errorf("past the end: %+v", r)
	}
	if r := call(t, env, ReadFile(), `{"path":"nope.txt"}`); !r.IsError {
		t.Errorf("missing file: %+v", r)
	}
}

func TestCapOutputKeepsHeadAndTail(t *testing.T) {
	s := strings.Repeat("h", 100) + strings.Repeat("m", 1000) + strings.Repeat("t", 100)
	out, cut := CapOutput(s, 300)
	if !cut || !strings.HasPrefix(out, "hhh") || !strings.HasSuffix(out, "ttt") || !strings.Contains(out, "bytes cut") {
		t.Errorf("CapOutput: %q", out)
	}
	if len(out) > 400 {
		t.Errorf("capped output is %d bytes", len(out))
	}
}

func TestPolicyAndAuditChain(t *testing.T) {
	dir := t.TempDir()
	audit, err := OpenAuditLog(filepath.Join(dir, "audit.jsonl"), func(s string) string { return strings.ReplaceAll(s, "hunter2", "[REDACTED]") })
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(DefaultPolicy(), false, nil, audit)
	ctx := context.Background()
	d, _ := g.Decide(ctx, ApprovalRequest{Tool: "read_file", Risk: RiskRead}, 1, `{"path":"hunter2"}`)
	if d != DecisionPolicyAllow {
		t.Errorf("read: %s", d)
	}
	d, _ = g.Decide(ctx, ApprovalRequest{Tool: "run_command", Risk: RiskDestructive, Detail: "rm -rf /"}, 1, "")
	if d != DecisionPolicyDeny {
		t.Errorf("destructive: %s", d)
	}
	d, _ = g.Decide(ctx, ApprovalRequest{Tool: "run_command", Risk: RiskNetwork, Detail: "curl x"}, 1, "")
	if d != DecisionPolicyDeny { // non-interactive: ask becomes deny
		t.Errorf("network in policy mode: %s", d)
	}
	recs, err := ReadAudit(filepath.Join(dir, "audit.jsonl"))
	if err != nil || len(recs) != 3 || strings.Contains(recs[0].Input, "hunter2") {
		t.Fatalf("audit: %+v %v", recs, err)
	}
	if n, err := VerifyAudit(filepath.Join(dir, "audit.jsonl")); n != 0 || err != nil {
		t.Fatalf("verify intact chain: %d %v", n, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(filepath.Join(dir, "audit.jsonl"), []byte(lines[0]+lines[2]), 0o600)
	if n, _ := VerifyAudit(filepath.Join(dir, "audit.jsonl")); n != 2 {
		t.Errorf("a removed record should break the chain at line 2, got %d", n)
	}
}

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		glob, path string
		want       bool
	}{
		{"*.go", "a/b/c.go", true}, {"*.go", "c.txt", false}, {"a/**/*.go", "a/x/y/z.go", true},
		{"a/**/*.go", "a/z.go", true}, {"a/*.go", "a/x/z.go", false}, {"**", "anything/at/all", true},
	}
	for _, c := range cases {
		if got := matchGlob(c.glob, c.path); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v", c.glob, c.path, got)
		}
	}
}

func TestCairnIgnoredFilesAreRefused(t *testing.T) {
	env := testEnv(t, map[string]string{".cairnignore": "secrets/\n", "secrets/k.txt": "x", ".gitignore": "build/\n", "build/out.txt": "y"})
	if r := call(t, env, ReadFile(), `{"path":"secrets/k.txt"}`); !r.IsError || !strings.Contains(r.Content, ".cairnignore") {
		t.Errorf("read of a .cairnignore'd file: %+v", r)
	}
	if r := call(t, env, EditFile(), `{"path":"secrets/k.txt","oldText":"x","newText":"z"}`); !r.IsError {
		t.Errorf("edit of a .cairnignore'd file: %+v", r)
	}
	if r := call(t, env, ReadFile(), `{"path":"build/out.txt"}`); r.IsError {
		t.Errorf(".gitignore'd files stay readable: %+v", r)
	}
}
