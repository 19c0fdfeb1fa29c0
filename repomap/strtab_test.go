package repomap

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"unsafe"
)

func TestStrTable(t *testing.T) {
	if internStr("") != 0 || str(0).String() != "" {
		t.Fatal(`"" is not the zero str`)
	}
	// Interned from many goroutines at once, each string has one number
	// and reads back as itself, also past the first chunk of a shard.
	const n = 3 * strChunk * strShards
	ids := make([][]str, 4)
	var wg sync.WaitGroup
	for g := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				ids[g] = append(ids[g], internStr(fmt.Sprintf("s%d", (i*(g+1))%n)))
			}
		}()
	}
	wg.Wait()
	byString := map[string]str{}
	for g := range ids {
		for i, id := range ids[g] {
			want := fmt.Sprintf("s%d", (i*(g+1))%n)
			if got := id.String(); got != want {
				t.Fatalf("goroutine %d: %q reads back as %q", g, want, got)
			}
			if prev, ok := byString[want]; ok && prev != id {
				t.Fatalf("%q has two numbers, %d and %d", want, prev, id)
			}
			byString[want] = id
		}
	}
	if len(byString) != n {
		t.Fatalf("%d distinct strings, want %d", len(byString), n)
	}
}

func TestStrTableHashCollision(t *testing.T) {
	const h = 0x5eed_0000_0000_0007 // the same hash for both
	a, b := internHashed(h, "collision-a"), internHashed(h, "collision-b")
	if a == b {
		t.Fatal("two strings with one hash got one number")
	}
	if a.String() != "collision-a" || b.String() != "collision-b" {
		t.Fatalf("read back %q, %q", a.String(), b.String())
	}
	if internHashed(h, "collision-b") != b || internHashed(h, "collision-a") != a {
		t.Fatal("interning again gave another number")
	}
}

// A lookup finds a string interned before, with its number, and no other.
func TestStrTableLookup(t *testing.T) {
	if id, ok := lookupStr(""); !ok || id != 0 {
		t.Fatalf(`"" looked up as %d, %v`, id, ok)
	}
	a := internStr("lookup-me")
	if id, ok := lookupStr("lookup-me"); !ok || id != a {
		t.Fatalf("an interned string looked up as %d, %v; interned as %d", id, ok, a)
	}
	if id, ok := lookupStr("never-interned-anywhere"); ok {
		t.Fatalf("a string never interned looked up as %d", id)
	}
	const h = 0x5eed_0000_0000_0009 // one hash for two strings
	b, c := internHashed(h, "lookup-collision-b"), internHashed(h, "lookup-collision-c")
	if id, ok := lookupHashed(h, "lookup-collision-c"); !ok || id != c {
		t.Fatalf("the second string of a hash looked up as %d, %v; interned as %d", id, ok, c)
	}
	if id, ok := lookupHashed(h, "lookup-collision-b"); !ok || id != b {
		t.Fatalf("the first string of a hash looked up as %d, %v; interned as %d", id, ok, b)
	}
	if _, ok := lookupHashed(h, "lookup-collision-d"); ok {
		t.Fatal("a third string of the hash, never interned, was found")
	}
}

func TestStrTableCopies(t *testing.T) {
	buf := []byte("a name inside a file's content")
	s := unsafe.String(&buf[2], 4) // "name", a slice of buf
	id := internStr(s)
	copy(buf, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXX")
	if got := id.String(); got != "name" {
		t.Fatalf("the table kept a slice of its argument: %q", got)
	}
}

// The records the map keeps per definition and per reference hold no
// pointer, so the collector does not scan their arrays.
func TestRecordsHoldNoPointers(t *testing.T) {
	for _, v := range []any{Def{}, Ref{}} {
		if typ := reflect.TypeOf(v); holdsPointers(typ) {
			t.Errorf("%s holds a pointer", typ)
		}
	}
	if size := unsafe.Sizeof(Def{}); size > 40 {
		t.Errorf("Def is %d bytes", size)
	}
	if size := unsafe.Sizeof(Ref{}); size > 8 {
		t.Errorf("Ref is %d bytes", size)
	}
}

func holdsPointers(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Struct:
		for i := range typ.NumField() {
			if holdsPointers(typ.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Array:
		return typ.Len() > 0 && holdsPointers(typ.Elem())
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	}
	return true // strings, slices, maps, pointers, interfaces, funcs, channels
}
