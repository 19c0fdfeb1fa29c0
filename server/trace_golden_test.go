package server_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/trace"
)

var update = flag.Bool("update", false, "rewrite golden files")

// volatile matches attribute values that change from run to run.
var volatile = regexp.MustCompile(`(run|edit|cp|call)-[0-9a-f]{12}|[0-9a-f]{32}|[0-9a-f]{16}`)

// TestTraceGolden runs a scripted run through the real server and compares
// its trace — span tree, names, statuses, attributes — with a golden file,
// ids, times and durations masked. go test ./server -run TraceGolden -update
// rewrites it.
func TestTraceGolden(t *testing.T) {
	e := newEnv(t, greetWS, withScript(editScript), withCountingIDs())
	// The context (and so the token counts) depends on what is indexed.
	if err := e.ed.WaitProgressEnd(e.ctx, "search index"); err != nil {
		t.Fatal(err)
	}
	run := e.ask("greet/greet.go", 4, 6, "Add an exclamation mark")
	e.waitRun(run)
	store, err := trace.OpenStore(e.state)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := store.Load(run)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*trace.SpanData{}
	for i := range tr.Spans {
		byID[tr.Spans[i].SpanID] = &tr.Spans[i]
	}
	var b strings.Builder
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		var kids []*trace.SpanData
		for i := range tr.Spans {
			if tr.Spans[i].ParentID == parent {
				kids = append(kids, &tr.Spans[i])
			}
		}
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].Start.Before(kids[j].Start) })
		for _, s := range kids {
			fmt.Fprintf(&b, "%s%s [%s] %s\n", strings.Repeat("  ", depth), s.Name, s.Kind, s.Status)
			var keys []string
			for k := range s.Attrs {
				if strings.Contains(k, "latency") || strings.Contains(k, "duration") || strings.Contains(k, "ttft") {
					continue
				}
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v := volatile.ReplaceAllString(fmt.Sprint(s.Attrs[k]), "<id>")
				v = strings.ReplaceAll(v, e.root, "<root>")
				fmt.Fprintf(&b, "%s  %s = %s\n", strings.Repeat("  ", depth), k, v)
			}
			walk(s.SpanID, depth+1)
		}
	}
	walk("", 0)
	got := b.String()
	golden := filepath.Join("testdata", "trace.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("the trace differs from %s (run with -update if the change is intended):\n%s", golden, got)
	}
}
