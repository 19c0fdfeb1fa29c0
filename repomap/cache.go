package repomap

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cairn-dev/cairn/workspace"
)

// cacheFormat changes whenever the entry layout or the extraction changes;
// the query files are hashed in too, so editing a query invalidates the cache.
const cacheFormat = "cairn-repomap-v17"

var cacheVersion = sync.OnceValue(func() string {
	h := sha256.New()
	h.Write([]byte(cacheFormat))
	names, _ := fs.Glob(queryFS, "queries/*.scm")
	sort.Strings(names)
	for _, n := range names {
		b, _ := queryFS.ReadFile(n)
		h.Write([]byte(n))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
})

// The cache is one file read with one read and decoded without
// reflection:
//
//	magic, version (uvarint length + bytes)
//	entries: uvarint count, then per entry its fields as uvarints and
//	         varints, every string as an index into the string table
//	strings: uvarint count, uvarint lengths, then all their bytes
//	trailer: the strings section's offset (8 bytes, little endian) and a
//	         CRC-32C of everything before it (4 bytes)
//
// Every distinct string is stored once, and on load all of them are
// slices of one string, so names repeated across files (and the loaded
// map's strings) cost one copy and one allocation. Anything that does not
// decode cleanly (truncated, corrupt, other version) is an empty cache.
const cacheName = "tags.bin"

// legacyCacheName is the gob cache of earlier versions, removed when the
// new one is written.
const legacyCacheName = "tags.gob"

const cacheMagic = "cairn-repomap\x00"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func (m *Map) cachePath() string {
	if m.opts.CacheDir == "" {
		return ""
	}
	return filepath.Join(m.opts.CacheDir, cacheName)
}

// loadCache reads the tags cache; a missing, corrupt or outdated cache is
// an empty one.
func (m *Map) loadCache() (map[string]*entry, error) {
	p := m.cachePath()
	if p == "" {
		return nil, errors.New("no cache dir")
	}
	data, release, err := workspace.ReadMapped(p)
	if err != nil {
		return nil, err
	}
	// decodeCache copies all it keeps (the string table into one string).
	entries, err := decodeCache(data, cacheVersion())
	release()
	if err != nil {
		return nil, fmt.Errorf("repomap: reading cache %s: %w", p, err)
	}
	out := make(map[string]*entry, len(entries))
	for _, e := range entries {
		out[e.Rel] = e
	}
	return out, nil
}

// ReadCache starts reading the tags cache in the background, so that a
// caller with other work to do before its first Build (opening the search
// index) overlaps the two; Build waits for the read. It does nothing once
// the cache was read or its read started.
func (m *Map) ReadCache() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cacheRead || m.cacheLoad != nil {
		return
	}
	done := make(chan struct{})
	m.cacheLoad = done
	go func() {
		defer close(done)
		cached, err := m.loadCache()
		m.mu.Lock()
		defer m.mu.Unlock()
		if !m.cacheRead {
			m.cacheRead = true
			if err == nil && len(m.files) == 0 {
				m.files = cached
			}
		}
	}()
}

// SaveCache writes the tags cache when the map changed since the last save.
// The write is atomic (temporary file and rename).
func (m *Map) SaveCache() error {
	p := m.cachePath()
	if p == "" {
		return nil
	}
	m.mu.RLock()
	if m.cacheGen == m.gen {
		m.mu.RUnlock()
		return nil
	}
	gen := m.gen
	entries := make([]*entry, 0, len(m.files))
	for _, e := range m.files {
		entries = append(entries, e)
	}
	m.mu.RUnlock()
	sort.Slice(entries, func(i, j int) bool { return entries[i].Rel < entries[j].Rel })
	if err := os.MkdirAll(m.opts.CacheDir, 0o755); err != nil {
		return fmt.Errorf("repomap: cache dir: %w", err)
	}
	tmp, err := os.CreateTemp(m.opts.CacheDir, cacheName+".tmp*")
	if err != nil {
		return fmt.Errorf("repomap: writing cache: %w", err)
	}
	w := bufio.NewWriterSize(tmp, 1<<16)
	err = encodeCache(w, cacheVersion(), entries)
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("repomap: writing cache: %w", err)
	}
	os.Remove(filepath.Join(m.opts.CacheDir, legacyCacheName))
	m.mu.Lock()
	if m.cacheGen < gen {
		m.cacheGen = gen
	}
	m.mu.Unlock()
	return nil
}

