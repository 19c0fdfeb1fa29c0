package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/internal/corpora"
	"github.com/cairn-dev/cairn/workspace"
)

// The first-prompt recall set (testdata/firstprompt.json): questions asked
// from a selection in code nobody here wrote, each with the definitions,
// in files other than the asked one, that an answer needs. The set was
// written and committed before anything was measured on it; its "split"
// alternates dev and test by position within each codebase, tuning looks at
// the dev half only, and the floors are asserted on the test half.
//
// Run it (as scripts/test.sh's quality step is to, with CAIRN_QUALITY=1):
//
//	CAIRN_QUALITY=1 go test -count=1 -timeout 60m -run 'TestFirstPrompt' -v ./cmd/cairn
//
// CAIRN_FIRSTPROMPT_SPLIT=dev measures the dev half alone (for tuning; no
// floor is asserted) and CAIRN_FIRSTPROMPT_DUMP=DIR writes each first
// prompt to DIR/<id>-<cold|warm>.txt.
//
// TestFirstPromptRecall runs the real `cairn ask` binary on each question
// against an OpenAI-compatible endpoint on 127.0.0.1 (real HTTP, the
// provider's wire format), at the default context window, and reads the
// body of the first request the model gets. Each question is asked twice:
//
//   - cold: a fresh state directory, so the workspace is indexed for this
//     question (`cairn ask` waits for the index as long as it takes, its
//     own files first);
//   - warm: a state directory whose index a previous `cairn context` on the
//     same workspace built.
//
// A needed definition counts as present when the first request holds its
// name line (the line the tagger reports as the definition's NameLine, the
// signature line) as one of the numbered file lines of a block the prompt
// labels with the definition's file ("## ...: PATH lines A-B", or "## PATH
// lines A-B: ..." for blocks merged into one range, followed by
// "  N<TAB>text" or, in the selection, "  N›text"), with the line's number
// and its exact text. A mention in the repository map (a signature without
// the code) does not count. Recall is needs present over needs, per
// codebase and overall, per split and state.
//
// The workspaces are the corpora in place (GOROOT/src/net/http and
// GOROOT/src/encoding; the CPython copy that internal/corpora makes, which
// holds email and asyncio; test/corpora/node_modules/zod): the test checks
// that no run wrote into them.

type fpNeed struct {
	File   string `json:"file"`
	Symbol string `json:"symbol"` // Name, or Scope.Name for a member
}

type fpQuestion struct {
	ID       string   `json:"id"`
	Codebase string   `json:"codebase"`
	Split    string   `json:"split"` // "dev" or "test"
	File     string   `json:"file"`
	Lines    [2]int   `json:"lines"`
	Question string   `json:"question"`
	Needs    []fpNeed `json:"needs"`
}

type fpSet struct {
	Note      string            `json:"note"`
	Codebases map[string]string `json:"codebases"`
	Questions []fpQuestion      `json:"questions"`
}

// fpCodebases lists the codebases in the order they are reported.
var fpCodebases = []string{"net/http", "encoding", "email", "asyncio", "zod"}

// The floors the test half must reach: issue 25's targets, 0.85 cold and
// 0.90 warm, which the measured figures meet with room (README.md,
// "First-prompt recall"); a floor lowered below its target would have to
// name the target it misses.
const (
	fpFloorCold = 0.85
	fpFloorWarm = 0.90
)

func loadFPSet(t testing.TB) fpSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "firstprompt.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s fpSet
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("testdata/firstprompt.json: %v", err)
	}
	return s
}

