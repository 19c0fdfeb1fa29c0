package repomap

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWatch(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, smallRepo)
	m := newMap(t, root, Options{CacheDir: t.TempDir()})
	build(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan []string, 16)
	done := make(chan error, 1)
	go func() {
		done <- m.Watch(ctx, WatchOptions{Debounce: 20 * time.Millisecond, OnChange: func(r []string) { changed <- r }})
	}()
	defer func() {
		cancel()
		<-done
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.After(time.Minute)
		for !cond() {
			select {
			case <-changed:
			case <-time.After(20 * time.Millisecond):
			case <-deadline:
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	time.Sleep(50 * time.Millisecond) // let the watcher register
	writeFiles(t, root, map[string]string{"util/new.go": "package util\nfunc WatchedNew() {}\n"})
	waitFor("new file", func() bool { return len(m.DefinitionsOf([]string{"WatchedNew"})) == 1 })

	writeFiles(t, root, map[string]string{"fresh/dir/x.py": "def watched_in_new_dir():\n    pass\n"})
	waitFor("file in new directory", func() bool { return len(m.DefinitionsOf([]string{"watched_in_new_dir"})) == 1 })

	if err := os.Remove(filepath.Join(root, "util/new.go")); err != nil {
		t.Fatal(err)
	}
	waitFor("deletion", func() bool { return len(m.DefinitionsOf([]string{"WatchedNew"})) == 0 })

	// A symlink to a file outside the workspace is not followed.
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.go": "package s\nfunc OutsideSecret() {}\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	m.Refresh("link.go")
	if len(m.DefinitionsOf([]string{"OutsideSecret"})) != 0 {
		t.Error("Refresh followed a symlink out of the workspace")
	}

	writeFiles(t, root, map[string]string{"app/main.go": "package app\nfunc Rewritten() {}\n"})
	waitFor("rewrite", func() bool {
		return len(m.DefinitionsOf([]string{"Rewritten"})) == 1 && len(m.DefinitionsOf([]string{"helperForRun"})) == 0
	})
}