// cacheWriter encodes the cache in pieces of up to 64 KiB, keeping the
// offset and the checksum of what it wrote.
type cacheWriter struct {
	w    *bufio.Writer
	buf  []byte
	n    int
	crc  uint32
	err  error
	ids  map[string]uint64
	strs []string
}

func (c *cacheWriter) flush() {
	if c.err == nil && len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
		c.crc = crc32.Update(c.crc, crcTable, c.buf)
		c.n += len(c.buf)
	}
	c.buf = c.buf[:0]
}

func (c *cacheWriter) uvarint(v uint64) { c.buf = binary.AppendUvarint(c.buf, v) }
func (c *cacheWriter) varint(v int64)   { c.buf = binary.AppendVarint(c.buf, v) }

func (c *cacheWriter) str(s string) {
	id, ok := c.ids[s]
	if !ok {
		id = uint64(len(c.strs))
		c.ids[s] = id
		c.strs = append(c.strs, s)
	}
	c.uvarint(id)
}

func flags(bits ...bool) uint64 {
	var f uint64
	for i, b := range bits {
		if b {
			f |= 1 << i
		}
	}
	return f
}

func encodeCache(w *bufio.Writer, version string, entries []*entry) error {
	c := &cacheWriter{w: w, buf: make([]byte, 0, 1<<17), ids: map[string]uint64{}}
	c.buf = append(c.buf, cacheMagic...)
	c.uvarint(uint64(len(version)))
	c.buf = append(c.buf, version...)
	c.uvarint(uint64(len(entries)))
	var main, blk []byte
	for len(entries) > 0 {
		n := min(len(entries), cacheBlock)
		main, c.buf = c.buf, blk[:0]
		c.encodeEntries(entries[:n])
		blk, c.buf = c.buf, main
		entries = entries[n:]
		c.uvarint(uint64(len(blk)))
		c.buf = append(c.buf, blk...)
		if len(c.buf) >= 1<<16 {
			c.flush()
		}
	}
	off := c.n + len(c.buf)
	c.uvarint(uint64(len(c.strs)))
	for _, s := range c.strs {
		c.uvarint(uint64(len(s)))
		if len(c.buf) >= 1<<16 {
			c.flush()
		}
	}
	for _, s := range c.strs {
		if len(s) >= 1<<16 {
			c.flush()
			if c.err == nil {
				_, c.err = c.w.WriteString(s)
				c.crc = crc32.Update(c.crc, crcTable, []byte(s))
				c.n += len(s)
			}
			continue
		}
		c.buf = append(c.buf, s...)
		if len(c.buf) >= 1<<16 {
			c.flush()
		}
	}
	c.buf = binary.LittleEndian.AppendUint64(c.buf, uint64(off))
	c.flush()
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], c.crc)
	if c.err == nil {
		_, c.err = w.Write(sum[:])
	}
	return c.err
}

// cacheBlock is the number of entries in a block of the entries section:
// blocks are framed by their length in bytes and decoded in parallel.
const cacheBlock = 512

// encodeEntries appends a block: its number of entries, then the entries.
func (c *cacheWriter) encodeEntries(entries []*entry) {
	c.uvarint(uint64(len(entries)))
	// The block's numbers of tagged files, definitions, references and
	// scopes: the reader allocates each kind once per block.
	var files, defs, refs, scopes int
	for _, e := range entries {
		if e.Tags != nil {
			files++
			defs += len(e.Tags.Defs)
			refs += len(e.Tags.Refs)
			scopes += len(e.Tags.Scopes)
		}
	}
	c.uvarint(uint64(files))
	c.uvarint(uint64(defs))
	c.uvarint(uint64(refs))
	c.uvarint(uint64(scopes))
	for _, e := range entries {
		c.str(e.Rel)
		c.varint(e.Size)
		c.varint(e.Mod)
		c.str(e.Hash)
		c.str(string(e.Skip))
		t := e.Tags
		if t == nil {
			c.uvarint(0)
			continue
		}
		c.uvarint(flags(true, t.SyntaxErrors))
		c.str(t.Language)
		c.str(t.Hash)
		c.varint(int64(t.Lines))
		c.str(t.Constraint)
		c.uvarint(uint64(len(t.Defs)))
		for i := range t.Defs {
			d := &t.Defs[i]
			c.str(d.Name())
			c.str(d.Kind())
			c.str(d.Scope())
			c.str(d.Signature())
			c.varint(int64(d.Line))
			c.varint(int64(d.EndLine - d.Line))
			c.varint(int64(d.NameLine - d.Line))
			c.varint(int64(d.Depth))
			c.uvarint(flags(d.TopLevel, d.Local, d.Private, d.Override, d.declQual, d.Deprecated))
			c.uvarint(uint64(d.declNest))
			c.uvarint(uint64(d.docLines))
		}
		c.uvarint(uint64(len(t.Refs)))
		for i := range t.Refs {
			r := &t.Refs[i]
			c.str(r.Name())
			c.varint(int64(r.Count))
			c.uvarint(flags(r.Member, r.Export))
		}
		c.uvarint(uint64(len(t.Scopes)))
		for i := range t.Scopes {
			s := &t.Scopes[i]
			c.str(s.Name)
			c.str(s.Signature)
			c.varint(int64(s.Line))
			c.varint(int64(s.EndLine - s.Line))
			c.varint(int64(s.Depth))
		}
		c.uvarint(uint64(len(t.Examples)))
		for _, x := range t.Examples {
			c.str(x.Name())
			c.varint(int64(x.Count))
		}
	}
}