// TestFirstPromptSetWellFormed runs by default: the set parses, every
// question is complete, its needs are in other files, each codebase has
// 8 to 10 questions and the splits alternate dev, test, dev, ...
func TestFirstPromptSetWellFormed(t *testing.T) {
	s := loadFPSet(t)
	ids := map[string]bool{}
	pos := map[string]int{}
	for _, q := range s.Questions {
		if q.ID == "" || ids[q.ID] {
			t.Errorf("question id %q empty or duplicate", q.ID)
		}
		ids[q.ID] = true
		if _, ok := s.Codebases[q.Codebase]; !ok {
			t.Errorf("%s: unknown codebase %q", q.ID, q.Codebase)
		}
		want := "dev"
		if pos[q.Codebase]%2 == 1 {
			want = "test"
		}
		pos[q.Codebase]++
		if q.Split != want {
			t.Errorf("%s: split %q, want %q (the splits alternate within a codebase)", q.ID, q.Split, want)
		}
		if q.File == "" || q.Lines[0] < 1 || q.Lines[1] < q.Lines[0] || strings.TrimSpace(q.Question) == "" || len(q.Needs) == 0 {
			t.Errorf("%s: incomplete question", q.ID)
		}
		for _, n := range q.Needs {
			if n.File == q.File || n.File == "" || n.Symbol == "" {
				t.Errorf("%s: need %+v is empty or in the asked file (only other files' definitions count)", q.ID, n)
			}
		}
	}
	for _, c := range fpCodebases {
		if n := pos[c]; n < 8 || n > 10 {
			t.Errorf("codebase %s has %d questions, want 8 to 10", c, n)
		}
	}
}

// fpRoot returns the workspace root of a codebase and the path of its
// questions' files relative to that root.
func fpRoot(t testing.TB, codebase string) string {
	t.Helper()
	switch codebase {
	case "net/http":
		return filepath.Join(corpora.Root(t, "go"), "net", "http")
	case "encoding":
		return filepath.Join(corpora.Root(t, "go"), "encoding")
	case "email", "asyncio":
		return corpora.Root(t, "python")
	case "zod":
		return corpora.Root(t, "zod")
	}
	t.Fatalf("unknown codebase %q", codebase)
	return ""
}

// fpDefs finds the definition each need names, with an index of root
// built in a state directory of its own.
func fpDefs(t testing.TB, root string, qs []fpQuestion) map[fpNeed]codeindex.Symbol {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := codeindex.Open(ws, codeindex.Options{StateDir: t.TempDir(), NoWatch: true})
	if err != nil {
		t.Fatalf("opening the index of %s: %v", root, err)
	}
	defer ix.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := ix.Reconcile(ctx); err != nil {
		t.Fatalf("indexing %s: %v", root, err)
	}
	out := map[fpNeed]codeindex.Symbol{}
	for _, q := range qs {
		lines := fpFileLines(t, root, q.File)
		if q.Lines[1] > len(lines) {
			t.Errorf("%s: lines %d-%d, but %s has %d lines", q.ID, q.Lines[0], q.Lines[1], q.File, len(lines))
		}
		for _, n := range q.Needs {
			d, ok := fpFind(ix, n)
			if !ok {
				t.Errorf("%s: no definition %s in %s", q.ID, n.Symbol, n.File)
				continue
			}
			out[n] = d
		}
	}
	return out
}

func fpFind(ix codeindex.Index, n fpNeed) (codeindex.Symbol, bool) {
	defs, ok := ix.FileSymbols(n.File)
	if !ok {
		return codeindex.Symbol{}, false
	}
	name, scope := n.Symbol, ""
	if i := strings.LastIndexByte(n.Symbol, '.'); i > 0 {
		scope, name = n.Symbol[:i], n.Symbol[i+1:]
	}
	for _, d := range defs {
		if d.Name() == name && d.Scope() == scope && !d.Local {
			return d, true
		}
	}
	return codeindex.Symbol{}, false
}

