package tools

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/workspace"
)

// hugeFile makes a sparse 1 GB file whose first 20,000 lines are text.
func hugeFile(t testing.TB, env *Env, rel string) {
	t.Helper()
	f, err := os.Create(env.WS.Abs(rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(f, "line %d\n", i)
	}
	if err := f.Truncate(1 << 30); err != nil {
		testenv.Need(t, "no sparse files here: %v", err)
	}
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadFileStreamsHugeFile: three lines of a 1 GB file cost a few
// kilobytes, not the file; reading on without a range stops at the output
// limit and says how to go on; whole-file readers refuse it, naming the limit.
func TestReadFileStreamsHugeFile(t *testing.T) {
	env := testEnv(t, nil)
	hugeFile(t, env, "huge.txt")
	var r Result
	n := allocated(func() { r = call(t, env, ReadFile(), `{"path":"huge.txt","startLine":2,"endLine":4}`) })
	if r.IsError || r.Content != "    2\tline 2\n    3\tline 3\n    4\tline 4\n" {
		t.Fatalf("lines 2-4: %+v", r)
	}
	if n > 8<<20 {
		t.Errorf("reading 3 lines of a 1 GB file allocated %d MB", n>>20)
	}
	n = allocated(func() { r = call(t, env, ReadFile(), `{"path":"huge.txt","startLine":15000,"endLine":15001}`) })
	if r.IsError || !strings.Contains(r.Content, "15000\tline 15000\n") || n > 8<<20 {
		t.Errorf("lines 15000-15001 (%d MB allocated): %+v", n>>20, r)
	}
	r = call(t, env, ReadFile(), `{"path":"huge.txt"}`)
	if r.IsError || !strings.Contains(r.Content, "returns at most 60 KB per call; continue with startLine") || len(r.Content) > 64<<10 {
		t.Errorf("whole huge file: error=%v, %d bytes, tail %q", r.IsError, len(r.Content), r.Content[max(0, len(r.Content)-200):])
	}
	r = call(t, env, EditFile(), `{"path":"huge.txt","oldText":"line 1\n","newText":"x\n"}`)
	if !r.IsError || !strings.Contains(r.Content, "1.0 GB") || !strings.Contains(r.Content, "up to 16 MB") {
		t.Errorf("edit of a 1 GB file: %+v", r)
	}
}

func TestReadFileLongLinesAndRanges(t *testing.T) {
	long := strings.Repeat("x", 20000)
	env := testEnv(t, map[string]string{"min.js": "a\n" + long + "\nb", "s.txt": "x\ny\n"})
	r := call(t, env, ReadFile(), `{"path":"min.js"}`)
	if r.IsError || !strings.Contains(r.Content, "    3\tb\n") || !strings.Contains(r.Content, "longer than 8 KB were cut") || len(r.Content) > 9<<10 {
		t.Errorf("long line: %d bytes %q", len(r.Content), r.Content[len(r.Content)-120:])
	}
	if r := call(t, env, ReadFile(), `{"path":"s.txt","startLine":3}`); !r.IsError || !strings.Contains(r.Content, "has 2 lines") {
		t.Errorf("past the end: %+v", r)
	}
	if r := call(t, env, ReadFile(), `{"path":"s.txt","startLine":2,"endLine":1}`); !r.IsError {
		t.Errorf("reversed range: %+v", r)
	}
	if r := call(t, env, ReadFile(), `{"path":"s.txt","startLine":2,"endLine":9}`); r.IsError || r.Content != "    2\ty\n" {
		t.Errorf("range past the end: %+v", r)
	}
}

// BenchmarkReadFileHugeRange reads 3 lines of a sparse 1 GB file: bytes
// allocated per op are the figure (before streaming, the whole file).
func BenchmarkReadFileHugeRange(b *testing.B) {
	root := b.TempDir()
	ws, err := workspace.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	env := &Env{WS: ws, Drafts: workspace.NewDrafts(ws)}
	hugeFile(b, env, "huge.txt")
	tl, _ := NewBuiltinRegistry(root).Get("read_file")
	in, _ := tl.Validate(`{"path":"huge.txt","startLine":2,"endLine":4}`)
	b.ReportAllocs()
	for b.Loop() {
		if r, err := tl.Invoke(b.Context(), env, in); err != nil || r.IsError {
			b.Fatal(err, r.Content)
		}
	}
}

// TestReadFileMasksKeyBodiesInAnyWindow (issue 24 finding 8, a regression
// of the streaming reader): a window that starts after a private key's
// BEGIN line, ends before its END line, or cuts its body in the middle
// shows no line of the body; the lines around the key are shown.
func TestReadFileMasksKeyBodiesInAnyWindow(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	pk8, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	key8 := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk8}))
	env := testEnv(t, nil)
	files := map[string]string{
		"deploy.pem":    key,                                                                                     // the key from line 1
		"config/ssh.go": "package config\n\nconst deployKey = `" + key8 + "`\n\nfunc Port() int { return 22 }\n", // inside code
	}
	for rel, text := range files {
		if err := os.MkdirAll(filepath.Dir(env.WS.Abs(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(env.WS.Abs(rel), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var body []string
	for _, k := range []string{key, key8} {
		for _, l := range strings.Split(k, "\n") {
			if l != "" && !strings.HasPrefix(l, "-----") {
				body = append(body, l)
			}
		}
	}
	for rel, text := range files {
		n := strings.Count(text, "\n") + 1
		mid := n / 2
		windows := [][2]int{{0, 0}, {2, 0}, {2, 3}, {2, 5}, {3, mid}, {mid, mid}, {mid, mid + 2}, {mid, 0}, {n - 4, 0}, {n - 3, n - 2}}
		for _, w := range windows {
			in := fmt.Sprintf(`{"path":%q,"startLine":%d`, rel, max(w[0], 1))
			if w[1] > 0 {
				in += fmt.Sprintf(`,"endLine":%d`, w[1])
			}
			r := call(t, env, ReadFile(), in+"}")
			if r.IsError {
				t.Errorf("%s lines %v: %s", rel, w, r.Content)
				continue
			}
			for _, l := range body {
				if strings.Contains(r.Content, l) {
					t.Errorf("%s lines %v shows a line of the key's body %.20s…:\n%s", rel, w, l, r.Content)
					break
				}
			}
		}
	}
	r := call(t, env, ReadFile(), `{"path":"config/ssh.go"}`)
	if !strings.Contains(r.Content, "func Port() int { return 22 }") || !strings.Contains(r.Content, "package config") ||
		!strings.Contains(r.Content, "[REDACTED:private-key]") {
		t.Errorf("the code around the key is lost or the key not marked:\n%s", r.Content)
	}
}
