package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/workspace"
)

// inotifyInstances counts this process's inotify file descriptors.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("listing /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, "inotify") {
			n++
		}
	}
	return n
}

// TestSessionsShareOneWatcher: 150 session/new on one cwd use the one
// watcher of that workspace (one inotify instance), not one each.
func TestSessionsShareOneWatcher(t *testing.T) {
	before := inotifyInstances(t)
	h := newHarness(t, map[string]string{"a.go": "package a\n", "sub/b.go": "package sub\n"}, "turns:\n  - text: ok\n", harnessConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range 150 {
		if _, err := h.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: h.root, McpServers: []sdk.McpServer{}}); err != nil {
			t.Fatalf("session/new %d: %v", i, err)
		}
	}
	h.mustPrompt(sdk.TextBlock("hello"))
	if got := inotifyInstances(t) - before; got > 1 {
		t.Fatalf("150 sessions on one workspace hold %d inotify instances, want at most 1", got)
	}
}

// TestManyWorkspacesCapInotify: session/new on 150 different folders does
// not take 150 inotify instances (the user's limit is often 128, shared
// with the editor): past the cap, workspaces are followed by the periodic
// reconcile, and every session still works.
func TestManyWorkspacesCapInotify(t *testing.T) {
	before := inotifyInstances(t)
	h := newHarness(t, map[string]string{"a.go": "package a\n"}, "turns:\n  - text: ok\n", harnessConfig{perRootState: true})
	parent, _ := filepath.EvalSymlinks(t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var last sdk.SessionId
	for i := range 150 {
		dir := filepath.Join(parent, "ws", strings.Repeat("d", 1+i%3)+string(rune('a'+i%26))+strings.Repeat("x", i/26))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		resp, err := h.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
		if err != nil {
			t.Fatalf("session/new %d: %v", i, err)
		}
		last = resp.SessionId
	}
	h.session = last
	h.mustPrompt(sdk.TextBlock("hello"))
	if got := inotifyInstances(t) - before; got > workspace.MaxFSWatchers {
		t.Fatalf("151 workspaces hold %d inotify instances, want at most %d", got, workspace.MaxFSWatchers)
	}
}

// TestLoadSessionValidatesBeforeOpening: session/load with an invalid or
// unknown session id is refused before the cwd is opened: no state
// directory is created for it and nothing watches it (nor for a
// session/list of a folder without sessions).
func TestLoadSessionValidatesBeforeOpening(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"}, "turns:\n  - text: ok\n", harnessConfig{perRootState: true})
	other, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(other, "b.go"), []byte("package b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The session's own workspace is watched (its watcher starts in the
	// background).
	deadline := time.Now().Add(30 * time.Second)
	for inotifyInstances(t) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the session's workspace is not watched")
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := inotifyInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range []string{"../../etc/passwd", "", "thread-0000000000000000", strings.Repeat("a", 200), string(h.session) + "x"} {
		if _, err := h.conn.LoadSession(ctx, sdk.LoadSessionRequest{Cwd: other, SessionId: sdk.SessionId(id), McpServers: []sdk.McpServer{}}); err == nil {
			t.Errorf("session/load %q on a folder without sessions succeeded", id)
		}
		if _, err := h.conn.ResumeSession(ctx, sdk.ResumeSessionRequest{Cwd: other, SessionId: sdk.SessionId(id), McpServers: []sdk.McpServer{}}); err == nil {
			t.Errorf("session/resume %q on a folder without sessions succeeded", id)
		}
	}
	list, err := h.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &other})
	if err != nil || len(list.Sessions) != 0 {
		t.Errorf("session/list on a folder without sessions: %+v, %v", list, err)
	}
	if _, err := os.Stat(rootStateDir(h.stateDir, other)); !os.IsNotExist(err) {
		t.Errorf("a refused session/load (or a session/list) created the state directory of its cwd (%v)", err)
	}
	if got := inotifyInstances(t); got > before {
		t.Errorf("a refused session/load started watching its cwd: %d inotify instances, were %d", got, before)
	}
	// The session's own workspace still loads it.
	if _, err := h.conn.LoadSession(ctx, sdk.LoadSessionRequest{Cwd: h.root, SessionId: h.session, McpServers: []sdk.McpServer{}}); err != nil {
		t.Errorf("session/load of a live session: %v", err)
	}
}