func fpFileLines(t testing.TB, root, rel string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

// TestFirstPromptSetResolves checks, on the corpora, that every question's
// range is in its file and every need names a definition the tagger finds.
func TestFirstPromptSetResolves(t *testing.T) {
	corpora.Enabled(t)
	s := loadFPSet(t)
	for _, c := range fpCodebases {
		t.Run(strings.ReplaceAll(c, "/", "_"), func(t *testing.T) {
			fpDefs(t, fpRoot(t, c), fpOf(s, c))
		})
	}
}

func fpOf(s fpSet, codebase string) []fpQuestion {
	var out []fpQuestion
	for _, q := range s.Questions {
		if q.Codebase == codebase {
			out = append(out, q)
		}
	}
	return out
}

// A prompt block's header names the file it shows: "## <what>: PATH lines
// A-B" or, for blocks merged into one range, "## PATH lines A-B: ...".
var (
	promptMerged = regexp.MustCompile(`^## (\S+) lines \d+-\d+`)
	promptHeader = regexp.MustCompile(`: (\S+) lines \d+-\d+`)
	promptLine   = regexp.MustCompile(`^ *(\d+)(?:\t|›)(.*)$`)
)

// promptLines indexes the numbered file lines of a prompt: path -> line
// number -> the texts shown for it.
func promptLines(prompt string) map[string]map[int][]string {
	out := map[string]map[int][]string{}
	path := ""
	for _, l := range strings.Split(prompt, "\n") {
		if strings.HasPrefix(l, "## ") {
			path = ""
			if m := promptMerged.FindStringSubmatch(l); m != nil {
				path = m[1]
			} else if m := promptHeader.FindStringSubmatch(l); m != nil {
				path = m[1]
			}
			continue
		}
		if path == "" {
			continue
		}
		m := promptLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if out[path] == nil {
			out[path] = map[int][]string{}
		}
		out[path][n] = append(out[path][n], m[2])
	}
	return out
}

// fpPresent says whether the prompt shows the definition's name line.
func fpPresent(shown map[string]map[int][]string, file string, d codeindex.Symbol, fileLines []string) bool {
	if d.NameLine < 1 || d.NameLine > len(fileLines) {
		return false
	}
	want := strings.TrimRight(fileLines[d.NameLine-1], " \t\r")
	for _, got := range shown[file][d.NameLine] {
		if strings.TrimRight(got, " \t\r") == want {
			return true
		}
	}
	return false
}

// buildCairn builds the cairn binary once per test process.
var (
	cairnOnce sync.Once
	cairnBin  string
	cairnErr  error
)

func buildCairn(t testing.TB) string {
	t.Helper()
	cairnOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-bin-")
		if err != nil {
			cairnErr = err
			return
		}
		cairnBin = filepath.Join(dir, "cairn")
		if runtime.GOOS == "windows" {
			cairnBin += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", cairnBin, ".").CombinedOutput()
		if err != nil {
			cairnErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if cairnErr != nil {
		t.Fatal(cairnErr)
	}
	return cairnBin
}

// cairnEnv is the environment of a cairn run: the model is the recorder at
// url, the state directory is state, and nothing else from this process's
// environment sets the model or the window.
func cairnEnv(url, state string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CAIRN_") || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ANTHROPIC_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CAIRN_PROVIDER=openai", "CAIRN_MODEL=test-model",
		"OPENAI_BASE_URL="+url+"/v1", "OPENAI_API_KEY=", "CAIRN_STATE_DIR="+state)
}

// askFirstPrompt runs `cairn ask` on one question and returns the text of
// the first request the model got.
func askFirstPrompt(t *testing.T, bin, root, state string, q fpQuestion) string {
	t.Helper()
	rec := &openAIRecorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "ask", "--root", root, "--file", q.File,
		"--range", fmt.Sprintf("%d-%d", q.Lines[0], q.Lines[1]), q.Question)
	cmd.Env = cairnEnv(srv.URL, state)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("%s: cairn ask: %v\n%s\n%s", q.ID, err, stderr.String(), out)
	}
	return rec.first(t)
}

// warmState builds the index of root in a new state directory with
// `cairn context`, which waits for the map and the search index.
func warmState(t *testing.T, bin, root string, q fpQuestion) string {
	t.Helper()
	state := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "context", "--root", root, "--file", q.File, q.Question)
	cmd.Env = cairnEnv("http://127.0.0.1:1", state)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the index of %s: %v\n%s", root, err, out)
	}
	return state
}

