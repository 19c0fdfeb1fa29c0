package server_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/protocol"
)

// Secrets of the at-rest tests: a GitHub token in a file, a .env password,
// and a second token used only as a file name.
const (
	restToken    = "ghp_R8bXq2Lz7Kd4Vn9Wm3Tc6Yh1Jp5Fs0Ga8Ue2"
	restPassword = "hunter2-very-secret-xyz"
	nameToken    = "ghp_N4mEtOkEn7Qz2Lx9Wv3Bc8Rt5Yp1Ks6Hd0Ja"
)

// pemKey returns a fresh RSA private key in PEM (PKCS#1) form.
func pemKey(t testing.TB) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// keyBodyLines returns the base64 lines of a PEM block (no BEGIN/END).
func keyBodyLines(key string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(key), "\n") {
		if !strings.HasPrefix(l, "-----") && len(l) >= 16 {
			out = append(out, l)
		}
	}
	return out
}

// grepState returns, for each needle, the files under dir holding it
// (byte search of every file: journal, blobs, threads, traces, audit log,
// bleve segments, caches).
func grepState(t testing.TB, dir string, needles ...string) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	files := 0
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				rel, _ := filepath.Rel(dir, p)
				found[n] = append(found[n], rel)
			}
		}
		return nil
	})
	if files == 0 {
		t.Errorf("no state under %s: nothing was checked", dir)
	}
	return found
}

