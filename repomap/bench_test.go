package repomap

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The benchmarks run on a copy of a real corpus, by default the Go source
// tree: CAIRN_BENCH_CORPUS=goroot (or a directory). They are skipped when
// the variable is unset or with -short. See bench.sh, which also times
// `ctags -R` on the same copy.

var (
	corpusOnce sync.Once
	corpusDir  string
	corpusErr  error
)

func benchCorpus(b *testing.B) string {
	src := os.Getenv("CAIRN_BENCH_CORPUS")
	if src == "" || testing.Short() {
		b.Skip("set CAIRN_BENCH_CORPUS=goroot (or a directory) to run repo map benchmarks")
	}
	corpusOnce.Do(func() {
		if src == "goroot" {
			out, err := exec.Command("go", "env", "GOROOT").Output()
			if err != nil {
				corpusErr = err
				return
			}
			src = filepath.Join(strings.TrimSpace(string(out)), "src")
		}
		// CAIRN_BENCH_WORKDIR keeps the copy (and the warm cache next to
		// it) across runs, so bench.sh can time one benchmark per process.
		dir := os.Getenv("CAIRN_BENCH_WORKDIR")
		if dir == "" {
			d, err := os.MkdirTemp("", "cairn-bench-corpus-")
			if err != nil {
				corpusErr = err
				return
			}
			dir = d
		}
		corpusDir = filepath.Join(dir, "src")
		if _, err := os.Stat(filepath.Join(dir, "src.done")); err == nil {
			return
		}
		os.RemoveAll(corpusDir)
		if corpusErr = copyTree(src, corpusDir); corpusErr == nil {
			corpusErr = os.WriteFile(filepath.Join(dir, "src.done"), nil, 0o644)
		}
	})
	if corpusErr != nil {
		b.Fatal(corpusErr)
	}
	return corpusDir
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.Create(target)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return nil // symlinks and others are not copied
	})
}

func reportBuild(b *testing.B, st BuildStats) {
	b.ReportMetric(float64(st.Files), "files")
	b.ReportMetric(float64(st.Parsed), "parsed")
}

func BenchmarkColdBuild(b *testing.B) {
	root := benchCorpus(b)
	var st BuildStats
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		m := newMap(b, root, Options{CacheDir: b.TempDir()})
		st = build(b, m)
	}
	reportCPU(b, cpu)
	reportBuild(b, st)
}

// cpuTime is the CPU (user + system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU used per operation since start: on a shared
// machine the wall time per operation mostly measures the other jobs.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkTagGoTree tags every Go file of the corpus in one goroutine,
// the files read beforehand: the tagger alone, without walk, hash or cache.
func BenchmarkTagGoTree(b *testing.B) {
	root := benchCorpus(b)
	type file struct {
		rel     string
		content []byte
	}
	var files []file
	size := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, file{filepath.ToSlash(rel), content})
		size += len(content)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		for _, f := range files {
			ParseFile(f.rel, f.content) // a file no parser accepts is counted all the same
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(len(files)), "files")
}

func warmCache(b *testing.B, root string) string {
	cache := filepath.Join(filepath.Dir(root), "cache")
	if _, err := os.Stat(filepath.Join(cache, cacheName)); err != nil {
		build(b, newMap(b, root, Options{CacheDir: cache}))
	}
	return cache
}

func BenchmarkWarmLoad(b *testing.B) {
	root := benchCorpus(b)
	cache := warmCache(b, root)
	b.ResetTimer()
	var st BuildStats
	for i := 0; i < b.N; i++ {
		m := newMap(b, root, Options{CacheDir: cache})
		st = build(b, m)
	}
	if st.Parsed != 0 {
		b.Fatalf("warm load parsed %d files", st.Parsed)
	}
	reportBuild(b, st)
}

func builtMap(b *testing.B) *Map {
	root := benchCorpus(b)
	cache := warmCache(b, root)
	m := newMap(b, root, Options{CacheDir: cache})
	build(b, m)
	return m
}

