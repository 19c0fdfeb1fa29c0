package agent

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/cairn-dev/cairn/tools"
)

// The rebase at line granularity: which user changes overlap a hunk, and
// that what stays pending applies to the new text byte for byte.
func TestRebaseOverlapRules(t *testing.T) {
	base := "a\nb\nc\nd\ne\n"
	after := "a\nB\nc\nd\nE\n" // hunk 0 changes line 2, hunk 1 line 5
	cases := []struct {
		name   string
		user   func(string) string
		states []EditState
		want   string // the new text with every pending hunk applied
	}{
		{"insert right above hunk 0", func(s string) string { return strings.Replace(s, "a\n", "a\nnew\n", 1) },
			[]EditState{EditPending, EditPending}, "a\nnew\nB\nc\nd\nE\n"},
		{"insert right below hunk 0", func(s string) string { return strings.Replace(s, "b\n", "b\nnew\n", 1) },
			[]EditState{EditPending, EditPending}, "a\nB\nnew\nc\nd\nE\n"},
		{"change between the hunks", func(s string) string { return strings.Replace(s, "c\n", "C!\n", 1) },
			[]EditState{EditPending, EditPending}, "a\nB\nC!\nd\nE\n"},
		{"append below everything", func(s string) string { return s + "f\n" },
			[]EditState{EditPending, EditPending}, "a\nB\nc\nd\nE\nf\n"},
		{"change the line of hunk 0", func(s string) string { return strings.Replace(s, "b\n", "b2\n", 1) },
			[]EditState{EditConflict, EditPending}, "a\nb2\nc\nd\nE\n"},
		{"delete across hunk 1", func(s string) string { return strings.Replace(s, "d\ne\n", "", 1) },
			[]EditState{EditPending, EditConflict}, "a\nB\nc\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := tools.FileChange{Abs: "/w/x.txt", Rel: "x.txt", Before: base, BeforeOK: true, After: after}
			e := &Edit{ID: "e", Files: []tools.FileChange{f}, State: EditPending, Hunks: splitHunks([]tools.FileChange{f})}
			if len(e.Hunks) != 2 {
				t.Fatalf("want 2 hunks, got %d", len(e.Hunks))
			}
			typed := c.user(base)
			if !e.rebaseFile(0, base, typed) {
				t.Fatal("rebaseFile changed nothing")
			}
			for i, st := range c.states {
				if e.Hunks[i].State != st {
					t.Errorf("hunk %d: %s, want %s", i, e.Hunks[i].State, st)
				}
			}
			if e.Files[0].Before != typed {
				t.Errorf("the base is not the new text: %q", e.Files[0].Before)
			}
			if e.Files[0].After != c.want {
				t.Errorf("proposed %q, want %q", e.Files[0].After, c.want)
			}
		})
	}
}

// A file the user changes twice, the second time back: the conflict clears;
// and an edit whose expected text was not the text before is left alone.
func TestRebaseOnlyFromTheExpectedText(t *testing.T) {
	base, after := "a\nb\nc\n", "a\nB\nc\n"
	f := tools.FileChange{Abs: "/w/x.txt", Rel: "x.txt", Before: base, BeforeOK: true, After: after}
	e := &Edit{ID: "e", Files: []tools.FileChange{f}, State: EditPending, Hunks: splitHunks([]tools.FileChange{f})}
	if e.rebaseFile(0, "something else\n", "x\n") {
		t.Fatal("an edit not based on the text before was rebased")
	}
	typed := "a\nbb\nc\n"
	e.rebaseFile(0, base, typed)
	if e.Hunks[0].State != EditConflict || e.Hunks[0].StartLine != 1 || e.Hunks[0].EndLine != 2 {
		t.Fatalf("want a conflict on line 2: %+v", e.Hunks[0])
	}
	e.rebaseFile(0, typed, base)
	if e.Hunks[0].State != EditPending || e.Files[0].After != after {
		t.Fatalf("undoing the typing should clear the conflict: %+v, proposed %q", e.Hunks[0], e.Files[0].After)
	}
}

