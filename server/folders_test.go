package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

const foldersScript = `
turns:
  - toolCalls:
      - name: search_code
        arguments: {query: "late payment penalty"}
  - toolCalls:
      - name: repo_map
        arguments: {focus: [billing/inv/invoice.go]}
  - toolCalls:
      - name: read_file
        arguments: {path: billing/inv/invoice.go}
  - toolCalls:
      - name: edit_file
        arguments: {path: billing/inv/invoice.go, oldText: "days * 3", newText: "days * 4"}
  - toolCalls:
      - name: read_file
        arguments: {path: billing/../../outside/secret.txt}
  - toolCalls:
      - name: list_files
        arguments: {path: billing}
  - text: "Surcharge is in billing."
  - toolCalls:
      - name: search_code
        arguments: {query: "late payment penalty"}
  - text: "Searched after removal."
  - toolCalls:
      - name: search_code
        arguments: {query: "ledger balance"}
  - text: "Searched the added folder."
`

// TestWorkspaceFolders drives a two-root workspace: the second folder is
// searched, mapped, read, edited (the edit lands there on accept), a path
// leaving both is refused, and didChangeWorkspaceFolders removes it (its
// files leave search) and adds a third (searchable).
func TestWorkspaceFolders(t *testing.T) {
	base := t.TempDir()
	second := filepath.Join(base, "billing")
	third := filepath.Join(base, "ledger")
	writeTxtar(t, second, "-- inv/invoice.go --\npackage inv\n\n// Surcharge is the late payment penalty.\nfunc Surcharge(days int) int { return days * 3 }\n")
	writeTxtar(t, third, "-- book/book.go --\npackage book\n\n// Balance sums the ledger balance.\nfunc Balance(xs []int) int { return len(xs) }\n")
	writeTxtar(t, filepath.Join(base, "outside"), "-- secret.txt --\nTOPSECRET\n")
	e := newEnv(t, greetWS, withScript(foldersScript), withEditor(lspclient.Options{Folders: []string{second}}))
	// The second folder's own progress task ends when it is searchable.
	if err := e.ed.WaitProgressEnd(e.ctx, "search index (billing)"); err != nil {
		t.Fatal(err)
	}
	e.open("greet/greet.go")
	evs := e.waitRun(e.ask("greet/greet.go", 4, 6, "Where is the late payment penalty?"))
	if k := last(evs).Kind; k != protocol.EventFinished {
		t.Fatalf("run ended with %s: %+v", k, last(evs))
	}
	tm := e.toolMessages(7)
	if len(tm) != 6 {
		t.Fatalf("want 6 tool results, got %d", len(tm))
	}
	for i, want := range []string{
		"billing/inv/invoice.go:3:",      // search reaches the second folder
		"billing/inv/invoice.go:",        // so does the map
		"func Surcharge(days int) int {", // read_file
	} {
		if !strings.Contains(tm[i].Content, want) {
			t.Errorf("tool result %d lacks %q:\n%s", i+1, want, tm[i].Content)
		}
	}
	if !strings.Contains(tm[1].Content, "func Surcharge") || !strings.Contains(tm[1].Content, "greet/greet.go:") {
		t.Errorf("the map does not show both folders:\n%s", tm[1].Content)
	}
	if strings.Contains(tm[4].Content, "TOPSECRET") || !strings.Contains(tm[4].Content, "outside") {
		t.Errorf("a path leaving both folders was not refused:\n%s", tm[4].Content)
	}
	if strings.TrimSpace(tm[5].Content) != "billing/inv/invoice.go" {
		t.Errorf("list_files billing = %q", tm[5].Content)
	}

	proposed := ofKind(evs, protocol.EventEditProposed)
	if len(proposed) != 1 {
		t.Fatalf("want 1 editProposed, got %s", kinds(evs))
	}
	realSecond, _ := filepath.EvalSymlinks(second)
	var edit struct {
		DocumentChanges []struct {
			TextDocument struct{ URI string } `json:"textDocument"`
		} `json:"documentChanges"`
	}
	if err := json.Unmarshal(proposed[0].Edit, &edit); err != nil || len(edit.DocumentChanges) != 1 {
		t.Fatalf("edit: %s (%v)", proposed[0].Edit, err)
	}
	if got, want := edit.DocumentChanges[0].TextDocument.URI, workspace.FileURI(filepath.Join(second, "inv/invoice.go")); got != want && got != workspace.FileURI(filepath.Join(realSecond, "inv/invoice.go")) {
		t.Errorf("edit URI = %s, want %s", got, want)
	}
	res, err := e.ed.Accept(e.ctx, proposed[0].EditID)
	if err != nil || !res.Applied {
		t.Fatalf("accept: %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(second, "inv/invoice.go")); !strings.Contains(string(b), "days * 4") {
		t.Fatalf("the second folder's file after accept:\n%s", b)
	}

	// Remove the second folder: its files leave search.
	notify := func(added, removed []string) {
		t.Helper()
		folders := func(dirs []string) []map[string]string {
			out := []map[string]string{}
			for _, d := range dirs {
				out = append(out, map[string]string{"uri": workspace.FileURI(d), "name": filepath.Base(d)})
			}
			return out
		}
		if err := e.ed.Conn().Notify(e.ctx, "workspace/didChangeWorkspaceFolders",
			map[string]any{"event": map[string]any{"added": folders(added), "removed": folders(removed)}}); err != nil {
			t.Fatal(err)
		}
	}
	notify(nil, []string{second})
	evs = e.waitRun(e.ask("greet/greet.go", 4, 6, "Search again"))
	if k := last(evs).Kind; k != protocol.EventFinished {
		t.Fatalf("second run ended with %s", k)
	}
	tm = e.toolMessages(9)
	if got := tm[len(tm)-1].Content; strings.Contains(got, "billing/") {
		t.Errorf("a removed folder is still searched:\n%s", got)
	}

	notify([]string{third}, nil)
	if err := e.ed.WaitProgressEnd(e.ctx, "search index (ledger)"); err != nil {
		t.Fatal(err)
	}
	evs = e.waitRun(e.ask("greet/greet.go", 4, 6, "Search the new folder"))
	if k := last(evs).Kind; k != protocol.EventFinished {
		t.Fatalf("third run ended with %s", k)
	}
	tm = e.toolMessages(11)
	if got := tm[len(tm)-1].Content; !strings.Contains(got, "ledger/book/book.go:3:") {
		t.Errorf("the added folder is not searched:\n%s", got)
	}
}
