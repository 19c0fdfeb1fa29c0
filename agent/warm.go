package agent

import (
	"bufio"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/workspace"
)

// DefaultIndexWait is how long a question waits for the code index's first
// build when Config.IndexWait is 0.
const DefaultIndexWait = 5 * time.Second

// maxPriorityFiles bounds the files a question has indexed ahead of the
// rest of the build.
const maxPriorityFiles = 200

// IndexWait describes a question waiting for the code index, for the
// caller's progress display (Manager.SetIndexWaitObserver).
type IndexWait struct {
	RunID    string
	Building []codeindex.Progress // the latest progress of each engine still building
	Done     bool                 // the wait ended (ready, bound reached or cancelled)
	NotReady []string             // when Done: the sources still not ready
}

// Message is a one-line description of the wait, for a status bar or a
// terminal: "indexing the workspace (1,234 of 5,000 files)".
func (w IndexWait) Message() string {
	for _, p := range w.Building {
		if p.Total > 0 {
			return "indexing the workspace (" + p.Kind + ": " + thousands(p.Done) + " of " + thousands(p.Total) + " files)"
		}
	}
	return "indexing the workspace"
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// waitForIndex brings the files the question is about into the index,
// then waits for the index's first build up to the run's bound
// (Config.IndexWait), telling the observer how it goes. It returns the
// sources still not ready when the question goes ahead.
func (r *Run) waitForIndex() []string {
	ix := r.m.index
	if ix == nil {
		return nil
	}
	if codeindex.IsReady(ix) {
		return nil
	}
	if w, ok := ix.(codeindex.Warming); ok {
		start := time.Now()
		files := r.priorityFiles()
		w.Prioritize(r.ctx, files)
		r.logf(slog.LevelDebug, "indexed the question's files first", "files", len(files), "took", time.Since(start).Round(time.Millisecond), "ready", codeindex.IsReady(ix))
	}
	bound := r.cfg.IndexWait
	if bound == 0 {
		bound = DefaultIndexWait
	}
	var deadline <-chan time.Time
	if bound > 0 {
		t := time.NewTimer(bound)
		defer t.Stop()
		deadline = t.C
	}
	observe := r.m.indexWaitObserver()
	building := func() []codeindex.Progress {
		if w, ok := ix.(codeindex.Warming); ok {
			return w.Building()
		}
		return nil
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	if observe != nil {
		observe(IndexWait{RunID: r.ID, Building: building()})
	}
wait:
	for {
		select {
		case <-ix.Ready():
			break wait
		case <-deadline:
			break wait
		case <-r.ctx.Done():
			break wait
		case <-tick.C:
			if observe != nil {
				observe(IndexWait{RunID: r.ID, Building: building()})
			}
		}
	}
	notReady := codeindex.NotReady(ix)
	if observe != nil {
		observe(IndexWait{RunID: r.ID, Done: true, NotReady: notReady})
	}
	if len(notReady) > 0 && r.ctx.Err() == nil {
		r.logf(slog.LevelWarn, "the question goes ahead before the index is ready", "notReady", strings.Join(notReady, ", "), "waited", bound)
	}
	return notReady
}

// priorityFiles lists the workspace-relative files the question is about,
// most important first: the file asked from, the files the question names,
// the other source files of the asked file's directory (a Go package), and
// the files of the workspace's own packages and modules the asked file
// imports (Go import paths under the module's path; relative imports of
// JavaScript, TypeScript and Python).
func (r *Run) priorityFiles() []string {
	ws := r.m.ws
	var out []string
	seen := map[string]bool{}
	add := func(rel string) {
		rel = path.Clean(rel)
		if len(out) >= maxPriorityFiles || seen[rel] || rel == "." || strings.HasPrefix(rel, "../") || codeindex.LanguageOf(rel) == "" || ws.Ignored(rel) {
			return
		}
		if st, err := os.Stat(ws.Abs(rel)); err != nil || !st.Mode().IsRegular() {
			return
		}
		seen[rel] = true
		out = append(out, rel)
	}
	file := ""
	if r.req.Abs != "" {
		file = ws.Rel(r.req.Abs)
		add(file)
	}
	for _, m := range namedPath.FindAllString(r.req.Question, 20) {
		m = strings.TrimPrefix(strings.Trim(m, "`'\".,:;()"), "./")
		add(m)
		if file != "" {
			add(path.Join(path.Dir(file), m))
		}
	}
	if file == "" {
		return out
	}
	dir := path.Dir(file)
	addDir := func(dir string, tests bool) {
		ents, err := os.ReadDir(ws.Abs(dir))
		if err != nil {
			return
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			if !e.IsDir() && codeindex.LanguageOf(e.Name()) == codeindex.LanguageOf(file) {
				if !tests && strings.HasSuffix(e.Name(), "_test.go") {
					continue
				}
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			add(path.Join(dir, n))
		}
	}
	addDir(dir, strings.HasSuffix(file, "_test.go"))
	for _, imp := range localImports(ws, file) {
		if strings.HasSuffix(imp, "/") {
			addDir(strings.TrimSuffix(imp, "/"), false)
		} else {
			add(imp)
		}
	}
	return out
}

// namedPath matches what looks like a file path in a question: a name with
// an extension, possibly with directories.
var namedPath = regexp.MustCompile(`[A-Za-z0-9_./\-]+\.[A-Za-z0-9]{1,5}`)

// jsImport and pyImport find relative imports.
var (
	jsImport = regexp.MustCompile(`(?:from|import|require\()\s*['"](\.{1,2}/[^'"]+)['"]`)
	pyImport = regexp.MustCompile(`(?m)^\s*from\s+(\.+)([A-Za-z0-9_.]*)\s+import`)
)

// localImports returns the workspace files and directories (ending in
// "/") that file imports from the workspace itself, where that is cheap to
// tell: Go imports under the module path of the workspace's go.mod, and
// relative imports of JavaScript, TypeScript and Python.
func localImports(ws *workspace.Workspace, file string) []string {
	dir := path.Dir(file)
	var out []string
	switch lang := codeindex.LanguageOf(file); {
	case strings.HasSuffix(file, ".go"):
		mod := goModule(ws)
		f, err := parser.ParseFile(token.NewFileSet(), ws.Abs(file), nil, parser.ImportsOnly)
		if err != nil {
			return nil
		}
		for _, im := range f.Imports {
			p := strings.Trim(im.Path.Value, "\"`")
			switch rest, ok := strings.CutPrefix(p, mod+"/"); {
			case mod == "":
			case p == mod:
				out = append(out, "./")
			case ok:
				out = append(out, rest+"/")
			case mod == "std" && !strings.Contains(strings.Split(p, "/")[0], "."):
				out = append(out, p+"/") // the Go tree itself: import paths are directories
			}
		}
	case lang == "python":
		b, err := os.ReadFile(ws.Abs(file))
		if err != nil {
			return nil
		}
		for _, m := range pyImport.FindAllStringSubmatch(string(b), 50) {
			base := dir
			for i := 1; i < len(m[1]); i++ {
				base = path.Dir(base)
			}
			mod := strings.ReplaceAll(m[2], ".", "/")
			if mod == "" {
				continue
			}
			out = append(out, path.Join(base, mod+".py"), path.Join(base, mod, "__init__.py"))
		}
	default:
		b, err := os.ReadFile(ws.Abs(file))
		if err != nil {
			return nil
		}
		for _, m := range jsImport.FindAllStringSubmatch(string(b), 50) {
			p := path.Join(dir, m[1])
			out = append(out, p)
			for _, ext := range []string{".ts", ".tsx", ".js", ".jsx", ".mjs", "/index.ts", "/index.js"} {
				out = append(out, p+ext)
			}
		}
	}
	return out
}

// goModule reads the module path of the workspace root's go.mod.
func goModule(ws *workspace.Workspace) string {
	f, err := os.Open(ws.Abs("go.mod"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), "\"")
		}
	}
	return ""
}