// hunkDiff on the lines around a change gives the diff of the whole text.
func TestHunkDiffWindowed(t *testing.T) {
	texts := map[string]string{
		"plain":      "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n",
		"no newline": "a\nb\nc\nd\ne\nf\ng\nh\ni\nj",
		"short":      "a\nb\n",
	}
	for name, before := range texts {
		lines := strings.SplitAfter(before, "\n")
		for i := range lines {
			for _, repl := range []string{"X\n", "", "X\nY\n"} {
				after := strings.Join(lines[:i], "") + repl + strings.Join(lines[i+1:], "")
				for _, c := range udiff.Lines(before, after) {
					want, err := udiff.ToUnified("a/x", "b/x", before, []udiff.Edit{c}, 3)
					if err != nil {
						t.Fatal(err)
					}
					got, err := hunkDiff("x", before, newLineIndex(before), c)
					if err != nil || got != want {
						t.Errorf("%s, line %d -> %q:\n%s\nwant\n%s (%v)", name, i, repl, got, want, err)
					}
				}
			}
		}
	}
}

// BenchmarkRebase: a keystroke's cost in a 10,000-line file with a pending
// edit of 50 hunks (the user inserts one line near the top).
func BenchmarkRebase(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	base := sb.String()
	after := base
	for i := 100; i < 10000; i += 200 {
		after = strings.Replace(after, fmt.Sprintf("line %d\n", i), fmt.Sprintf("LINE %d\n", i), 1)
	}
	typed := strings.Replace(base, "line 5\n", "line 5\nmine\n", 1)
	f := tools.FileChange{Abs: "/w/x.txt", Rel: "x.txt", Before: base, BeforeOK: true, After: after}
	hunks := splitHunks([]tools.FileChange{f})
	if len(hunks) != 50 {
		b.Fatalf("%d hunks", len(hunks))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := &Edit{ID: "e", Files: []tools.FileChange{f}, State: EditPending, Hunks: append([]Hunk(nil), hunks...)}
		if !e.rebaseFile(0, base, typed) {
			b.Fatal("not rebased")
		}
	}
}

// Random edits by the model and by the user: a rebase never panics, the
// base becomes the user's text, and the pending hunks apply to it with
// their changes intact.
func TestRebaseRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewSource(25))
	words := []string{"a\n", "b\n", "c\n", "d\n", "x\n", "", "yy\n"}
	mutate := func(lines []string) string {
		out := append([]string(nil), lines...)
		for n := rng.Intn(3) + 1; n > 0; n-- {
			i := rng.Intn(len(out) + 1)
			switch rng.Intn(3) {
			case 0:
				out = append(out[:i], append([]string{words[rng.Intn(len(words))]}, out[i:]...)...)
			case 1:
				if i < len(out) {
					out = append(out[:i], out[i+1:]...)
				}
			default:
				if i < len(out) {
					out[i] = words[rng.Intn(len(words))]
				}
			}
		}
		return strings.Join(out, "")
	}
	for iter := 0; iter < 2000; iter++ {
		var lines []string
		for n := rng.Intn(12) + 1; n > 0; n-- {
			lines = append(lines, words[rng.Intn(4)])
		}
		base := strings.Join(lines, "")
		proposed := mutate(lines)
		typed := mutate(lines)
		f := tools.FileChange{Abs: "/w/x", Rel: "x", Before: base, BeforeOK: true, After: proposed}
		e := &Edit{ID: "e", Files: []tools.FileChange{f}, State: EditPending, Hunks: splitHunks([]tools.FileChange{f})}
		if len(e.Hunks) == 0 || base == typed {
			continue
		}
		// Accept a random hunk first, sometimes: the user types after it.
		before := base
		if rng.Intn(2) == 0 {
			e.Hunks[0].State = EditAccepted
			before, _, _ = textWith(f, 0, e.Hunks, Hunk.applied)
			typed = before + "z\n"
		}
		if !e.rebaseFile(0, before, typed) {
			for _, h := range e.Hunks {
				if h.open() {
					t.Fatalf("iter %d: not rebased though hunk %d is open", iter, h.Index)
				}
			}
			continue
		}
		if e.Files[0].Before != typed {
			t.Fatalf("iter %d: base %q, want %q", iter, e.Files[0].Before, typed)
		}
		got, _, err := textWith(e.Files[0], 0, e.Hunks, func(h Hunk) bool { return h.State == EditPending })
		if err != nil || got != e.Files[0].After {
			t.Fatalf("iter %d: pending hunks do not apply: %v (%q vs %q)", iter, err, got, e.Files[0].After)
		}
		for _, h := range e.Hunks {
			if h.State == EditPending && !h.folded && typed[h.change.Start:h.change.End] == h.change.New {
				t.Errorf("iter %d: hunk %d is a no-op after the rebase", iter, h.Index)
			}
		}
	}
}
