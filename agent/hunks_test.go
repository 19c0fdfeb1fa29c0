package agent

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/tools"
)

func TestHunksApplyInAnySubset(t *testing.T) {
	cases := []struct {
		name          string
		before, after string
		hunks         int
	}{
		{"two changes", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n", 2},
		{"adjacent lines are one hunk", "a\nb\nc\n", "A\nB\nc\n", 1},
		{"insertion and deletion", "a\nb\nc\nd\n", "a\nnew\nb\nc\n", 2},
		{"no newline at the end", "a\nb\nc", "a\nb\nC", 1},
		{"newline added at the end", "a\nb", "A\nb\n", 1},
		{"crlf kept", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", 1},
		{"multibyte", "héllo\nwörld\n🙂\n", "héllo\nworld\n🙂!\n", 1},
		{"empty to text", "", "x\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := tools.FileChange{Rel: "f.txt", Before: c.before, BeforeOK: true, After: c.after}
			hs := splitHunks([]tools.FileChange{f})
			if len(hs) != c.hunks {
				t.Fatalf("got %d hunks, want %d: %+v", len(hs), c.hunks, hs)
			}
			// Every subset applies; none gives the base, all give the proposal.
			for mask := 0; mask < 1<<len(hs); mask++ {
				got, ok, err := textWith(f, 0, hs, func(h Hunk) bool { return mask&(1<<h.Index) != 0 })
				if err != nil || !ok {
					t.Fatalf("subset %b: %v", mask, err)
				}
				switch mask {
				case 0:
					if got != c.before {
						t.Errorf("no hunks: %q", got)
					}
				case 1<<len(hs) - 1:
					if got != c.after {
						t.Errorf("all hunks: %q, want %q", got, c.after)
					}
				}
			}
			for _, h := range hs {
				if h.StartLine > h.EndLine || h.NewStartLine > h.NewEndLine || !strings.HasPrefix(h.Diff, "--- a/f.txt") {
					t.Errorf("hunk %+v", h)
				}
			}
		})
	}
}

func TestHunkLines(t *testing.T) {
	before := "l0\nl1\nl2\nl3\nl4\nl5\n"
	after := "l0\nnew\nl1\nl2\nl3\nL4\nl5\n" // insert before l1, change l4
	hs := splitHunks([]tools.FileChange{{Rel: "f", Before: before, BeforeOK: true, After: after}})
	if len(hs) != 2 {
		t.Fatalf("%+v", hs)
	}
	// The insertion: an empty range before line 1; in the proposal, line 1.
	if h := hs[0]; h.StartLine != 1 || h.EndLine != 1 || h.NewStartLine != 1 || h.NewEndLine != 2 {
		t.Errorf("insertion hunk lines: %+v", h)
	}
	// The change of l4: line 4 before, line 5 after (shifted by the insertion).
	if h := hs[1]; h.StartLine != 4 || h.EndLine != 5 || h.NewStartLine != 5 || h.NewEndLine != 6 {
		t.Errorf("change hunk lines: %+v", h)
	}
}

func TestCreatedFileIsOneHunk(t *testing.T) {
	f := tools.FileChange{Rel: "new.go", After: "package x\n\nfunc A() {}\n\nfunc B() {}\n", Created: true}
	hs := splitHunks([]tools.FileChange{f})
	if len(hs) != 1 || !hs[0].whole || hs[0].NewEndLine != 5 {
		t.Fatalf("%+v", hs)
	}
	got, exists, err := textWith(f, 0, hs, func(Hunk) bool { return true })
	if err != nil || !exists || got != f.After {
		t.Fatalf("accepting the creation: %q %v %v", got, exists, err)
	}
	if _, exists, _ := textWith(f, 0, hs, func(Hunk) bool { return false }); exists {
		t.Fatal("a rejected creation leaves a file")
	}
}
