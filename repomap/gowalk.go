package repomap

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

// The layouts of tree-sitter's node and tree cursor (lib/include/tree_sitter/
// api.h of the bundled runtime); TestGoWalkerAgreesWithQuery would fail on
// a mismatch long before a user could.
typedef struct { uint32_t row, column; } gw_point;
typedef struct { uint32_t context[4]; const void *id; const void *tree; } gw_node;
typedef struct { const void *tree; const void *id; uint32_t context[3]; } gw_cursor;
typedef struct gw_language gw_language;

extern uint16_t ts_language_symbol_for_name(const gw_language *, const char *, uint32_t, bool);
extern uint16_t ts_language_field_id_for_name(const gw_language *, const char *, uint32_t);
extern uint16_t ts_node_symbol(gw_node);
extern bool ts_node_is_null(gw_node);
extern gw_node ts_node_child_by_field_id(gw_node, uint16_t);
extern uint32_t ts_node_start_byte(gw_node);
extern uint32_t ts_node_end_byte(gw_node);
extern gw_point ts_node_start_point(gw_node);
extern gw_point ts_node_end_point(gw_node);
extern gw_cursor ts_tree_cursor_new(gw_node);
extern void ts_tree_cursor_delete(gw_cursor *);
extern void ts_tree_cursor_reset(gw_cursor *, gw_node);
extern gw_node ts_tree_cursor_current_node(const gw_cursor *);
extern uint16_t ts_tree_cursor_current_field_id(const gw_cursor *);
extern bool ts_tree_cursor_goto_first_child(gw_cursor *);
extern bool ts_tree_cursor_goto_next_sibling(gw_cursor *);
extern bool ts_tree_cursor_goto_parent(gw_cursor *);

// Node types, fields and captures of queries/go-tags.scm, looked up once.
enum {
	GS_FUNCTION_DECLARATION, GS_METHOD_DECLARATION, GS_TYPE_SPEC, GS_TYPE_ALIAS,
	GS_METHOD_ELEM, GS_CONST_DECLARATION, GS_VAR_DECLARATION, GS_CONST_SPEC,
	GS_VAR_SPEC, GS_IMPORT_SPEC, GS_QUALIFIED_TYPE, GS_SELECTOR_EXPRESSION,
	GS_CALL_EXPRESSION, GS_IDENTIFIER, GS_FIELD_IDENTIFIER, GS_TYPE_IDENTIFIER,
	GS_PACKAGE_IDENTIFIER, GS_PARAMETER_LIST, GS_STRUCT_TYPE, GS_INTERFACE_TYPE,
	GS_SOURCE_FILE, GS_COUNT
};
static const char *gw_symbol_names[GS_COUNT] = {
	"function_declaration", "method_declaration", "type_spec", "type_alias",
	"method_elem", "const_declaration", "var_declaration", "const_spec",
	"var_spec", "import_spec", "qualified_type", "selector_expression",
	"call_expression", "identifier", "field_identifier", "type_identifier",
	"package_identifier", "parameter_list", "struct_type", "interface_type",
	"source_file",
};
enum { GF_NAME, GF_RECEIVER, GF_TYPE, GF_PACKAGE, GF_OPERAND, GF_FIELD, GF_FUNCTION, GF_COUNT };
static const char *gw_field_names[GF_COUNT] = {
	"name", "receiver", "type", "package", "operand", "field", "function",
};
// Capture ids are passed in by the Go side in this order.
enum {
	GC_NAME, GC_DEF_FUNCTION, GC_RECEIVER, GC_DEF_METHOD, GC_DEF_STRUCT,
	GC_DEF_INTERFACE, GC_DEF_TYPE, GC_DEF_CONSTANT, GC_DEF_VARIABLE, GC_IMPORT,
	GC_QUALIFIER, GC_REF_TYPE, GC_REF_MEMBER, GC_REF_CALL, GC_COUNT
};

typedef struct {
	uint16_t sym[GS_COUNT];
	uint16_t fld[GF_COUNT];
	uint32_t cap[GC_COUNT];
} gw_ids;

