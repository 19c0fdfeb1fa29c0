package search

import (
	"time"

	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// releaseEvery is how often a large reconcile gives back the pages of
// the index's segment files (releaseMapped).
const releaseEvery = 250 * time.Millisecond

// releaseFrom is the number of files from which a reconcile releases
// mapped pages as it goes: a smaller one is over before they matter. (A
// variable for the tests.)
var releaseFrom = 20000

// releaseMapped drops the pages of the persisted segments' file mappings
// from the process's resident set. The pages stay in the kernel's page
// cache and a later read maps them again (a minor fault), so nothing is
// read from disk again while memory is plentiful. During a large build the
// merger reads every page of the segments it merges, and those pages stayed
// resident until the segments were closed: at 10× the Go tree most of the
// file-backed part of the peak resident set (docs/scale.md). What a build
// reads next (the batches' lookups of the ids they replace, the next
// merge) comes back as it is read.
//
// The snapshot it reads holds every segment it names open, so no mapping it
// advises on is unmapped (and its addresses reused) meanwhile.
func (ix *Index) releaseMapped() {
	snap := ix.snapshot()
	if snap == nil { // closed under us
		return
	}
	defer snap.Close()
	for _, s := range snap.Segments() {
		// Only a persisted segment's Data is a file mapping; an in-memory
		// segment's bytes are the Go heap's.
		seg := s.Segment()
		if _, persisted := seg.(segment.PersistedSegment); !persisted {
			continue
		}
		if m, ok := seg.(interface{ Data() []byte }); ok {
			dropPages(m.Data())
		}
	}
}

// releasing calls releaseMapped every releaseEvery until stop is called,
// and once more then: what the build's last merges read is not what a
// question reads next.
func (ix *Index) releasing() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(releaseEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				ix.releaseMapped()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		ix.releaseMapped()
	}
}
