package search

import (
	"encoding/json"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
)

type planSegment struct {
	id   uint64
	size int64
}

func (s planSegment) Id() uint64          { return s.id }
func (s planSegment) FullSize() int64     { return s.size }
func (s planSegment) LiveSize() int64     { return s.size }
func (s planSegment) HasVector() bool     { return false }
func (s planSegment) FileSize() int64     { return s.size * 500 }
func (s planSegment) LiveFileSize() int64 { return s.size * 500 }

// planOptions reads mergePlanConfig as scorch does: its JSON over the
// default options.
func planOptions(t *testing.T, batchDocs int) *mergeplan.MergePlanOptions {
	t.Helper()
	o := mergeplan.DefaultMergePlanOptions
	b, err := json.Marshal(mergePlanConfig(batchDocs))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	if err := mergeplan.ValidateMergePlannerOptions(&o); err != nil {
		t.Fatal(err)
	}
	return &o
}

// TestMergePlanTiers: the background merger's plan merges a tier of
// batches and a tier of their merges, and never a second-tier segment
// (mergeFanIn² batches) again, however many there are.
func TestMergePlanTiers(t *testing.T) {
	const batch = 500
	o := planOptions(t, batch)
	tier1 := int64(mergeFanIn * batch)
	tier2 := int64(mergeFanIn * mergeFanIn * batch)
	planned := func(segs []mergeplan.Segment) map[uint64]bool {
		p, err := mergeplan.Plan(segs, o)
		if err != nil {
			t.Fatal(err)
		}
		in := map[uint64]bool{}
		for _, task := range p.Tasks {
			for _, s := range task.Segments {
				in[s.Id()] = true
			}
		}
		return in
	}
	var segs []mergeplan.Segment
	for i := 0; i < 2*mergeFanIn; i++ {
		segs = append(segs, planSegment{uint64(i), tier1})
	}
	if got := planned(segs); len(got) < mergeFanIn {
		t.Errorf("two tiers' worth of first-tier segments (%d): %d planned for merging, want a tier at least", 2*mergeFanIn, len(got))
	}
	// Twenty full second-tier segments (10× the Go tree has eleven) and a
	// few batches: only the batches may merge.
	segs = segs[:0]
	for i := 0; i < 20; i++ {
		segs = append(segs, planSegment{uint64(i), tier2})
	}
	for i := 20; i < 20+mergeFanIn+1; i++ {
		segs = append(segs, planSegment{uint64(i), batch})
	}
	for id := range planned(segs) {
		if id < 20 {
			t.Errorf("segment %d of %d chunks (a full second tier) is planned for another merge", id, tier2)
		}
	}
}