var errCorrupt = errors.New("corrupt or truncated")

// cacheReader decodes the cache. A failure sets err and makes every later
// read return zeros, so a corrupt file ends the decoding without a panic.
type cacheReader struct {
	data []byte
	pos  int
	strs []string
	// ids are the string table's numbers of strs, taken when a record
	// first names one (shared by the blocks' readers; 0 until then).
	ids []atomic.Uint32
	err error
}

func (r *cacheReader) fail() {
	if r.err == nil {
		r.err = errCorrupt
	}
	r.pos = len(r.data)
}

func (r *cacheReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.data[r.pos:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.pos += n
	return v
}

func (r *cacheReader) varint() int64 {
	v, n := binary.Varint(r.data[r.pos:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.pos += n
	return v
}

func (r *cacheReader) int() int { return int(r.varint()) }

// count reads a number of records, each of which takes at least one byte.
func (r *cacheReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.data)-r.pos) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *cacheReader) str() string {
	id := r.uvarint()
	if id >= uint64(len(r.strs)) {
		r.fail()
		return ""
	}
	return r.strs[id]
}

// strID reads a string of a record (Def, Ref): its number in the string
// table.
func (r *cacheReader) strID() str {
	id := r.uvarint()
	if id >= uint64(len(r.strs)) {
		r.fail()
		return 0
	}
	if v := r.ids[id].Load(); v != 0 || r.strs[id] == "" {
		return str(v)
	}
	v := internStr(r.strs[id])
	r.ids[id].Store(uint32(v))
	return v
}

func decodeCache(data []byte, version string) ([]*entry, error) {
	const trailer = 12
	if len(data) < len(cacheMagic)+trailer || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, errCorrupt
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errCorrupt
	}
	off := binary.LittleEndian.Uint64(data[len(data)-trailer:])
	end := len(data) - trailer
	if off < uint64(len(cacheMagic)) || off > uint64(end) {
		return nil, errCorrupt
	}

	// The version first: another version's layout is not read further.
	r := &cacheReader{data: data[:off], pos: len(cacheMagic)}
	vl := r.count()
	if r.err != nil || string(r.data[r.pos:r.pos+vl]) != version {
		return nil, errors.New("version mismatch")
	}
	r.pos += vl

	// The string table: its lengths, then one string holding all of them.
	sr := &cacheReader{data: data[off:end]}
	n := sr.count()
	lens := make([]int, n)
	total := 0
	for i := range lens {
		l := sr.uvarint()
		if l > uint64(len(sr.data)) {
			sr.fail()
		}
		lens[i] = int(l)
		total += lens[i]
	}
	if sr.err != nil || total != len(sr.data)-sr.pos {
		return nil, errCorrupt
	}
	all := string(sr.data[sr.pos:])
	r.strs = make([]string, n)
	r.ids = make([]atomic.Uint32, n)
	for i, l := range lens {
		r.strs[i], all = all[:l], all[l:]
	}

	// The entries: find the blocks, then decode them in parallel, each
	// with its own reader over the shared string table.
	want := r.count()
	var blocks [][]byte
	for r.pos < len(r.data) && r.err == nil {
		l := r.count()
		blocks = append(blocks, r.data[r.pos:r.pos+l])
		r.pos += l
	}
	if r.err != nil {
		return nil, r.err
	}
	decoded := make([][]*entry, len(blocks))
	errs := make([]error, len(blocks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := min(runtime.GOMAXPROCS(0), len(blocks)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(blocks) {
					return
				}
				decoded[i], errs[i] = decodeBlock(blocks[i], r.strs, r.ids)
			}
		}()
	}
	wg.Wait()
	entries := make([]*entry, 0, want)
	for i, d := range decoded {
		if errs[i] != nil {
			return nil, errs[i]
		}
		entries = append(entries, d...)
	}
	if len(entries) != want {
		return nil, errCorrupt
	}
	return entries, nil
}

