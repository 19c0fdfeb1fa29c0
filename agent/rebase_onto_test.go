package agent

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
)

// RebaseOnto moves the hunks of a pending edit onto the text the user has
// now: hunks away from the user's change are kept (and accept onto that
// text byte for byte), hunks under it are dropped and named by file and
// line of the current text.
func TestRebaseOnto(t *testing.T) {
	const base = "one\ntwo\nthree\nfour\nfive\n"
	const script = `turns:
  - toolCalls: [{name: edit_file, arguments: {path: b.txt, oldText: "one\ntwo\nthree\nfour\nfive\n", newText: "ONE\ntwo\nthree\nfour\nFIVE\n"}}]
  - text: "Changed b.txt."
`
	for _, tc := range []struct {
		name, cur, want string
		dropped         []string
	}{
		{name: "between the hunks", cur: "one\ntwo\nthree (typed)\nfour\nfive\n", want: "ONE\ntwo\nthree (typed)\nfour\nFIVE\n"},
		{name: "lines added above", cur: "zero\nzero\none\ntwo\nthree\nfour\nfive\n", want: "zero\nzero\nONE\ntwo\nthree\nfour\nFIVE\n"},
		{name: "lines added below", cur: base + "six\n", want: "ONE\ntwo\nthree\nfour\nFIVE\nsix\n"},
		{name: "a line removed between", cur: "one\ntwo\nfour\nfive\n", want: "ONE\ntwo\nfour\nFIVE\n"},
		{name: "under the second hunk", cur: "one\ntwo\nthree\nfour\nfive!\n", want: "ONE\ntwo\nthree\nfour\nfive!\n",
			dropped: []string{"b.txt line 5"}},
		{name: "under the first hunk, several lines", cur: "uno\ndos\ntwo\nthree\nfour\nfive\n", want: "uno\ndos\ntwo\nthree\nfour\nFIVE\n",
			dropped: []string{"b.txt lines 1-2"}},
		{name: "a line inserted right above a hunk", cur: "one\ntwo\nthree\nfour\n4.5\nfive\n", want: "ONE\ntwo\nthree\nfour\n4.5\nFIVE\n"},
		{name: "under both", cur: "1\ntwo\nthree\nfour\n5\n", dropped: []string{"b.txt line 1", "b.txt line 5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newManager(t, script, t.TempDir())
			abs := filepath.Join(m.ws.Root(), "b.txt")
			if err := os.WriteFile(abs, []byte(base), 0o644); err != nil {
				t.Fatal(err)
			}
			ch := make(chan protocol.RunEvent, 100)
			if _, err := m.Start(context.Background(), AskRequest{Question: "q"}, func(ev protocol.RunEvent) { ch <- ev }); err != nil {
				t.Fatal(err)
			}
			editID := waitEvent(t, ch, protocol.EventEditProposed).EditID
			waitEvent(t, ch, protocol.EventFinished)

			// The user typed: the editor holds cur (here saved, as the
			// disk applier reads the disk).
			if err := os.WriteFile(abs, []byte(tc.cur), 0o644); err != nil {
				t.Fatal(err)
			}
			dropped, err := m.RebaseOnto(editID, abs, tc.cur)
			if err != nil {
				t.Fatal(err)
			}
			var where []string
			for _, d := range dropped {
				where = append(where, d.Lines())
			}
			if !reflect.DeepEqual(where, tc.dropped) {
				t.Errorf("dropped %q, want %q", where, tc.dropped)
			}
			e, _ := m.EditByID(editID)
			if tc.want == "" {
				if e.State != EditRejected {
					t.Errorf("an edit with no hunk left is %s, want rejected", e.State)
				}
				return
			}
			if e.Files[0].Before != tc.cur || e.Files[0].After != tc.want {
				t.Errorf("rebased edit: before %q after %q", e.Files[0].Before, e.Files[0].After)
			}
			res, err := m.Accept(context.Background(), editID, diskApplier{})
			if err != nil || !res.Applied {
				t.Fatalf("accept after the rebase: %+v %v", res, err)
			}
			if b, _ := os.ReadFile(abs); string(b) != tc.want {
				t.Errorf("file after accept %q, want %q", b, tc.want)
			}
		})
	}
}
