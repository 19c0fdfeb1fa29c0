package acp

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// copyState copies a state directory (its journals, threads and blobs; not
// the code indexes, which are rebuilt) as a crash would leave it.
func copyState(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() && (d.Name() == "search" || d.Name() == "repomap") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatalf("copying the state: %v", err)
	}
}

// A session whose model was chosen keeps it across a restart: session/load
// shows it, /resume of the interrupted run and the next prompt ask it, not
// the configured model.
func TestResumeAndLoadKeepTheSessionModel(t *testing.T) {
	models := []string{"gpt-a", "gpt-b"}
	// The first process's model call never answers: the run is
	// interrupted by the "crash" (the copy of its state taken meanwhile).
	asked := make(chan string, 4)
	release := make(chan struct{})
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			(&openAIServer{}).handler(models).ServeHTTP(w, r)
			return
		}
		asked <- r.URL.Path
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stall.Close()
	defer close(release)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stateDir := t.TempDir()
	conn, _, _ := openAIHarnessAt(t, stall, "gpt-a", root, stateDir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: "gpt-b"}); err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	go func() {
		_, _ = conn.Prompt(pctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}})
	}()
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the first run never asked the model")
	}
	crashed := t.TempDir()
	copyState(t, stateDir, crashed)

	o := &openAIServer{answers: []string{sseAnswer("resumed", "stop"), sseAnswer("again", "stop")}}
	srv := httptest.NewServer(o.handler(models))
	defer srv.Close()
	conn2, client2, _ := openAIHarnessAt(t, srv, "gpt-a", root, crashed)
	loaded, err := conn2.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if m := findOption(loaded.ConfigOptions, configModel); m == nil || m.CurrentValue != "gpt-b" {
		t.Errorf("the loaded session's model option = %+v, want gpt-b", m)
	}
	if loaded.Models == nil || loaded.Models.CurrentModelId != "gpt-b" {
		t.Errorf("the loaded session's models = %+v", loaded.Models)
	}
	for _, text := range []string{"/resume", "and now?"} {
		if _, err := conn2.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}}); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	if got := o.models(); fmt.Sprint(got) != "[gpt-b gpt-b]" {
		t.Errorf("models asked after the restart = %v, want [gpt-b gpt-b]", got)
	}
	client2.mu.Lock()
	text := agentText(client2.updates)
	client2.mu.Unlock()
	if !strings.Contains(text, "resumed") || !strings.Contains(text, "again") {
		t.Errorf("answers after the restart: %q", text)
	}
}