// gw_lookup fills the symbol and field ids; false when the grammar lacks one.
static bool gw_lookup(const gw_language *l, gw_ids *ids) {
	for (int i = 0; i < GS_COUNT; i++) {
		ids->sym[i] = ts_language_symbol_for_name(l, gw_symbol_names[i], strlen(gw_symbol_names[i]), true);
		if (ids->sym[i] == 0) return false;
	}
	for (int i = 0; i < GF_COUNT; i++) {
		ids->fld[i] = ts_language_field_id_for_name(l, gw_field_names[i], strlen(gw_field_names[i]));
		if (ids->fld[i] == 0) return false;
	}
	return true;
}

// gw_out is the growing output: the flat records cairn_matches writes.
typedef struct {
	uint32_t **buf;
	size_t *cap;
	size_t n;
	bool oom;
} gw_out;

typedef struct { uint32_t id; gw_node node; } gw_cap;

static void gw_emit(gw_out *o, uint32_t pattern, const gw_cap *cs, int count) {
	size_t need = o->n + 2 + 6 * (size_t)count;
	if (need > *o->cap) {
		size_t c = *o->cap * 2;
		if (c < need) c = need + 1024;
		uint32_t *b = realloc(*o->buf, c * sizeof(uint32_t));
		if (b == NULL) { o->oom = true; return; }
		*o->buf = b;
		*o->cap = c;
	}
	uint32_t *w = *o->buf + o->n;
	*w++ = pattern;
	*w++ = (uint32_t)count;
	for (int i = 0; i < count; i++) {
		gw_point s = ts_node_start_point(cs[i].node), e = ts_node_end_point(cs[i].node);
		*w++ = cs[i].id;
		*w++ = ts_node_start_byte(cs[i].node);
		*w++ = ts_node_end_byte(cs[i].node);
		*w++ = s.row;
		*w++ = e.row;
		*w++ = e.column;
	}
	o->n = need;
}

// gw_field is the node's child in field f when it has type sym.
static bool gw_field(const gw_ids *ids, gw_node n, int f, int sym, gw_node *out) {
	gw_node c = ts_node_child_by_field_id(n, ids->fld[f]);
	if (ts_node_is_null(c) || ts_node_symbol(c) != ids->sym[sym]) return false;
	*out = c;
	return true;
}

// gw_spec_names emits one match per identifier in the name field of a
// var_spec, a field that may hold several. For a const_spec the query
// cursor matches only the first: the grammar puts the field on the whole
// list (field('name', commaSep1(...))), not on each name, and the walker
// gives what the query gives.
static void gw_spec_names(const gw_ids *ids, gw_cursor *sub, gw_node spec, uint32_t pattern, uint32_t defcap, bool first_only, gw_out *o) {
	ts_tree_cursor_reset(sub, spec);
	if (!ts_tree_cursor_goto_first_child(sub)) return;
	do {
		if (ts_tree_cursor_current_field_id(sub) != ids->fld[GF_NAME]) continue;
		gw_node c = ts_tree_cursor_current_node(sub);
		if (ts_node_symbol(c) != ids->sym[GS_IDENTIFIER]) continue;
		gw_cap cs[2] = {{defcap, spec}, {ids->cap[GC_NAME], c}};
		gw_emit(o, pattern, cs, 2);
		if (first_only) return;
	} while (ts_tree_cursor_goto_next_sibling(sub));
}

// gw_top emits the top-level const and var definitions of the file under
// root: patterns 7 and 8, (source_file (const_declaration (const_spec name:
// (identifier)))).
static void gw_top(const gw_ids *ids, gw_node file, gw_out *o) {
	gw_cursor decls = ts_tree_cursor_new(file), specs = ts_tree_cursor_new(file), names = ts_tree_cursor_new(file);
	if (ts_tree_cursor_goto_first_child(&decls)) {
		do {
			gw_node d = ts_tree_cursor_current_node(&decls);
			uint16_t s = ts_node_symbol(d);
			int spec, pattern;
			uint32_t defcap;
			if (s == ids->sym[GS_CONST_DECLARATION]) {
				spec = GS_CONST_SPEC, pattern = 7, defcap = ids->cap[GC_DEF_CONSTANT];
			} else if (s == ids->sym[GS_VAR_DECLARATION]) {
				spec = GS_VAR_SPEC, pattern = 8, defcap = ids->cap[GC_DEF_VARIABLE];
			} else {
				continue;
			}
			ts_tree_cursor_reset(&specs, d);
			if (!ts_tree_cursor_goto_first_child(&specs)) continue;
			do {
				gw_node sp = ts_tree_cursor_current_node(&specs);
				if (ts_node_symbol(sp) == ids->sym[spec]) gw_spec_names(ids, &names, sp, pattern, defcap, pattern == 7, o);
			} while (ts_tree_cursor_goto_next_sibling(&specs));
		} while (ts_tree_cursor_goto_next_sibling(&decls));
	}
	ts_tree_cursor_delete(&decls);
	ts_tree_cursor_delete(&specs);
	ts_tree_cursor_delete(&names);
}

