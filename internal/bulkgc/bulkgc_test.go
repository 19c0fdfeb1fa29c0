package bulkgc

import (
	"runtime/debug"
	"testing"
	"time"
)

// current returns the GC target without changing it.
func current() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func TestPercentFollowsTheLiveHeap(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{100 << 20, 100},       // a small tree: the default
		{Room, 100},            // growth by Room is growth by the live heap
		{Room * 5 / 4, 80},     // growth by Room
		{2 * Room, MinPercent}, // growth by half
		{10 * Room, MinPercent},
	} {
		if got := Percent(c.live); got != c.want {
			t.Errorf("Percent(%d MB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// A live heap of many times Room held during a build brings the target
// down to MinPercent; the target comes back when the last of two builds
// ends.
func TestEnterFollowsUntilTheLastExit(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer func(r uint64) { Room = r }(Room)
	Room = 4 << 20
	a := Enter()
	b := Enter()
	live := make([]byte, 64<<20) // a real live heap, read by the runtime's metric
	deadline := time.Now().Add(time.Minute)
	for current() != MinPercent {
		if time.Now().After(deadline) {
			t.Fatalf("with 64 MB live and Room 4 MB the target stayed %d, want %d", current(), MinPercent)
		}
		debug.FreeOSMemory() // a collection: the live heap is measured
		time.Sleep(10 * time.Millisecond)
	}
	a()
	a() // a second call of the same exit counts once
	if got := current(); got != MinPercent {
		t.Fatalf("with one build still running the target is %d, want %d", got, MinPercent)
	}
	b()
	if got := current(); got != 100 {
		t.Fatalf("after the last build the target is %d, want 100", got)
	}
	live[0] = 2 // live until here
}

// A target already below MinPercent, and one the user set with GOGC,
// stay as they are during a build and after it.
func TestEnterKeepsATargetItMustNotRaise(t *testing.T) {
	for _, c := range []struct {
		env    string
		target int
	}{{"", 20}, {"300", 300}} {
		t.Setenv("GOGC", c.env)
		prev := debug.SetGCPercent(c.target)
		exit := Enter()
		time.Sleep(3 * every)
		during := current()
		exit()
		if after := current(); during != c.target || after != c.target {
			t.Errorf("GOGC=%q, target %d: %d during the build and %d after, want it unchanged", c.env, c.target, during, after)
		}
		debug.SetGCPercent(prev)
	}
}