// treeState lists a workspace's files with their sizes and times, to tell
// whether a run wrote into it.
func treeState(t testing.TB, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

type fpTally struct{ present, needs int }

func (f fpTally) String() string {
	if f.needs == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d = %.0f%%", f.present, f.needs, 100*f.ratio())
}

func (f fpTally) ratio() float64 { return float64(f.present) / float64(f.needs) }

// TestFirstPromptRecall measures the set (see the top of this file) and
// asserts the floors on its test half.
func TestFirstPromptRecall(t *testing.T) {
	corpora.Enabled(t)
	s := loadFPSet(t)
	bin := buildCairn(t)
	// tally[state][split][codebase]; codebase "" is the total.
	tally := map[string]map[string]map[string]*fpTally{}
	add := func(state, split, codebase string, present bool) {
		for _, cb := range []string{codebase, ""} {
			if tally[state] == nil {
				tally[state] = map[string]map[string]*fpTally{}
			}
			if tally[state][split] == nil {
				tally[state][split] = map[string]*fpTally{}
			}
			if tally[state][split][cb] == nil {
				tally[state][split][cb] = &fpTally{}
			}
			tally[state][split][cb].needs++
			if present {
				tally[state][split][cb].present++
			}
		}
	}
	ran := 0
	for _, c := range fpCodebases {
		t.Run(strings.ReplaceAll(c, "/", "_"), func(t *testing.T) {
			root := fpRoot(t, c)
			qs := fpOf(s, c)
			if only := os.Getenv("CAIRN_FIRSTPROMPT_SPLIT"); only != "" {
				qs = slices.DeleteFunc(qs, func(q fpQuestion) bool { return q.Split != only })
			}
			defs := fpDefs(t, root, qs)
			if t.Failed() {
				return
			}
			before := treeState(t, root)
			warm := warmState(t, bin, root, qs[0])
			for _, q := range qs {
				for _, state := range []string{"cold", "warm"} {
					dir := warm
					if state == "cold" {
						dir = t.TempDir()
					}
					prompt := askFirstPrompt(t, bin, root, dir, q)
					if dump := os.Getenv("CAIRN_FIRSTPROMPT_DUMP"); dump != "" {
						if err := os.WriteFile(filepath.Join(dump, q.ID+"-"+state+".txt"), []byte(prompt), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					shown := promptLines(prompt)
					var missed []string
					for _, n := range q.Needs {
						ok := fpPresent(shown, n.File, defs[n], fpFileLines(t, root, n.File))
						add(state, q.Split, c, ok)
						if !ok {
							missed = append(missed, n.File+":"+n.Symbol)
						}
					}
					if len(missed) > 0 && q.Split == "dev" {
						t.Logf("%s %s (dev) misses %s", q.ID, state, strings.Join(missed, ", "))
					}
				}
			}
			if after := treeState(t, root); after != before {
				t.Errorf("a run wrote into the workspace %s", root)
			}
			ran++
		})
	}
	var report strings.Builder
	fmt.Fprintf(&report, "first-prompt definition recall, default window (needs present / needs):\n")
	fmt.Fprintf(&report, "%-10s %-22s %-22s %-22s %-22s\n", "codebase", "cold dev", "cold test", "warm dev", "warm test")
	for _, c := range append(append([]string{}, fpCodebases...), "") {
		name := c
		if c == "" {
			name = "all"
		}
		row := []string{}
		for _, st := range []string{"cold", "warm"} {
			for _, sp := range []string{"dev", "test"} {
				v := fpTally{}
				if p := tally[st][sp][c]; p != nil {
					v = *p
				}
				row = append(row, v.String())
			}
		}
		fmt.Fprintf(&report, "%-10s %-22s %-22s %-22s %-22s\n", name, row[0], row[1], row[2], row[3])
	}
	t.Log(report.String())
	if ran < len(fpCodebases) || os.Getenv("CAIRN_FIRSTPROMPT_SPLIT") != "" {
		t.Logf("%d of %d codebases ran, split %q; the floors hold for the whole set only", ran, len(fpCodebases), os.Getenv("CAIRN_FIRSTPROMPT_SPLIT"))
		return
	}
	keys := make([]string, 0, 2)
	for k := range tally {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, st := range keys {
		floor := fpFloorCold
		if st == "warm" {
			floor = fpFloorWarm
		}
		got := tally[st]["test"][""]
		if got == nil || got.needs == 0 {
			t.Errorf("%s: no test-half needs measured", st)
			continue
		}
		if r := got.ratio(); r < floor-1e-9 || math.IsNaN(r) {
			t.Errorf("%s recall on the test half is %s, below the floor %.2f", st, got, floor)
		}
	}
}