// decodeBlock decodes one block of entries; it must end with its data.
// The entries, tags, definitions, references and scopes of a block are
// each one allocation that the files' records slice (with their capacity
// cut to their length): few large objects are much cheaper to allocate
// and to scan than one small object per file. A file whose tags are
// replaced later leaves its part unused until its whole block is.
func decodeBlock(data []byte, strs []string, ids []atomic.Uint32) ([]*entry, error) {
	r := &cacheReader{data: data, strs: strs, ids: ids}
	n := r.count()
	b := &blockPools{
		entries: make([]entry, n),
		tags:    make([]FileTags, r.count()),
		defs:    make([]Def, r.count()),
		refs:    make([]Ref, r.count()),
		scopes:  make([]Scope, r.count()),
	}
	entries := make([]*entry, 0, n)
	for i := range b.entries {
		if r.err != nil {
			break
		}
		e := &b.entries[i]
		e.Rel, e.Size, e.Mod, e.Hash, e.Skip = r.str(), r.varint(), r.varint(), r.str(), SkipReason(r.str())
		if f := r.uvarint(); f&1 != 0 {
			e.Tags = r.tags(b, e.Rel, f)
		}
		if e.Rel == "" {
			r.fail()
		}
		entries = append(entries, e)
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.pos != len(r.data) || len(b.tags)+len(b.defs)+len(b.refs)+len(b.scopes) != 0 {
		return nil, errCorrupt
	}
	return entries, nil
}

// blockPools are what is left of a block's allocations.
type blockPools struct {
	entries []entry
	tags    []FileTags
	defs    []Def
	refs    []Ref
	scopes  []Scope
}

// take cuts the next n records off a pool; nil when n is 0 (as a parse
// leaves them), and a failure when the pool is short.
func take[T any](r *cacheReader, pool *[]T, n int) []T {
	if n == 0 || r.err != nil {
		return nil
	}
	if n > len(*pool) {
		r.fail()
		return nil
	}
	out := (*pool)[:n:n]
	*pool = (*pool)[n:]
	return out
}

func (r *cacheReader) tags(b *blockPools, rel string, f uint64) *FileTags {
	if len(b.tags) == 0 {
		r.fail()
		return nil
	}
	t := &b.tags[0]
	b.tags = b.tags[1:]
	t.Path, t.SyntaxErrors = rel, f&2 != 0
	t.Language = r.str()
	t.Hash = r.str()
	t.Lines = r.int()
	t.Constraint = r.str()
	t.Defs = take(r, &b.defs, r.count())
	for i := range t.Defs {
		d := &t.Defs[i]
		d.name, d.kind, d.scope, d.signature = r.strID(), r.strID(), r.strID(), r.strID()
		line := r.int()
		d.Line = int32(line)
		d.EndLine = int32(line + r.int())
		d.NameLine = int32(line + r.int())
		d.Depth = int16(r.int())
		fl := r.uvarint()
		d.TopLevel, d.Local, d.Private, d.Override, d.declQual, d.Deprecated = fl&1 != 0, fl&2 != 0, fl&4 != 0, fl&8 != 0, fl&16 != 0, fl&32 != 0
		d.declNest = uint16(r.uvarint())
		d.docLines = uint16(r.uvarint())
	}
	t.Refs = take(r, &b.refs, r.count())
	for i := range t.Refs {
		x := &t.Refs[i]
		x.name = r.strID()
		x.Count = refCount(r.varint())
		fl := r.uvarint()
		x.Member, x.Export = fl&1 != 0, fl&2 != 0
	}
	t.Scopes = take(r, &b.scopes, r.count())
	for i := range t.Scopes {
		s := &t.Scopes[i]
		s.Name, s.Signature = r.str(), r.str()
		s.Line = r.int()
		s.EndLine = s.Line + r.int()
		s.Depth = r.int()
	}
	if n := r.count(); n > 0 {
		t.Examples = make([]Ref, n)
		for i := range t.Examples {
			t.Examples[i] = Ref{name: r.strID(), Count: refCount(r.varint())}
		}
	}
	return t
}
