package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
)

// copyTree copies the regular files under src into dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// openAIRecorder is an OpenAI-compatible Chat Completions endpoint that
// answers every request with one streamed sentence and keeps the requests'
// message texts.
type openAIRecorder struct {
	mu   sync.Mutex
	reqs [][]string // per request, the contents of its messages
}

func (o *openAIRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []struct {
			Content any `json:"content"`
		} `json:"messages"`
	}
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	var texts []string
	for _, m := range body.Messages {
		texts = append(texts, fmt.Sprint(m.Content))
	}
	o.mu.Lock()
	o.reqs = append(o.reqs, texts)
	o.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\n\n", `{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}`)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (o *openAIRecorder) first(t *testing.T) string {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.reqs) == 0 {
		t.Fatal("the model got no request")
	}
	return strings.Join(o.reqs[0], "\n")
}

// A cold `cairn ask` on a fresh copy of code nobody here wrote (the Go
// tree's encoding packages) waits for the code index: its first model
// request holds the repository map and search hits, and stderr says once
// that the workspace was being indexed.
func TestAskColdWorkspaceFirstRequestHasMapAndSearch(t *testing.T) {
	root := t.TempDir()
	copyTree(t, filepath.Join(testenv.GOROOT(t), "src", "encoding"), root)
	rec := &openAIRecorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	t.Setenv("CAIRN_PROVIDER", "openai")
	t.Setenv("CAIRN_MODEL", "test-model")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("CAIRN_STATE_DIR", t.TempDir()) // fresh: nothing indexed
	out, errOut, code := runCLI(t, "ask", "--root", root, "--file", "json/stream.go", "--range", "40-60",
		"How does the Decoder find the end of one JSON value before decoding it with decodeState?")
	if code != 0 {
		t.Fatalf("ask failed (exit %d): %s\n%s", code, errOut, out)
	}
	first := rec.first(t)
	for _, want := range []string{"## Repository map", "Search hit for"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first model request lacks %q; stderr:\n%s", want, errOut)
		}
	}
	if strings.Contains(first, "not ready") {
		t.Errorf("the CLI waits as long as it takes, yet the prompt says a source was not ready")
	}
	if n := strings.Count(errOut, "· indexing the workspace"); n != 1 {
		t.Errorf("stderr has %d indexing lines, want one:\n%s", n, errOut)
	}
}