func BenchmarkUpdateOneFile(b *testing.B) {
	m := builtMap(b)
	const rel = "net/http/server.go"
	src, err := os.ReadFile(filepath.Join(m.ws.Root(), rel))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		content := append(append([]byte(nil), src...), fmt.Sprintf("\nfunc benchAdded%d() {}\n", i)...)
		if err := m.Update(rel, content); err != nil {
			b.Fatal(err)
		}
		if len(m.DefinitionsOf([]string{fmt.Sprintf("benchAdded%d", i)})) != 1 {
			b.Fatal("update not reflected")
		}
	}
}

var benchFocus = Focus{Files: []string{"net/http/server.go"}, Mentioned: []string{"handler", "ServeHTTP"}}

func BenchmarkRender(b *testing.B) {
	m := builtMap(b)
	for _, tokens := range []int{64, 1000, 4000, 8000} { // 64: a tiny budget must not render the whole tree to probe
		b.Run(fmt.Sprintf("tokens=%d", tokens), func(b *testing.B) {
			m.Render(benchFocus, tokens) // rank once; later renders reuse it
			b.ResetTimer()
			var st RenderStats
			for i := 0; i < b.N; i++ {
				_, st = m.Render(benchFocus, tokens)
			}
			b.ReportMetric(float64(st.Tokens), "tokens")
		})
	}
}

// BenchmarkRenderOverview is the unfocused map (`cairn map`, a question
// with no file): "again" renders a ranking already made (its order by
// value per token, byValuePerToken, kept on it), "ranked" ranks first.
func BenchmarkRenderOverview(b *testing.B) {
	m := builtMap(b)
	m.currentGraph()
	for _, tokens := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("again/tokens=%d", tokens), func(b *testing.B) {
			m.Render(Focus{}, tokens)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Render(Focus{}, tokens)
			}
		})
		b.Run(fmt.Sprintf("ranked/tokens=%d", tokens), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				m.mu.Lock()
				m.rankCache = nil
				m.mu.Unlock()
				m.Render(Focus{}, tokens)
			}
		})
	}
}

// BenchmarkRankAndRender includes the personalized PageRank: a new focus
// (or a changed file) on every call.
func BenchmarkRankAndRender(b *testing.B) {
	m := builtMap(b)
	m.currentGraph()
	for _, tokens := range []int{1000, 4000, 8000} {
		b.Run(fmt.Sprintf("tokens=%d", tokens), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				m.mu.Lock()
				m.rankCache = nil
				m.mu.Unlock()
				m.Render(benchFocus, tokens)
			}
		})
	}
}

// BenchmarkGraphRebuild is the lazy re-rank's fixed cost after a change
// (names already interned: what follows an Update).
func BenchmarkGraphRebuild(b *testing.B) {
	m := builtMap(b)
	m.currentGraph()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.mu.Lock()
		m.changedLocked()
		m.mu.Unlock()
		m.currentGraph()
	}
}

// BenchmarkUpdateAndRender is one edited file reflected in a 4k-token map:
// re-parse, graph rebuild, rank, render.
func BenchmarkUpdateAndRender(b *testing.B) {
	m := builtMap(b)
	const rel = "net/http/server.go"
	src, err := os.ReadFile(filepath.Join(m.ws.Root(), rel))
	if err != nil {
		b.Fatal(err)
	}
	m.Render(benchFocus, 4000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		content := append(append([]byte(nil), src...), fmt.Sprintf("\nfunc benchAdded%d() {}\n", i)...)
		if err := m.Update(rel, content); err != nil {
			b.Fatal(err)
		}
		m.Render(benchFocus, 4000)
	}
}

func BenchmarkParseFile(b *testing.B) {
	src, err := os.ReadFile("tags.go")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		if _, err := ParseFile("tags.go", src); err != nil {
			b.Fatal(err)
		}
	}
}
