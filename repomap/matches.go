package repomap

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>

// The parts of tree-sitter's C API (lib/include/tree_sitter/api.h, linked
// into the binary by github.com/smacker/go-tree-sitter) that collecting a
// query's matches needs. The layouts are tree-sitter's ABI;
// TestMatchesAgreeWithBindings checks them against the Go bindings.
typedef struct { uint32_t row, column; } ts_point;
typedef struct { uint32_t context[4]; const void *id; const void *tree; } ts_node;
typedef struct { ts_node node; uint32_t index; } ts_capture;
typedef struct { uint32_t id; uint16_t pattern_index, capture_count; const ts_capture *captures; } ts_match;
typedef struct ts_query ts_query;
typedef struct ts_cursor ts_cursor;

extern ts_cursor *ts_query_cursor_new(void);
extern void ts_query_cursor_delete(ts_cursor *);
extern void ts_query_cursor_exec(ts_cursor *, const ts_query *, ts_node);
extern bool ts_query_cursor_next_match(ts_cursor *, ts_match *);
extern uint32_t ts_node_start_byte(ts_node);
extern uint32_t ts_node_end_byte(ts_node);
extern ts_point ts_node_start_point(ts_node);
extern ts_point ts_node_end_point(ts_node);

// cairn_matches runs query over the tree under root and writes every match
// into *buf (grown with realloc as needed) as flat uint32 records:
// pattern index, capture count, then per capture its capture id, start
// byte, end byte, start row, end row and end column. It returns the number
// of uint32s written, or -1 when memory ran out.
static long cairn_matches(ts_cursor *qc, const ts_query *q, ts_node root, uint32_t **buf, size_t *cap) {
	ts_query_cursor_exec(qc, q, root);
	size_t n = 0;
	ts_match m;
	while (ts_query_cursor_next_match(qc, &m)) {
		size_t need = n + 2 + 6 * (size_t)m.capture_count;
		if (need > *cap) {
			size_t c = *cap * 2;
			if (c < need) c = need + 1024;
			uint32_t *b = realloc(*buf, c * sizeof(uint32_t));
			if (b == NULL) return -1;
			*buf = b;
			*cap = c;
		}
		uint32_t *o = *buf + n;
		*o++ = m.pattern_index;
		*o++ = m.capture_count;
		for (uint16_t i = 0; i < m.capture_count; i++) {
			ts_node nd = m.captures[i].node;
			ts_point s = ts_node_start_point(nd), e = ts_node_end_point(nd);
			*o++ = m.captures[i].index;
			*o++ = ts_node_start_byte(nd);
			*o++ = ts_node_end_byte(nd);
			*o++ = s.row;
			*o++ = e.row;
			*o++ = e.column;
		}
		n = need;
	}
	return (long)n;
}

#ifdef __GLIBC__
#include <malloc.h>
static void cairn_trim(void) { malloc_trim(0); }
#else
static void cairn_trim(void) {}
#endif
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
)

// Collecting a file's tags through the Go bindings costs more than the
// query itself: every match allocates a QueryMatch, and every captured
// node a *Node kept in a per-tree map for the tree's life, and each node
// field read is a cgo call (on the Go tree: 0.9 GB allocated and 2 CPU-s
// for 6,500 files). A matcher runs the whole query in one cgo call and
// hands back plain numbers in a buffer it keeps between files.

// capture is one captured node of a match.
type capture struct {
	id                uint32 // capture id in the query
	start, end        uint32 // byte range
	startRow          uint32 // 0-based
	endRow, endColumn uint32
}

// endLine is the 1-based last line of the node: a node ending at column 0
// of a later row ends on the row before.
func (c *capture) endLine() int {
	if c.endColumn == 0 && c.endRow > c.startRow {
		return int(c.endRow)
	}
	return int(c.endRow) + 1
}

// text is the node's source text.
func (c *capture) text(content []byte) string { return string(c.bytes(content)) }

// bytes is the node's source text, not copied.
func (c *capture) bytes(content []byte) []byte { return content[c.start:c.end] }

// matcher is a tree-sitter query cursor and the buffer its matches are
// written to; one per worker (pooled per language), not safe for
// concurrent use.
type matcher struct {
	qc  *C.ts_cursor
	buf *C.uint32_t
	cap C.size_t

	captures []capture // the current match's, reused
	refs     []refHit  // extract's scratch, reused
}

func newMatcher() *matcher {
	m := &matcher{qc: C.ts_query_cursor_new()}
	runtime.SetFinalizer(m, (*matcher).free)
	return m
}

func (m *matcher) free() {
	C.ts_query_cursor_delete(m.qc)
	C.free(unsafe.Pointer(m.buf))
}

// The bindings keep the C pointers in unexported first fields: a Query
// starts with its *TSQuery, a Node with its TSNode value.
type bindingsQuery struct{ c *C.ts_query }
type bindingsNode struct{ c C.ts_node }

var errNoMemory = errors.New("repomap: out of memory collecting query matches")

// run executes q on the tree under root and calls fn for every match in
// the order tree-sitter gives them. The captures passed to fn are reused
// by the next call.
func (m *matcher) run(q *sitter.Query, root *sitter.Node, fn func(pattern uint16, cs []capture)) error {
	cq := (*bindingsQuery)(unsafe.Pointer(q)).c
	cn := (*bindingsNode)(unsafe.Pointer(root)).c
	n := C.cairn_matches(m.qc, cq, cn, &m.buf, &m.cap)
	runtime.KeepAlive(q)
	runtime.KeepAlive(root)
	if n < 0 {
		return errNoMemory
	}
	m.deliver(int(n), fn)
	return nil
}

// deliver hands the n uint32s of match records in the buffer to fn.
func (m *matcher) deliver(n int, fn func(pattern uint16, cs []capture)) {
	if n == 0 {
		return
	}
	flat := unsafe.Slice((*uint32)(unsafe.Pointer(m.buf)), n)
	for i := 0; i < len(flat); {
		pattern, count := uint16(flat[i]), int(flat[i+1])
		i += 2
		m.captures = m.captures[:0]
		for j := 0; j < count; j++ {
			r := flat[i : i+6 : i+6]
			m.captures = append(m.captures, capture{id: r[0], start: r[1], end: r[2], startRow: r[3], endRow: r[4], endColumn: r[5]})
			i += 6
		}
		fn(pattern, m.captures)
	}
}

// releaseCMemory hands the C heap's free memory back to the operating
// system. glibc keeps what tree-sitter freed (parse trees, parser stacks)
// in per-thread arenas, where after a build it would stay resident
// (about 40 MB on the Go tree).
func releaseCMemory() { C.cairn_trim() }
