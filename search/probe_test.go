package search

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/workspace"
)

func TestProbeCorpus(t *testing.T) {
	dir := os.Getenv("CAIRN_PROBE")
	if dir == "" {
		t.Skip()
	}
	ws, _ := workspace.Open(dir)
	state := t.TempDir()
	stop := make(chan bool)
	if pf := os.Getenv("CAIRN_HEAPPROF"); pf != "" {
		go func() {
			var peak uint64
			for {
				select {
				case <-stop:
					return
				case <-time.After(500 * time.Millisecond):
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak {
					peak = ms.HeapInuse
					f, _ := os.Create(pf)
					pprof.WriteHeapProfile(f)
					f.Close()
				}
			}
		}()
	}
	t0 := time.Now()
	bd, _ := strconv.Atoi(os.Getenv("CAIRN_BD"))
	ix, err := Open(ws, Options{StateDir: state, BatchDocs: bd})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Reconcile(context.Background())
	close(stop)
	t.Logf("reconcile %v %+v err=%v", time.Since(t0), st, err)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap sys %d MB", ms.Sys>>20)
	t1 := time.Now()
	ix.Close()
	t.Logf("close %v; stats", time.Since(t1))
	t2 := time.Now()
	ix, err = Open(ws, Options{StateDir: state})
	t.Logf("open %v %v %+v", time.Since(t2), err, ix.Stats())
	for _, q := range []string{"ServeHTTP", "parseHTTPRequest", "\"settings frame\"", "where are HTTP/2 settings frames parsed", "path:net/http lang:go ReadRequest"} {
		t3 := time.Now()
		res, err := ix.Search(context.Background(), q, 5)
		d := time.Since(t3)
		if err != nil {
			t.Log(q, err)
			continue
		}
		t.Logf("%q %v total=%d", q, d, res.Total)
		for _, h := range res.Hits {
			t.Log("  ", h.String(), h.Symbol)
		}
	}
	ix.Close()
}
