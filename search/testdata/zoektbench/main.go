// Command zoektbench measures zoekt's in-process query latency on an index
// directory, for search/bench.sh (it is built in a scratch module next to
// zoekt, never as part of Cairn: testdata is outside the Go build).
//
//	zoektbench -index DIR -n 200 'query' ...
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sort"
	"time"

	"github.com/sourcegraph/zoekt"
	"github.com/sourcegraph/zoekt/query"
	"github.com/sourcegraph/zoekt/shards"
)

func main() {
	index := flag.String("index", "", "zoekt index directory")
	n := flag.Int("n", 200, "searches per class")
	label := flag.String("label", "", "label printed with the figures")
	flag.Parse()
	t0 := time.Now()
	s, err := shards.NewDirectorySearcher(*index)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	opts := &zoekt.SearchOptions{MaxDocDisplayCount: 10, ShardMaxMatchCount: 1000, TotalMaxMatchCount: 10000}
	var qs []query.Q
	for _, a := range flag.Args() {
		q, err := query.Parse(a)
		if err != nil {
			log.Fatalf("%q: %v", a, err)
		}
		qs = append(qs, query.Simplify(query.Map(q, query.ExpandFileContent)))
	}
	for _, q := range qs { // warm up (and wait for shards to load)
		if _, err := s.Search(ctx, q, opts); err != nil {
			log.Fatal(err)
		}
	}
	load := time.Since(t0)
	lat := make([]time.Duration, 0, *n)
	for i := 0; i < *n; i++ {
		t := time.Now()
		if _, err := s.Search(ctx, qs[i%len(qs)], opts); err != nil {
			log.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Printf("  %-10s in process: p50 %.3f ms  p99 %.3f ms  (open+warm-up %.0f ms)\n", *label, ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), ms(load))
}
