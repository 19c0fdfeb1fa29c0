package repomap

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
)

// str names a string of the map's records (Def, Ref) by its number in one
// process-wide table, so that the records hold no pointers: the garbage
// collector allocates their arrays as data it never scans. Before, at 10×
// the Go tree its 1.1 million definitions and 2.3 million references were
// ~6.7 million pointers, marked on every cycle of a build; the collector
// took a fifth of the cold build's CPU (docs/scale.md). The zero str is "".
//
// The table only grows: a string once interned keeps its number for the
// life of the process (a string an edit removes stays; what an editing
// session adds is its new names and signature lines). Equal strings have
// equal numbers, so records compare as their strings do.
type str uint32

// String returns the string s names.
func (s str) String() string {
	if s == 0 {
		return ""
	}
	return strtab.shards[s&(strShards-1)].at(uint32(s) >> strShardBits)
}

// internStr returns the number of s, adding it to the table (a copy of
// its bytes: s may be a slice of a file's content) if it is new.
func internStr(s string) str {
	if s == "" {
		return 0
	}
	return internHashed(maphash.String(strtab.seed, s), s)
}

// lookupStr returns the number of s if it is in the table: no record
// holds a string that is not.
func lookupStr(s string) (str, bool) {
	if s == "" {
		return 0, true
	}
	return lookupHashed(maphash.String(strtab.seed, s), s)
}

// lookupHashed is lookupStr for a string whose hash is h.
func lookupHashed(h uint64, s string) (str, bool) {
	shard := uint32(h & (strShards - 1))
	sh := &strtab.shards[shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i, _, ok := sh.find(h, s)
	return str(i<<strShardBits | shard), ok
}

// internHashed is internStr for a string whose hash is h.
func internHashed(h uint64, s string) str {
	shard := uint32(h & (strShards - 1))
	sh := &strtab.shards[shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i, hashed, ok := sh.find(h, s)
	if ok {
		return str(i<<strShardBits | shard)
	}
	i = sh.add(strings.Clone(s))
	if hashed {
		if sh.collided == nil {
			sh.collided = map[string]uint32{}
		}
		sh.collided[sh.at(i)] = i
	} else {
		sh.ids[h] = i
	}
	return str(i<<strShardBits | shard)
}

const (
	strShardBits = 4 // 16 shards, each with its own lock: parsers on all cores intern at once
	strShards    = 1 << strShardBits
	strChunkBits = 14
	strChunk     = 1 << strChunkBits
	strMax       = 1<<(32-strShardBits) - 1 // strings per shard
)

// strtab is the process's table.
var strtab = func() *strTable {
	t := &strTable{seed: maphash.MakeSeed()}
	for i := range t.shards {
		sh := &t.shards[i]
		sh.ids = map[uint64]uint32{}
		sh.chunks.Store(&[]*[strChunk]string{new([strChunk]string)})
		sh.n = 1 // 0 is ""
	}
	return t
}()

type strTable struct {
	seed   maphash.Seed
	shards [strShards]strShard
}

// strShard holds the strings whose hash falls in it. Strings are written
// under mu before their number is returned, and a chunk is never moved, so
// a reader holding a number (received from the goroutine that interned
// it, or one that got it later) reads without the lock.
type strShard struct {
	mu       sync.Mutex
	ids      map[uint64]uint32 // hash → index: keys and values hold no pointers
	collided map[string]uint32 // the rare string whose hash an earlier one has
	n        uint32            // indexes used
	chunks   atomic.Pointer[[]*[strChunk]string]
}

// find returns the index of s in the shard (sh.mu held); hashed says
// whether some string with its hash h is there (s, or another one).
func (sh *strShard) find(h uint64, s string) (i uint32, hashed, ok bool) {
	first, hashed := sh.ids[h]
	if !hashed {
		return 0, false, false
	}
	if sh.at(first) == s {
		return first, true, true
	}
	i, ok = sh.collided[s] // another string with the same 64-bit hash
	return i, true, ok
}

func (sh *strShard) at(i uint32) string {
	return (*sh.chunks.Load())[i>>strChunkBits][i&(strChunk-1)]
}

func (sh *strShard) add(s string) uint32 {
	if sh.n > strMax {
		panic("repomap: string table full") // 4 billion distinct strings
	}
	i := sh.n
	dir := *sh.chunks.Load()
	if int(i>>strChunkBits) == len(dir) {
		grown := make([]*[strChunk]string, len(dir)+1)
		copy(grown, dir)
		grown[len(dir)] = new([strChunk]string)
		sh.chunks.Store(&grown)
		dir = grown
	}
	dir[i>>strChunkBits][i&(strChunk-1)] = s
	sh.n++
	return i
}