// TestNothingSecretAtRest (issue 24 finding 8): the model reads a .env
// password and a GitHub token, then writes both in its answer, in an
// edit_file proposal and in a run_command input; a file named after another
// token and a private key nobody touches sit in the workspace. After the
// run, the index build and the server's shutdown, no file of the state
// directory (threads, journal, blobs, traces, audit log, search and map
// indexes) holds any of them.
func TestNothingSecretAtRest(t *testing.T) {
	if len(restToken) != 40 || len(nameToken) != 40 {
		t.Fatal("the test tokens must have GitHub's shape (ghp_ + 36)")
	}
	key := pemKey(t)
	ws := `
-- .env --
DB_PASSWORD=` + restPassword + `
-- notes/deploy.md --
# Deploy

Use the token ` + restToken + ` for the release job.
-- keys/deploy.pem --
` + key + `
-- ` + nameToken + `.txt --
a file whose name is a token
-- tok/` + nameToken + `.go --
package tok

// Named is in a Go file named after a token.
func Named() int { return 1 }
-- greet/greet.go --
package greet

// Greet returns a greeting.
func Greet(name string) string {
	return "Hello, " + name
}
`
	var turns strings.Builder
	turns.WriteString(`
turns:
  - toolCalls:
      - name: read_file
        arguments: {path: .env}
      - name: read_file
        arguments: {path: notes/deploy.md}
      - name: list_files
        arguments: {}
  - toolCalls:
      - name: edit_file
        arguments: {path: greet/greet.go, oldText: "Hello", newText: "Hello ` + restToken + ` ` + restPassword + `"}
      - name: run_command
        arguments: {command: "echo ` + restToken + ` ` + restPassword + ` > greet/out.txt"}
  - text: "The token is ` + restToken + ` and the password is ` + restPassword + `."
`)
	for range 400 {
		turns.WriteString("  - text: \"ok\"\n")
	}
	state := t.TempDir()
	t.Cleanup(func() { // after the server has shut down (cleanups run last-in first-out)
		needles := append([]string{restToken, restPassword, nameToken}, keyBodyLines(key)...)
		for n, files := range grepState(t, state, needles...) {
			t.Errorf("%.24s… is stored at rest in %s", n, strings.Join(files, ", "))
		}
	})
	e := newEnv(t, ws, withScript(turns.String()), withState(state))
	run := e.ask("greet/greet.go", 4, 6, "what is the deploy token?")
	evs := e.waitRun(run)
	if l := last(evs); l.Kind != protocol.EventFinished {
		t.Fatalf("the run ended %+v (%s)", l, kinds(evs))
	}
	if got, _ := os.ReadFile(filepath.Join(e.root, "greet", "out.txt")); !strings.Contains(string(got), restToken) {
		t.Fatalf("the command did not run: greet/out.txt = %q; the model got %+v", got, e.toolMessages(3))
	}
	// Wait for the index (a question's report says when it is still being
	// built), so its files are part of what is checked.
	deadline := time.Now().Add(time.Minute)
	for {
		r := e.ask("greet/greet.go", 0, 0, "hello")
		if l := last(e.waitRun(r)); l.Kind != protocol.EventFinished {
			t.Fatalf("a later run ended %+v", l)
		}
		report, err := e.ed.ContextReport(e.ctx, r)
		if err != nil {
			t.Fatalf("context report: %v", err)
		}
		if !strings.Contains(report, "still being built") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index was not ready within a minute: %s", report)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSnapshotSkipsSecretFilesUntilChanged (issue 24 finding 8): the
// snapshot taken before a command that may write keeps file contents in
// memory. A command that leaves .env and a private key alone stores
// neither; one that changes .env stores exactly its previous content (for
// rewind), says so in its result, and a rewind puts it back.
func TestSnapshotSkipsSecretFilesUntilChanged(t *testing.T) {
	key := pemKey(t)
	ws := `
-- .env --
DB_PASSWORD=` + restPassword + `
-- keys/deploy.pem --
` + key + `
-- greet/greet.go --
package greet

func Greet(name string) string { return "Hello, " + name }
`
	script := `
turns:
  - toolCalls:
      - name: run_command
        arguments: {command: "sed -i 's/Hello/Bye/' greet/greet.go"}
  - toolCalls:
      - name: run_command
        arguments: {command: "echo EXTRA=1 >> .env"}
  - text: done
`
	state := t.TempDir()
	e := newEnv(t, ws, withScript(script), withState(state))
	envBefore := e.read(".env")
	run := e.ask("greet/greet.go", 0, 0, "change things")
	if l := last(e.waitRun(run)); l.Kind != protocol.EventFinished {
		t.Fatalf("the run ended %+v", l)
	}
	if !strings.Contains(e.read(".env"), "EXTRA=1") || !strings.Contains(e.read("greet/greet.go"), "Bye") {
		t.Fatal("the commands did not run")
	}
	tm := e.toolMessages(3)
	if strings.Contains(tm[0].Content, "holds secrets") {
		t.Errorf("the first command touched no secret file, yet: %q", tm[0].Content)
	}
	if !strings.Contains(tm[1].Content, ".env holds secrets and was changed by the command") {
		t.Errorf("the second command's result does not say it changed a secret file: %q", tm[1].Content)
	}
	// Exactly one blob holds the password: .env's previous content.
	found := grepState(t, state, restPassword)
	if files := found[restPassword]; len(files) != 1 || !strings.HasPrefix(files[0], "blobs"+string(filepath.Separator)) {
		t.Errorf("the password is stored in %q; want exactly .env's previous content as one blob", files)
	} else if b, _ := os.ReadFile(filepath.Join(state, files[0])); string(b) != envBefore {
		t.Errorf("the blob holding the password is not .env's previous content: %q", b)
	}
	for n, files := range grepState(t, state, keyBodyLines(key)...) {
		t.Errorf("a line of the untouched key (%.16s…) is stored in %s", n, strings.Join(files, ", "))
	}
	var rw protocol.RewindResult
	if err := e.ed.Execute(e.ctx, protocol.CommandRewind, protocol.RewindParams{RunID: run, Step: 1, RestoreFiles: true}, &rw); err != nil {
		t.Fatal(err)
	}
	if got := e.read(".env"); got != envBefore {
		t.Errorf("the rewind did not restore .env: %q (%+v)", got, rw)
	}
}

// TestKeyWindowsNeverReachTheModel (issue 24 finding 8, the regression):
// a private key read through a line window that leaves out its BEGIN line
// (read_file with startLine 2, a single middle line, the tail) or printed
// in part by a command (`sed -n 2,6p`, `tail -n 3`) shows the model no
// line of its body.
func TestKeyWindowsNeverReachTheModel(t *testing.T) {
	key := pemKey(t)
	n := strings.Count(key, "\n")
	ws := `
-- keys/deploy.pem --
` + key + `
-- greet/greet.go --
package greet
`
	script := fmt.Sprintf(`
turns:
  - toolCalls:
      - name: read_file
        arguments: {path: keys/deploy.pem, startLine: 2}
      - name: read_file
        arguments: {path: keys/deploy.pem, startLine: %d, endLine: %d}
      - name: read_file
        arguments: {path: keys/deploy.pem, startLine: %d}
      - name: run_command
        arguments: {command: "sed -n 2,6p keys/deploy.pem"}
      - name: run_command
        arguments: {command: "tail -n 3 keys/deploy.pem"}
  - text: done
`, n/2, n/2, n-1)
	e := newEnv(t, ws, withScript(script))
	if l := last(e.waitRun(e.ask("greet/greet.go", 0, 0, "show the key"))); l.Kind != protocol.EventFinished {
		t.Fatalf("the run ended %+v", l)
	}
	tm := e.toolMessages(2)
	if len(tm) != 5 {
		t.Fatalf("%d tool results, want 5", len(tm))
	}
	for i, m := range tm {
		if !strings.Contains(m.Content, "[REDACTED:") {
			t.Errorf("tool result %d masks nothing: %q", i, m.Content)
		}
		for _, l := range keyBodyLines(key) {
			if strings.Contains(m.Content, l) {
				t.Errorf("tool result %d shows a line of the key's body:\n%s", i, m.Content)
				break
			}
		}
	}
}
