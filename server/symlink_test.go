package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/protocol"
)

// TestSymlinkedWorkspace opens the workspace through a symlink (as macOS's
// /tmp → /private/tmp does) with the state dir inside it, also reached
// through a symlink: the editor's documents are seen, cairn.ask is accepted,
// the proposed edit reaches the editor's buffer under the path it knows, and
// a write into the state dir is refused.
func TestSymlinkedWorkspace(t *testing.T) {
	real := t.TempDir()
	writeTxtar(t, real, greetWS)
	if err := os.Mkdir(filepath.Join(real, ".state"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".state", filepath.Join(real, "statelink")); err != nil {
		testenv.Need(t, "no symlinks here: %v", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "", withRoot(link), withState(filepath.Join(link, "statelink")), withScript(`turns:
  - toolCalls: [{name: read_file, arguments: {path: greet/greet.go}}]
  - toolCalls: [{name: edit_file, arguments: {path: greet/greet.go, oldText: "// UNSAVED", newText: "// EDITED"}}]
  - toolCalls: [{name: edit_file, arguments: {path: statelink/evil.txt, oldText: "", newText: "x"}}]
  - toolCalls: [{name: edit_file, arguments: {path: .state/evil.txt, oldText: "", newText: "x"}}]
  - text: "done"
`))
	e.open("greet/greet.go")
	unsaved := strings.Replace(e.read("greet/greet.go"), "// Greet returns", "// UNSAVED\n// Greet returns", 1)
	if err := e.ed.Type(e.ctx, "greet/greet.go", unsaved); err != nil {
		t.Fatal(err)
	}
	run := e.ask("greet/greet.go", 3, 5, "edit it")
	evs := e.waitRun(run)
	if l := last(evs); l.Kind != protocol.EventFinished {
		t.Fatalf("run ended %+v; events %s", l, kinds(evs))
	}
	for _, m := range e.ed.Messages() {
		if strings.Contains(m, "ignored") || strings.Contains(m, "outside the workspace") {
			t.Errorf("server message: %s", m)
		}
	}
	tm := e.toolMessages(2)
	if len(tm) != 1 || !strings.Contains(tm[0].Content, "// UNSAVED") {
		t.Fatalf("read_file did not see the editor's unsaved text (didOpen/didChange through the symlink): %+v", tm)
	}
	results := ofKind(evs, protocol.EventToolResult)
	if len(results) != 4 || !*results[1].OK || *results[2].OK || *results[3].OK {
		t.Fatalf("tool results %+v: want the edit proposed and both writes into the state dir refused", results)
	}
	for _, r := range results[2:] {
		if !strings.Contains(r.Summary, "state directory") {
			t.Errorf("state-dir write refused for another reason: %q", r.Summary)
		}
	}
	proposed := ofKind(evs, protocol.EventEditProposed)
	if len(proposed) != 1 || !strings.Contains(string(proposed[0].Edit), "file://"+link+"/greet/greet.go") {
		t.Fatalf("the proposed edit does not name the file as the editor opened it: %s", proposed[0].Edit)
	}
	res, err := e.ed.Accept(e.ctx, proposed[0].EditID)
	if err != nil || !res.Applied {
		t.Fatalf("accept: %+v %v", res, err)
	}
	if text, _ := e.ed.Text("greet/greet.go"); !strings.Contains(text, "// EDITED") {
		t.Errorf("the editor's buffer did not get the edit:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(real, ".state", "evil.txt")); err == nil {
		t.Error("a file was written into the state dir")
	}
}
