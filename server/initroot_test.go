package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/server"
)

// TestInitializeRoot: the workspace root is the first of the
// workspaceFolders a client sends, whatever rootUri says; a client that
// sends only the deprecated rootUri or rootPath still gets its root. The
// root chosen shows as the state directory the server creates for it.
func TestInitializeRoot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params func(a, b string) string // a and b are two workspace roots
		want   string                   // "a", "b" or "" (refused)
	}{
		{"workspaceFolders only", func(a, b string) string {
			return fmt.Sprintf(`"workspaceFolders":[{"uri":"file://%s","name":"a"},{"uri":"file://%s","name":"b"}]`, a, b)
		}, "a"},
		{"workspaceFolders over rootUri", func(a, b string) string {
			return fmt.Sprintf(`"rootUri":"file://%s","workspaceFolders":[{"uri":"file://%s","name":"a"}]`, b, a)
		}, "a"},
		{"rootUri only", func(a, b string) string { return fmt.Sprintf(`"rootUri":"file://%s"`, b) }, "b"},
		{"rootPath only", func(a, b string) string { return fmt.Sprintf(`"rootPath":%q`, b) }, "b"},
		{"empty workspaceFolders, rootUri", func(a, b string) string {
			return fmt.Sprintf(`"workspaceFolders":[],"rootUri":"file://%s"`, b)
		}, "b"},
		{"no root", func(a, b string) string { return `"workspaceFolders":null` }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := filepath.EvalSymlinks(t.TempDir())
			b, _ := filepath.EvalSymlinks(t.TempDir())
			cache := t.TempDir()
			env := func(k string) string {
				if k == "XDG_CACHE_HOME" {
					return cache
				}
				return ""
			}
			serverEnd, clientEnd := net.Pipe()
			served := make(chan struct{})
			go func() {
				defer close(served)
				server.Serve(context.Background(), serverEnd, serverEnd, server.Options{Getenv: env})
			}()
			// The server's index writes under cache until Serve returns;
			// the temporary directories are removed only after that.
			defer func() {
				clientEnd.Close()
				<-served
			}()
			rc := &rawConn{t: t, c: clientEnd, r: bufio.NewReader(clientEnd)}
			rc.send(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{},` + tc.params(a, b) + `}}`))
			m := rc.next()
			if tc.want == "" {
				if m["error"] == nil {
					t.Fatalf("initialize without a root was accepted: %v", m)
				}
				return
			}
			if m["error"] != nil {
				t.Fatalf("initialize: %v", m)
			}
			for root, want := range map[string]bool{a: tc.want == "a", b: tc.want == "b"} {
				dir, err := server.StateDir(root, env)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(dir); (err == nil) != want {
					t.Errorf("state dir of %s exists: %v, want %v", root, err == nil, want)
				}
			}
		})
	}
}