// cairn_go_walk writes the matches of queries/go-tags.scm on the tree under
// root into *buf, as cairn_matches does, in one walk over the tree: the
// query cursor spends most of its time deciding, at every node, which of
// its patterns could start there, and this walk knows. The pattern indexes
// are the query file's order; TestGoWalkerAgreesWithQuery compares the two
// on real code. Returns the number of uint32s written, -1 out of memory.
static long cairn_go_walk(const gw_ids *ids, gw_node root, uint32_t **buf, size_t *cap) {
	gw_out o = {buf, cap, 0, false};
	gw_cursor c = ts_tree_cursor_new(root);
	const uint16_t *S = ids->sym;
	const uint32_t *C = ids->cap;
	for (;;) {
		gw_node n = ts_tree_cursor_current_node(&c);
		uint16_t s = ts_node_symbol(n);
		gw_node a, b;
		if (s == S[GS_TYPE_IDENTIFIER]) {
			gw_cap cs[1] = {{C[GC_REF_TYPE], n}};
			gw_emit(&o, 14, cs, 1);
		} else if (s == S[GS_SELECTOR_EXPRESSION]) {
			if (gw_field(ids, n, GF_FIELD, GS_FIELD_IDENTIFIER, &b)) {
				if (gw_field(ids, n, GF_OPERAND, GS_IDENTIFIER, &a)) {
					gw_cap cs[3] = {{C[GC_REF_MEMBER], n}, {C[GC_QUALIFIER], a}, {C[GC_NAME], b}};
					gw_emit(&o, 11, cs, 3);
				}
				gw_cap cs[2] = {{C[GC_REF_MEMBER], n}, {C[GC_NAME], b}};
				gw_emit(&o, 13, cs, 2);
			}
		} else if (s == S[GS_CALL_EXPRESSION]) {
			if (gw_field(ids, n, GF_FUNCTION, GS_IDENTIFIER, &a)) {
				gw_cap cs[2] = {{C[GC_REF_CALL], n}, {C[GC_NAME], a}};
				gw_emit(&o, 12, cs, 2);
			}
		} else if (s == S[GS_QUALIFIED_TYPE]) {
			if (gw_field(ids, n, GF_PACKAGE, GS_PACKAGE_IDENTIFIER, &a) && gw_field(ids, n, GF_NAME, GS_TYPE_IDENTIFIER, &b)) {
				gw_cap cs[3] = {{C[GC_REF_TYPE], n}, {C[GC_QUALIFIER], a}, {C[GC_NAME], b}};
				gw_emit(&o, 10, cs, 3);
			}
		} else if (s == S[GS_IMPORT_SPEC]) {
			gw_cap cs[1] = {{C[GC_IMPORT], n}};
			gw_emit(&o, 9, cs, 1);
		} else if (s == S[GS_FUNCTION_DECLARATION]) {
			if (gw_field(ids, n, GF_NAME, GS_IDENTIFIER, &a)) {
				gw_cap cs[2] = {{C[GC_DEF_FUNCTION], n}, {C[GC_NAME], a}};
				gw_emit(&o, 0, cs, 2);
			}
		} else if (s == S[GS_METHOD_DECLARATION]) {
			if (gw_field(ids, n, GF_RECEIVER, GS_PARAMETER_LIST, &a) && gw_field(ids, n, GF_NAME, GS_FIELD_IDENTIFIER, &b)) {
				gw_cap cs[3] = {{C[GC_DEF_METHOD], n}, {C[GC_RECEIVER], a}, {C[GC_NAME], b}};
				gw_emit(&o, 1, cs, 3);
			}
		} else if (s == S[GS_TYPE_SPEC]) {
			if (gw_field(ids, n, GF_NAME, GS_TYPE_IDENTIFIER, &a)) {
				gw_cap cs[2] = {{0, n}, {C[GC_NAME], a}};
				if (gw_field(ids, n, GF_TYPE, GS_STRUCT_TYPE, &b)) {
					cs[0].id = C[GC_DEF_STRUCT];
					gw_emit(&o, 2, cs, 2);
				} else if (gw_field(ids, n, GF_TYPE, GS_INTERFACE_TYPE, &b)) {
					cs[0].id = C[GC_DEF_INTERFACE];
					gw_emit(&o, 3, cs, 2);
				}
				cs[0].id = C[GC_DEF_TYPE];
				gw_emit(&o, 4, cs, 2);
			}
		} else if (s == S[GS_TYPE_ALIAS]) {
			if (gw_field(ids, n, GF_NAME, GS_TYPE_IDENTIFIER, &a)) {
				gw_cap cs[2] = {{C[GC_DEF_TYPE], n}, {C[GC_NAME], a}};
				gw_emit(&o, 5, cs, 2);
			}
		} else if (s == S[GS_METHOD_ELEM]) {
			if (gw_field(ids, n, GF_NAME, GS_FIELD_IDENTIFIER, &a)) {
				gw_cap cs[2] = {{C[GC_DEF_METHOD], n}, {C[GC_NAME], a}};
				gw_emit(&o, 6, cs, 2);
			}
		} else if (s == S[GS_SOURCE_FILE]) {
			gw_top(ids, n, &o);
		}
		if (o.oom) break;
		if (ts_tree_cursor_goto_first_child(&c)) continue;
		bool more = false;
		do {
			if (ts_tree_cursor_goto_next_sibling(&c)) { more = true; break; }
		} while (ts_tree_cursor_goto_parent(&c));
		if (!more) break;
	}
	ts_tree_cursor_delete(&c);
	return o.oom ? -1 : (long)o.n;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
)

