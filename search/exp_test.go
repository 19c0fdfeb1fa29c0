package search

import (
	"context"
	"encoding/gob"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/repomap"
	"github.com/cairn-dev/cairn/workspace"
)

func cpuSecs() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func TestExpBuild(t *testing.T) {
	dir := os.Getenv("CAIRN_EXP_CORPUS")
	if dir == "" {
		t.Skip()
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cache := "/tmp/sbuild-decls.gob"
	decls := map[string][]Decl{}
	if f, err := os.Open(cache); err == nil {
		gob.NewDecoder(f).Decode(&decls)
		f.Close()
	} else {
		files, _ := ws.Walk(workspace.WalkOptions{MaxFileSize: 1 << 20})
		m := repomap.New(ws, repomap.Options{})
		var mu sync.Mutex
		var wg sync.WaitGroup
		ch := make(chan workspace.File)
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for f := range ch {
					b, _ := os.ReadFile(f.Abs)
					var d []Decl
					if repomap.LanguageOf(f.Rel) != "" && m.Skips(f.Rel, b) == "" {
						d = treeSitterDecls(f.Rel, workspace.LanguageOf(f.Rel), b)
					}
					mu.Lock()
					decls[f.Rel] = d
					mu.Unlock()
				}
			}()
		}
		for _, f := range files {
			ch <- f
		}
		close(ch)
		wg.Wait()
		f, _ := os.Create(cache)
		gob.NewEncoder(f).Encode(decls)
		f.Close()
	}
	state := t.TempDir()
	c0, w0 := cpuSecs(), time.Now()
	bd, _ := strconv.Atoi(os.Getenv("CAIRN_EXP_BATCH"))
	ix, err := Open(ws, Options{StateDir: state, BatchDocs: bd, DeclsFunc: func(rel, lang string, _ []byte) []Decl { return decls[rel] }})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c1, w1 := cpuSecs(), time.Now()
	segs := ix.Segments()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	c2, w2 := cpuSecs(), time.Now()
	t.Logf("EXP chunks=%d reconcile %.1f CPU-s %.1fs wall; close %.1f CPU-s %.1fs; segs=%d size=%.0fMB rss=%.0fMB",
		st.Chunks, c1-c0, w1.Sub(w0).Seconds(), c2-c1, w2.Sub(w1).Seconds(), segs, float64(dirSize(filepath.Join(state, "search")))/(1<<20), peakRSS())
}
