package gcroom

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// current returns the GC target without changing it.
func current() int {
	p := debug.SetGCPercent(100)
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

// setRoom sets Room under the lock a running cleanup reads it under.
func setRoom(r uint64) {
	mu.Lock()
	defer mu.Unlock()
	Room = r
}

// waitTarget runs collections until the target is want (each one runs the
// cleanup that sets it), failing after a generous deadline.
func waitTarget(t *testing.T, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for current() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the target stayed %d, want %d", what, current(), want)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// The target follows a real live heap down and back up, collection by
// collection, and comes back to what it was when the last of two
// overlapping follows stops.
func TestFollowSetsTheTargetAfterEachCollection(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer setRoom(Room)
	setRoom(4 << 20)
	a := Follow()
	b := Follow()
	live := make([]byte, 64<<20) // read by the runtime's metric
	waitTarget(t, MinPercent, "with 64 MB live and Room 4 MB")
	live[0] = 1
	live = nil
	setRoom(1 << 30) // now far more than the live heap
	waitTarget(t, 100, "with the live heap under Room")
	setRoom(4 << 20)
	live = make([]byte, 64<<20)
	waitTarget(t, MinPercent, "with 64 MB live again")
	a()
	a() // a second call of the same stop counts once
	runtime.GC()
	if got := current(); got != MinPercent {
		t.Fatalf("with one follow still running the target is %d, want %d", got, MinPercent)
	}
	b()
	if got := current(); got != 100 {
		t.Fatalf("after the last stop the target is %d, want 100", got)
	}
	// A stopped follow's cleanup, run by a later collection, changes
	// nothing.
	for i := 0; i < 3; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := current(); got != 100 {
		t.Fatalf("collections after the stop set the target to %d, want 100", got)
	}
	live[0] = 2 // live until here
}

// A target already below MinPercent, and one the user set with GOGC, stay
// as they are while following and after it.
func TestFollowKeepsATargetItMustNotRaise(t *testing.T) {
	defer setRoom(Room)
	setRoom(4 << 20)
	live := make([]byte, 64<<20)
	for _, c := range []struct {
		env    string
		target int
	}{{"", 20}, {"300", 300}} {
		t.Setenv("GOGC", c.env)
		prev := debug.SetGCPercent(c.target)
		stop := Follow()
		for i := 0; i < 3; i++ {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		during := current()
		stop()
		if after := current(); during != c.target || after != c.target {
			t.Errorf("GOGC=%q, target %d: %d while following and %d after, want it unchanged", c.env, c.target, during, after)
		}
		debug.SetGCPercent(prev)
	}
	live[0] = 1
}

// heapFigures returns the live heap at the last collection and the
// collector's goal.
func heapFigures() (live, goal uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// Idle collects in the background once the heap has used more than half
// its room, and does nothing before, or in a process that does not
// follow.
func TestIdleCollectsNearTheGoal(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	if c := Idle(); c != closed {
		t.Fatal("Idle started a collection with no Follow active")
	}
	defer setRoom(Room)
	setRoom(32 << 20)
	stop := Follow()
	defer stop()
	runtime.GC()
	runtime.GC() // the first one's cleanup set the target: the goal is settled
	if c := Idle(); c != closed {
		t.Fatal("Idle started a collection right after one")
	}
	live, goal := heapFigures()
	if goal <= live {
		t.Fatalf("goal %d ≤ live %d", goal, live)
	}
	// 60% of the way: past half, short of where the collector itself
	// starts (70% at the earliest).
	grown := make([]byte, (goal-live)*6/10)
	before := gcCount()
	c := Idle()
	if c == closed {
		live2, goal2 := heapFigures()
		t.Fatalf("Idle started nothing with %d of %d bytes of room used (live %d, goal %d; collections %d → %d)",
			len(grown), goal-live, live2, goal2, before, gcCount())
	}
	select {
	case <-c:
	case <-time.After(time.Minute):
		t.Fatal("the idle collection did not end in a minute")
	}
	if gcCount() == before {
		t.Fatal("Idle's channel closed with no collection")
	}
	grown[0] = 1
}

// gcCount returns how many collections have ended.
func gcCount() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// While following, the memory limit sits just above the heap goal the
// target gives; the limit comes back when the follow stops, and one the
// user set with GOMEMLIMIT is left alone.
func TestFollowSetsTheMemoryLimit(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer setRoom(Room)
	setRoom(4 << 20)
	before := debug.SetMemoryLimit(-1)
	stop := Follow()
	live := make([]byte, 64<<20)
	waitTarget(t, MinPercent, "with 64 MB live and Room 4 MB")
	lim := debug.SetMemoryLimit(-1)
	heap, _ := heapFigures()
	if lim == before || uint64(lim) < heap+heap/2 || uint64(lim) > heap+heap/2+64<<20 {
		t.Errorf("with %d MB live at target %d%%, the limit is %d MB (before: %d), want just over 1.5× the live heap",
			heap>>20, MinPercent, lim>>20, before>>20)
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("after the stop the limit is %d, want %d", got, before)
	}
	live[0] = 1

	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30) // as the runtime does at start
	stop = Follow()
	defer stop()
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("with GOMEMLIMIT set the limit became %d while following, want 1 GiB", got)
	}
}
