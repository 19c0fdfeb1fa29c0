package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
)

// The manifest file is a flat binary layout that decodes without
// reflection: a warm start reads it whole, checks its CRC and slices the
// paths, hashes and vocabulary out of a few large allocations.
//
//	magic "CAIRNMF\x00", uvarint manifestFileVersion
//	uvarint index FormatVersion, uvarint Docs
//	uvarint nTerms, then each term: uvarint len, bytes
//	uvarint nFiles, total path bytes, total hash bytes, total vocabulary bytes
//	then each file, paths in sorted order:
//	  uvarint shared prefix with the previous path, uvarint suffix len, suffix
//	  varint Size, varint Mod, byte flags (1: Binary, 2: has state, 4: has vocab)
//	  uvarint hash len, hash bytes (when it has state)
//	  uvarint vocab len, the file's packed vocabulary entry (when it has vocab)
//	CRC-32C of everything before it, 4 bytes little-endian
//
// manifestFileVersion versions this file alone: a change to it makes an old
// manifest unreadable, so the next reconcile re-reads every file, without
// rebuilding the index (FormatVersion).
const manifestFileVersion = 2 // 2: vocabulary entries packed (vocab.go)

const manifestMagic = "CAIRNMF\x00"

const (
	mfBinary = 1 << iota
	mfState
	mfVocab
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// encodeManifest lays out m; files with a vocabulary but no state (none
// today) are kept too.
func encodeManifest(m *manifest) []byte {
	paths := make([]string, 0, len(m.Files))
	for p := range m.Files {
		paths = append(paths, p)
	}
	for p := range m.Vocab {
		if _, ok := m.Files[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	size := 64 + len(m.Terms)*8
	for _, p := range paths {
		size += len(p)/2 + 96 + len(m.Vocab[p])
	}
	b := make([]byte, 0, size)
	b = append(b, manifestMagic...)
	b = binary.AppendUvarint(b, manifestFileVersion)
	b = binary.AppendUvarint(b, uint64(m.Version))
	b = binary.AppendUvarint(b, m.Docs)
	b = binary.AppendUvarint(b, uint64(len(m.Terms)))
	for _, t := range m.Terms {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	// The totals let the reader allocate each buffer once.
	var pathBytes, hashBytes, vocabBytes int
	for _, p := range paths {
		pathBytes += len(p)
		if st, ok := m.Files[p]; ok {
			hashBytes += len(st.Hash)
		}
		vocabBytes += len(m.Vocab[p])
	}
	b = binary.AppendUvarint(b, uint64(len(paths)))
	b = binary.AppendUvarint(b, uint64(pathBytes))
	b = binary.AppendUvarint(b, uint64(hashBytes))
	b = binary.AppendUvarint(b, uint64(vocabBytes))
	prev := ""
	for _, p := range paths {
		n := 0
		for n < len(p) && n < len(prev) && p[n] == prev[n] {
			n++
		}
		b = binary.AppendUvarint(b, uint64(n))
		b = binary.AppendUvarint(b, uint64(len(p)-n))
		b = append(b, p[n:]...)
		prev = p
		st, hasState := m.Files[p]
		enc, hasVocab := m.Vocab[p]
		var flags byte
		if hasState {
			flags |= mfState
			if st.Binary {
				flags |= mfBinary
			}
		}
		if hasVocab {
			flags |= mfVocab
		}
		b = binary.AppendVarint(b, st.Size)
		b = binary.AppendVarint(b, st.Mod)
		b = append(b, flags)
		if hasState {
			b = binary.AppendUvarint(b, uint64(len(st.Hash)))
			b = append(b, st.Hash...)
		}
		if hasVocab {
			b = binary.AppendUvarint(b, uint64(len(enc)))
			b = append(b, enc...)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

var errManifestCorrupt = errors.New("search manifest is damaged")

// mreader reads the manifest's fields; the first error sticks and every
// later read returns zero.
type mreader struct {
	b   []byte
	off int
	err error
}

func (r *mreader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at byte %d", errManifestCorrupt, what, r.off)
	}
}

func (r *mreader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad number")
		return 0
	}
	r.off += n
	return v
}

func (r *mreader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad number")
		return 0
	}
	r.off += n
	return v
}

// count reads a length that must fit in what is left, each item taking at
// least min bytes.
func (r *mreader) count(min int) int {
	v := r.uvarint()
	if r.err == nil && v > uint64(len(r.b)-r.off)/uint64(min) {
		r.fail("length past the end")
		return 0
	}
	return int(v)
}

func (r *mreader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b)-r.off {
		r.fail("length past the end")
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *mreader) byte1() byte {
	s := r.bytes(1)
	if s == nil {
		return 0
	}
	return s[0]
}

// decodeManifest parses what encodeManifest wrote. Anything short, damaged
// or of another file version is an error, never a partial manifest.
func decodeManifest(b []byte) (*manifest, error) {
	if len(b) < len(manifestMagic)+4 || string(b[:len(manifestMagic)]) != manifestMagic {
		return nil, fmt.Errorf("%w: not a manifest", errManifestCorrupt)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errManifestCorrupt)
	}
	r := &mreader{b: body, off: len(manifestMagic)}
	if v := r.uvarint(); r.err == nil && v != manifestFileVersion {
		return nil, fmt.Errorf("search manifest file version %d, want %d", v, manifestFileVersion)
	}
	m := &manifest{Version: int(r.uvarint()), Docs: r.uvarint()}
	nTerms := r.count(1)
	// The terms and the paths are substrings of one string each: two
	// allocations instead of one per string.
	start := r.off
	lens := make([]int, nTerms)
	for i := range lens {
		lens[i] = r.count(1)
		r.bytes(lens[i])
	}
	if r.err != nil {
		return nil, r.err
	}
	m.Terms = make([]string, nTerms)
	all := string(body[start:r.off])
	off := 0
	for i, n := range lens {
		off += uvarintLen(uint64(n))
		m.Terms[i] = all[off : off+n]
		off += n
	}
	nFiles := r.count(4)
	m.Files = make(map[string]fileState, nFiles)
	m.Vocab = make(map[string][]byte, nFiles)
	// Each hash and vocabulary byte takes a byte of the file; paths share
	// prefixes, so a damaged total is only clamped (a wrong one fails the
	// check after the files).
	pathTotal := r.uvarint()
	hashTotal := r.count(1)
	vocabTotal := r.count(1)
	if r.err != nil {
		return nil, r.err
	}
	pathBuf := make([]byte, 0, min(pathTotal, 64*uint64(len(body))))
	hashBuf := make([]byte, 0, hashTotal)
	vocabBuf := make([]byte, 0, vocabTotal)
	type rec struct {
		pathEnd, hashEnd int
		st               fileState
		flags            byte
		vstart, vend     int
	}
	recs := make([]rec, nFiles)
	prevStart := 0
	for i := range recs {
		shared := int(r.uvarint())
		n := r.count(1)
		if r.err == nil && shared > len(pathBuf)-prevStart {
			r.fail("path prefix longer than the previous path")
		}
		if r.err != nil {
			return nil, r.err
		}
		prev := pathBuf[prevStart:]
		prevStart = len(pathBuf)
		pathBuf = append(pathBuf, prev[:shared]...)
		pathBuf = append(pathBuf, r.bytes(n)...)
		rc := &recs[i]
		rc.pathEnd = len(pathBuf)
		rc.st.Size = r.varint()
		rc.st.Mod = r.varint()
		rc.flags = r.byte1()
		rc.st.Binary = rc.flags&mfBinary != 0
		if rc.flags&mfState != 0 {
			hashBuf = append(hashBuf, r.bytes(r.count(1))...)
		}
		rc.hashEnd = len(hashBuf)
		rc.vstart = len(vocabBuf)
		if rc.flags&mfVocab != 0 {
			vocabBuf = append(vocabBuf, r.bytes(r.count(1))...)
		}
		rc.vend = len(vocabBuf)
		if r.err != nil {
			return nil, r.err
		}
	}
	if uint64(len(pathBuf)) != pathTotal || len(hashBuf) != hashTotal || len(vocabBuf) != vocabTotal {
		return nil, fmt.Errorf("%w: totals do not match the files", errManifestCorrupt)
	}
	if r.off != len(body) {
		return nil, fmt.Errorf("%w: %d bytes after the last file", errManifestCorrupt, len(body)-r.off)
	}
	paths, hashes := string(pathBuf), string(hashBuf)
	pathStart, hashStart := 0, 0
	for _, rc := range recs {
		p := paths[pathStart:rc.pathEnd]
		pathStart = rc.pathEnd
		if rc.flags&mfState != 0 {
			rc.st.Hash = hashes[hashStart:rc.hashEnd]
			m.Files[p] = rc.st
		}
		hashStart = rc.hashEnd
		if rc.flags&mfVocab != 0 {
			m.Vocab[p] = vocabBuf[rc.vstart:rc.vend:rc.vend]
		}
	}
	return m, nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
