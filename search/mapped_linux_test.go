package search

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// mappedRSS sums the resident kB of the process's mappings of files under
// dir ending in .zap (the segments), from /proc/self/smaps.
func mappedRSS(t *testing.T, dir string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in, kb := false, 0
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch {
		case len(fs) >= 5 && strings.Contains(fs[0], "-") && strings.Contains(fs[3], ":"):
			in = len(fs) >= 6 && strings.HasPrefix(fs[5], dir) && strings.HasSuffix(fs[5], ".zap")
		case in && len(fs) >= 2 && fs[0] == "Rss:":
			n, _ := strconv.Atoi(fs[1])
			kb += n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return kb
}

// readSegments reads every byte of the index's persisted segments, as a
// merge does, and returns how many segments there were.
func readSegments(t *testing.T, ix *Index) int {
	t.Helper()
	snap := ix.snapshot()
	if snap == nil {
		t.Fatal("no snapshot")
	}
	defer snap.Close()
	n, sum := 0, 0
	for _, s := range snap.Segments() {
		if m, ok := s.Segment().(interface{ Data() []byte }); ok {
			n++
			for _, b := range m.Data() {
				sum += int(b)
			}
		}
	}
	if sum == 0 && n > 0 {
		t.Fatal("segments of zeros")
	}
	return n
}

// TestReleaseMappedDropsSegmentPages: releasing takes the segments' pages
// out of the resident set, and the index reads the same afterwards.
func TestReleaseMappedDropsSegmentPages(t *testing.T) {
	ws, _ := fixture(t)
	state := t.TempDir()
	ix := openIndex(t, ws, state, nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := mustSearch(t, ix, "parseHTTPRequest")
	if len(want) == 0 {
		t.Fatal("no hits before")
	}
	ix.Close()
	ix = openIndex(t, ws, state, nil) // persisted segments only: file mappings

	if n := readSegments(t, ix); n == 0 {
		t.Fatal("no persisted segments")
	}
	before := mappedRSS(t, state)
	if before == 0 {
		t.Fatal("segments read but none of their pages resident")
	}
	ix.releaseMapped()
	if after := mappedRSS(t, state); after*4 > before {
		t.Errorf("segment pages resident: %d kB before release, %d kB after", before, after)
	}
	got := mustSearch(t, ix, "parseHTTPRequest")
	if len(got) != len(want) || got[0].Path != want[0].Path || got[0].StartLine != want[0].StartLine {
		t.Errorf("after release: %+v, want %+v", got, want)
	}
	if readSegments(t, ix) == 0 || mappedRSS(t, state) == 0 {
		t.Error("segments not readable again after release")
	}
}

// TestReconcileReleasingKeepsResults: a reconcile that releases pages as it
// goes (here every reconcile) indexes and finds what one that does not does.
func TestReconcileReleasingKeepsResults(t *testing.T) {
	old := releaseFrom
	releaseFrom = 1
	defer func() { releaseFrom = old }()
	ws, root := fixture(t)
	reconcileTwiceAndFind(t, openIndex(t, ws, t.TempDir(), nil), root)
}

// TestReleaseMappedAfterClose: a release that comes after the index closed
// (a reconcile's last, racing a shutdown) does nothing and does not panic.
func TestReleaseMappedAfterClose(t *testing.T) {
	ws, _ := fixture(t)
	ix := openIndex(t, ws, t.TempDir(), nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix.releaseMapped()
}
