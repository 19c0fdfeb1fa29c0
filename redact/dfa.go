package redact

import (
	"regexp/syntax"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// possibleDFA answers "can a match of this anchored regexp start at the
// beginning of s?" in one pass over the bytes of s, a table look-up per
// byte. Go's regexp has no DFA: its backtracker pays for every way a rule
// like gitleaks' generic-api-key (a keyword, up to 20 name characters, up
// to 3 quotes or blanks, an operator, up to 5 more, a value of 10 to 150)
// can split a text, at each keyword place of a keyword storm (one every
// few bytes), and almost all of them fail. The DFA rejects those places
// in linear time; the regexp runs only where it answers "maybe".
//
// It is a necessary condition, never a stronger one: ^ and $ (without
// (?m)), \A and \z hold only at the start and the end of the input, as in
// the regexp; other empty-width assertions (\b, \B, (?m)^, (?m)$) are
// taken to hold, so the
// set of texts it accepts contains every text the regexp matches (it
// answers as soon as a state can match). TestDFAPossible
// checks that on random and hostile text for every rule.
//
// States are built lazily, as texts reach them, over the equivalence
// classes of ASCII bytes the program tells apart; other runes are decoded
// and stepped without a table. Built states are published with atomic
// stores, so concurrent Redact calls read the table without a lock.
type possibleDFA struct {
	prog   *syntax.Prog
	class  [utf8.RuneSelf]uint8
	nclass int
	start  *dfaState

	mu     sync.Mutex
	states map[string]*dfaState
	limit  int // on len(states)
}

// maxDFAStates bounds the states a DFA keeps (a few hundred bytes each),
// and maxDFAStatesTotal those of all DFAs in the process, so their memory
// stays bounded (tens of MB) however hostile the texts; past them, new
// places are left to the regexp. The bounds sit well above what the
// hostile inputs of the benchmarks need (docs/benchmarks.md).
const (
	maxDFAStates      = 4096
	maxDFAStatesTotal = 1 << 16
)

var dfaStatesTotal atomic.Int64

type dfaState struct {
	pcs   []uint32 // rune-consuming instructions (and Match) live here
	match bool     // a match ends here
	// matchAtEnd: a match ends here if the input ends here.
	matchAtEnd bool
	next       []atomic.Pointer[dfaState]
}

// newPossibleDFA compiles expr (anchored by the caller's use: the DFA only
// ever starts at a text's first byte). It returns nil when expr does not
// compile.
func newPossibleDFA(expr string) *possibleDFA {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil
	}
	d := &possibleDFA{prog: prog, states: map[string]*dfaState{}, limit: maxDFAStates}
	// Two ASCII bytes are in one class when every rune instruction treats
	// them alike.
	sigs := map[string]uint8{}
	sig := make([]byte, 0, len(prog.Inst))
	for b := rune(0); b < utf8.RuneSelf; b++ {
		sig = sig[:0]
		for pc := range prog.Inst {
			if isRuneInst(&prog.Inst[pc]) {
				if runeMatches(&prog.Inst[pc], b) {
					sig = append(sig, 1)
				} else {
					sig = append(sig, 0)
				}
			}
		}
		c, ok := sigs[string(sig)]
		if !ok {
			c = uint8(len(sigs))
			sigs[string(sig)] = c
		}
		d.class[b] = c
	}
	d.nclass = len(sigs)
	d.mu.Lock()
	d.start = d.intern(d.closure([]uint32{uint32(prog.Start)}, true, false))
	d.mu.Unlock()
	if d.start == nil {
		return nil
	}
	return d
}

func isRuneInst(in *syntax.Inst) bool {
	switch in.Op {
	case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	}
	return false
}

func runeMatches(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return in.MatchRune(r)
}

// closure returns the instructions reachable from roots without consuming
// input, keeping those that consume a rune and Match, sorted by pc. Away
// from the start of the input, an assertion that holds only there (^
// without (?m), \A) fails; away from its end, one that holds only there ($
// without (?m), \z) is kept, to be followed if the input ends.
func (d *possibleDFA) closure(roots []uint32, atStart, atEnd bool) []uint32 {
	seen := make([]bool, len(d.prog.Inst))
	stack := append([]uint32(nil), roots...)
	var out []uint32
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstEmptyWidth:
			op := syntax.EmptyOp(in.Arg)
			if !atStart && op&syntax.EmptyBeginText != 0 {
				continue // holds only at the start of the input
			}
			if !atEnd && op&syntax.EmptyEndText != 0 {
				out = append(out, pc) // followed at the end of the input
				continue
			}
			// Other assertions are assumed to hold: a necessary condition.
			stack = append(stack, in.Out)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstFail:
		default: // rune instructions and Match
			out = append(out, pc)
		}
	}
	// Sorted, so that equal sets have equal keys.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j-1] > out[j]; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// intern returns the state for pcs, creating it; nil when the DFA is