// goWalker finds the matches of the Go tags query by walking the tree once
// (cairn_go_walk) rather than with tree-sitter's query cursor, which spent
// about 3 CPU-seconds of a cold build of the Go tree deciding at each of
// its nodes which patterns could start there. The query file stays the
// definition: the walker refuses to start unless the query has the
// patterns and captures it was written for, and
// TestGoWalkerAgreesWithQuery compares the tags of both on real code.
type goWalker struct {
	ids  C.gw_ids
	caps [len(goWalkerCaptures)]uint32 // the same ids, for goSyntax
}

// goWalkerCaptures are the capture names in the order cairn_go_walk's
// GC_* constants expect them.
var goWalkerCaptures = [...]string{
	"name", "definition.function", "receiver", "definition.method", "definition.struct",
	"definition.interface", "definition.type", "definition.constant", "definition.variable", "import",
	"qualifier", "reference.type", "reference.member", "reference.call",
}

// goWalkerPatterns is the number of patterns in queries/go-tags.scm that
// the walker implements.
const goWalkerPatterns = 15

// bindingsLanguage mirrors sitter.Language: its first field is the
// *TSLanguage.
type bindingsLanguage struct{ c *C.gw_language }

func newGoWalker(lang *sitter.Language, q *sitter.Query) (*goWalker, error) {
	if n := q.PatternCount(); n != goWalkerPatterns {
		return nil, fmt.Errorf("the Go tags query has %d patterns, the walker knows %d", n, goWalkerPatterns)
	}
	w := &goWalker{}
	cl := (*bindingsLanguage)(unsafe.Pointer(lang)).c
	ok := C.gw_lookup(cl, &w.ids)
	runtime.KeepAlive(lang)
	if !ok {
		return nil, fmt.Errorf("the Go grammar lacks a node type or field the walker needs")
	}
	byName := map[string]uint32{}
	for i := uint32(0); i < q.CaptureCount(); i++ {
		byName[q.CaptureNameForId(i)] = i
	}
	for i, name := range goWalkerCaptures {
		id, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("the Go tags query has no @%s capture", name)
		}
		w.ids.cap[i] = C.uint32_t(id)
		w.caps[i] = id
	}
	return w, nil
}

// run is matcher.run for the Go tags query, by walking the tree.
func (w *goWalker) run(m *matcher, root *sitter.Node, fn func(pattern uint16, cs []capture)) error {
	cn := (*bindingsNode)(unsafe.Pointer(root)).c
	n := C.cairn_go_walk(&w.ids, *(*C.gw_node)(unsafe.Pointer(&cn)), &m.buf, &m.cap)
	runtime.KeepAlive(root)
	if n < 0 {
		return errNoMemory
	}
	m.deliver(int(n), fn)
	return nil
}
