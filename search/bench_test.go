package search

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/repomap"
	"github.com/cairn-dev/cairn/workspace"
)

// Benchmarks on a real corpus, skipped unless CAIRN_BENCH_CORPUS is set:
//
//	cp -r $(go env GOROOT)/src /tmp/gosrc
//	CAIRN_BENCH_CORPUS=/tmp/gosrc go test -run '^$' -bench . -benchtime 1x ./search
//
// search/bench.sh runs these next to zoekt and rg.

// peakRSS is the process's resident high-water mark (VmHWM), in MB.
func peakRSS() float64 { return float64(testenv.ProcStatus()["VmHWM"]) / 1024 }

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// BenchmarkColdIndex builds the index of the corpus from nothing. Run it
// alone (-bench ColdIndex) for a meaningful peak RSS.
func BenchmarkColdIndex(b *testing.B) {
	dir := corpus(b)
	ws, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	var st ReconcileStats
	for i := 0; i < b.N; i++ {
		state := b.TempDir()
		bd, _ := strconv.Atoi(os.Getenv("CAIRN_BENCH_BATCH")) // Options.BatchDocs; 0: default
		ix, err := Open(ws, Options{StateDir: state, BatchDocs: bd, DeclsFunc: treeSitterDecls})
		if err != nil {
			b.Fatal(err)
		}
		st, err = ix.Reconcile(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		size = dirSize(filepath.Join(state, "search"))
	}
	b.ReportMetric(float64(size)/(1<<20), "index-MB")
	b.ReportMetric(peakRSS(), "peakRSS-MB")
	b.ReportMetric(float64(st.Files), "files")
	b.ReportMetric(float64(st.Chunks), "chunks")
}

// BenchmarkSearchBuild is the search side of a cold build alone: the
// declarations are found first (tree-sitter, files the map skips as
// generated windowed, as codeindex does), then the index is built from
// nothing with them, and the build's CPU time (user+sys, the whole process
// while it runs) is reported as cpu-s.
func BenchmarkSearchBuild(b *testing.B) {
	dir := corpus(b)
	ws, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	files, _ := ws.Walk(workspace.WalkOptions{MaxFileSize: 1 << 20})
	m := repomap.New(ws, repomap.Options{})
	decls := make(map[string][]Decl, len(files))
	for _, f := range files {
		content, err := os.ReadFile(f.Abs)
		if err == nil && repomap.LanguageOf(f.Rel) != "" && m.Skips(f.Rel, content) == "" {
			decls[f.Rel] = treeSitterDecls(f.Rel, workspace.LanguageOf(f.Rel), content)
		}
	}
	declsOf := func(rel, _ string, _ []byte) []Decl { return decls[rel] }
	b.ResetTimer()
	var st ReconcileStats
	var cpu float64
	var size int64
	for i := 0; i < b.N; i++ {
		state := b.TempDir()
		c0 := cpuSeconds()
		ix, err := Open(ws, Options{StateDir: state, DeclsFunc: declsOf})
		if err != nil {
			b.Fatal(err)
		}
		if st, err = ix.Reconcile(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		cpu += cpuSeconds() - c0
		size = dirSize(filepath.Join(state, "search"))
	}
	b.ReportMetric(cpu/float64(b.N), "cpu-s")
	b.ReportMetric(float64(size)/(1<<20), "index-MB")
	b.ReportMetric(peakRSS(), "peakRSS-MB")
	b.ReportMetric(float64(st.Chunks), "chunks")
}

// benchIndex opens (building once if needed) the corpus index in
// CAIRN_BENCH_STATE or a temporary directory.
func benchIndex(b *testing.B) (*Index, string) {
	dir := corpus(b)
	ws, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	state := os.Getenv("CAIRN_BENCH_STATE")
	if state == "" {
		state = b.TempDir()
	}
	ix, err := Open(ws, Options{StateDir: state, DeclsFunc: treeSitterDecls})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.Reconcile(context.Background()); err != nil {
		b.Fatal(err)
	}
	return ix, state
}

// BenchmarkWarmOpen opens an existing index and checks it (no walk).
func BenchmarkWarmOpen(b *testing.B) {
	ix, state := benchIndex(b)
	ws := ix.ws
	ix.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix, err := Open(ws, Options{StateDir: state, DeclsFunc: treeSitterDecls})
		if err != nil {
			b.Fatal(err)
		}
		if ix.Recovered() != "" {
			b.Fatal(ix.Recovered())
		}
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
}

// BenchmarkWarmReconcile is the start-up walk that finds nothing changed.
func BenchmarkWarmReconcile(b *testing.B) {
	ix, _ := benchIndex(b)
	defer ix.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ix.Reconcile(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdate re-indexes one edited file (net/http/server.go, ~4k lines).
func BenchmarkUpdate(b *testing.B) {
	ix, _ := benchIndex(b)
	defer ix.Close()
	rel := "net/http/server.go"
	abs := ix.ws.Abs(rel)
	orig, err := os.ReadFile(abs)
	if err != nil {
		b.Skip(err)
	}
	defer func() {
		os.WriteFile(abs, orig, 0o644)
		ix.Update(rel)
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		content := append(bytes.Clone(orig), []byte("\n// edit "+strconv.Itoa(i)+"\n")...)
		if err := os.WriteFile(abs, content, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := ix.Update(rel); err != nil {
			b.Fatal(err)
		}
	}
}

var benchQueries = map[string][]string{
	"identifier": {"ServeHTTP", "http2parseSettingsFrame", "NewRequestWithContext", "LoadOrStore", "growslice",
		"ReadMIMEHeader", "findRunnable", "EncodeToString", "ParseCIDR", "lockSlow"},
	"phrase": {`"settings frame"`, `"stack overflow"`, `"garbage collection"`, `"read deadline"`, `"context canceled"`,
		`"write barrier"`, `"invalid UTF-8"`, `"connection reset"`, `"header field"`, `"unexpected EOF"`},
	"natural": {"where are HTTP/2 settings frames parsed", "how does the HTTP client follow redirects",
		"graceful shutdown of an HTTP server", "how does the runtime grow a goroutine stack",
		"decompress a gzip stream", "split a network address into host and port", "reset a timer to a new duration",
		"look up an environment variable", "generate an RSA private key", "match file names against a glob pattern"},
}

// BenchmarkQuery measures in-process query latency (hits with their best
// line, limit 10) and reports p50 and p99 per query class.
func BenchmarkQuery(b *testing.B) {
	ix, _ := benchIndex(b)
	defer ix.Close()
	ctx := context.Background()
	for _, class := range []string{"identifier", "phrase", "natural"} {
		qs := benchQueries[class]
		b.Run(class, func(b *testing.B) {
			for _, q := range qs { // warm up
				if _, err := ix.Search(ctx, q, 10); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := ix.Search(ctx, qs[i%len(qs)], 10); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}

// BenchmarkAnalyze is the index-time analysis alone (the body field of
// every chunk of net/ in the corpus, or of the test fixture), one
// goroutine: the part of a build's CPU that is Cairn's own code rather
// than bleve's.
func BenchmarkAnalyze(b *testing.B) {
	root := filepath.Join("testdata", "fixture")
	if d := os.Getenv("CAIRN_BENCH_CORPUS"); d != "" {
		root = filepath.Join(d, "net")
	}
	var texts [][]byte
	var size int64
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.Size() > 1<<20 {
			return nil
		}
		content, err := os.ReadFile(p)
		if err != nil || workspace.IsBinary(content) {
			return nil
		}
		for _, c := range chunkFile(content, nil) {
			texts = append(texts, c.Text)
			size += int64(len(c.Text))
		}
		return nil
	})
	if len(texts) == 0 {
		b.Skip("no text under " + root)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			newCodeField(fBody, t).Analyze()
		}
	}
}