// full. d.mu is held.
func (d *possibleDFA) intern(pcs []uint32) *dfaState {
	key := make([]byte, 0, 4*len(pcs))
	for _, pc := range pcs {
		key = append(key, byte(pc), byte(pc>>8), byte(pc>>16), byte(pc>>24))
	}
	if st, ok := d.states[string(key)]; ok {
		return st
	}
	if len(d.states) >= d.limit || dfaStatesTotal.Load() >= maxDFAStatesTotal {
		return nil
	}
	dfaStatesTotal.Add(1)
	st := &dfaState{pcs: pcs, next: make([]atomic.Pointer[dfaState], d.nclass)}
	var pending []uint32
	for _, pc := range pcs {
		switch in := &d.prog.Inst[pc]; in.Op {
		case syntax.InstMatch:
			st.match = true
		case syntax.InstEmptyWidth:
			pending = append(pending, in.Out)
		}
	}
	st.matchAtEnd = st.match
	for _, pc := range d.closure(pending, true, true) {
		if d.prog.Inst[pc].Op == syntax.InstMatch {
			st.matchAtEnd = true
		}
	}
	d.states[string(key)] = st
	return st
}

// step returns the state after st reads r (nil when the DFA is full).
func (d *possibleDFA) step(st *dfaState, r rune) []uint32 {
	var roots []uint32
	for _, pc := range st.pcs {
		in := &d.prog.Inst[pc]
		if isRuneInst(in) && runeMatches(in, r) {
			roots = append(roots, in.Out)
		}
	}
	return d.closure(roots, false, false)
}

// possible reports whether a match of the regexp may start at s[0] (s
// being all the input the regexp would see). false is certain: the
// regexp does not match s.
func (d *possibleDFA) possible(s string) bool {
	st := d.start
	for i := 0; i < len(s); {
		if st.match {
			return true
		}
		if len(st.pcs) == 0 {
			return false
		}
		if b := s[i]; b < utf8.RuneSelf {
			if nx := st.next[d.class[b]].Load(); nx != nil {
				st = nx
				i++
				continue
			}
		}
		nx, size := d.next(st, s[i:])
		if nx == nil {
			return true // too many states: let the regexp decide
		}
		st = nx
		i += size
	}
	return st.matchAtEnd
}

// next returns the state after st reads the first rune of s (nil when the
// DFA is full) and the rune's size, building the state if need be.
func (d *possibleDFA) next(st *dfaState, s string) (*dfaState, int) {
	if b := s[0]; b < utf8.RuneSelf {
		c := d.class[b]
		if nx := st.next[c].Load(); nx != nil {
			return nx, 1
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		nx := st.next[c].Load()
		if nx == nil {
			if nx = d.intern(d.step(st, rune(b))); nx != nil {
				st.next[c].Store(nx)
			}
		}
		return nx, 1
	}
	r, size := utf8.DecodeRuneInString(s)
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.intern(d.step(st, r)), size
}

// bound returns the furthest index of s at which a match of the regexp
// starting at s[0] may end, or -1 when none can. Every match the regexp
// finds in s ends at or before it, so the regexp may be run on a shorter
// input (see scanAnchored).
func (d *possibleDFA) bound(s string) int {
	st, last := d.start, -1
	for i := 0; ; {
		if st.match {
			last = i
		}
		if i == len(s) {
			if st.matchAtEnd {
				last = i
			}
			return last
		}
		if len(st.pcs) == 0 {
			return last
		}
		if b := s[i]; b < utf8.RuneSelf {
			if nx := st.next[d.class[b]].Load(); nx != nil {
				st = nx
				i++
				continue
			}
		}
		nx, size := d.next(st, s[i:])
		if nx == nil {
			return len(s) // too many states: no bound known
		}
		st = nx
		i += size
	}
}
