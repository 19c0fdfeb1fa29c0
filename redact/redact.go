package redact

import (
	"cmp"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Finding is one redacted span. Start and End are byte offsets into the
// input of Redact; the secret itself is deliberately not kept.
type Finding struct {
	Kind  string // rule id ("aws-access-token", "private-key", …) or value kind ("env:OPENAI_API_KEY")
	Start int
	End   int
}

// Options configure a Redactor.
type Options struct {
	// Values maps a kind to exact secret values to mask, e.g.
	// {"env:OPENAI_API_KEY": {"sk-…"}}. Kinds without a prefix are used as is.
	Values map[string][]string
	// Environ, when set, is passed to FromEnv (typically os.Environ()).
	Environ []string
	// NoRules disables the pattern rules, leaving only exact values.
	NoRules bool
}

// Redactor masks secrets. It is safe for concurrent use; values may be
// added while other goroutines redact.
type Redactor struct {
	rules  []*rule
	global []allowlist
	kw     *keywordIndex
	always []int // rules without keywords
	// wholeText disables keyword windows (tests compare both paths).
	wholeText bool

	// parent, for a Fork, is the Redactor whose values also apply; the
	// values a run learns stay in the run's fork.
	parent *Redactor

	mu     sync.RWMutex
	values map[string]string // value -> kind, written by AddValues
	snap   *valueSet         // matcher over values; rebuilt lazily when dirty
	dirty  bool

	cmu    sync.Mutex
	counts map[string]int
}

var (
	compiledOnce   sync.Once
	compiledRules  []*rule
	compiledGlobal []allowlist
	compiledKW     *keywordIndex
	compiledErr    error
	ruleIDs        = map[string]bool{} // written once, in compiled
)

// compiled rules are immutable and shared by every Redactor.
func compiled() ([]*rule, []allowlist, *keywordIndex, error) {
	compiledOnce.Do(func() {
		rules, global, err := loadGitleaks()
		if err != nil {
			compiledErr = err
			return
		}
		rules = append(rules, cairnRules()...)
		for _, ru := range rules {
			prepareScan(ru)
		}
		compiledRules, compiledGlobal = rules, global
		compiledKW = newKeywordIndex(rules)
		for _, ru := range rules {
			ruleIDs[ru.id] = true
		}
	})
	return compiledRules, compiledGlobal, compiledKW, compiledErr
}

// New returns a Redactor with gitleaks' default rules, Cairn's
// supplementary rules and the values in opts. The rules are compiled once
// per process and shared, so a Redactor per run costs no compilation.
func New(opts Options) (*Redactor, error) {
	r := &Redactor{values: map[string]string{}, counts: map[string]int{}}
	if !opts.NoRules {
		rules, global, kw, err := compiled()
		if err != nil {
			return nil, err
		}
		r.rules, r.global, r.kw = rules, global, kw
		for i, ru := range rules {
			if len(ru.keywords) == 0 {
				r.always = append(r.always, i)
			}
		}
	}
	for kind, vs := range opts.Values {
		r.AddValues(kind, vs...)
	}
	if opts.Environ != nil {
		r.FromEnv(opts.Environ)
	}
	return r, nil
}

var (
	defaultOnce sync.Once
	defaultR    *Redactor
)

// Default returns a process-wide Redactor with the standard rules and the
// secret-looking variables of the process environment. It panics only if
// the embedded rules fail to compile, which the package tests rule out.
func Default() *Redactor {
	defaultOnce.Do(func() {
		r, err := New(Options{Environ: os.Environ()})
		if err != nil {
			panic(err)
		}
		defaultR = r
	})
	return defaultR
}

// MinValueLen is the shortest exact value AddValues accepts; shorter values
// would mask ordinary words.
const MinValueLen = 6

// AddValues registers exact secret values to be masked as [REDACTED:kind].
// Values shorter than MinValueLen, or blank, are ignored. Surrounding
// whitespace is trimmed. A value already registered keeps its first kind.
func (r *Redactor) AddValues(kind string, values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < MinValueLen || strings.Contains(v, "[REDACTED:") {
			continue
		}
		if _, ok := r.values[v]; ok {
			continue
		}
		r.values[v] = kind
		r.dirty = true
	}
}

// valueSet is an immutable snapshot of a Redactor's exact values: one
// Aho–Corasick automaton finds all of them in one pass, however many a
// session has learned.
type valueSet struct {
	ac     *acAutomaton
	kinds  []string        // pattern id -> kind
	vkinds map[string]bool // the kinds, for telling markers apart
}

func (r *Redactor) values0() *valueSet {
	r.mu.RLock()
	if !r.dirty {
		vs := r.snap
		r.mu.RUnlock()
		return vs
	}
	r.mu.RUnlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dirty {
		vals := make([]string, 0, len(r.values))
		for v := range r.values {
			vals = append(vals, v)
		}
		sort.Strings(vals)
		vs := &valueSet{kinds: make([]string, len(vals)), vkinds: map[string]bool{}}
		for i, v := range vals {
			vs.kinds[i] = r.values[v]
			vs.vkinds[r.values[v]] = true
		}
		vs.ac = newAC(vals, false)
		r.snap, r.dirty = vs, false
	}
	return r.snap
}

// valueSets returns the snapshots of r and its ancestors.
func (r *Redactor) valueSets() []*valueSet {
	var out []*valueSet
	for x := r; x != nil; x = x.parent {
		if vs := x.values0(); vs != nil {
			out = append(out, vs)
		}
	}
	return out
}

// Fork returns a Redactor with r's rules and values whose own learned
// values (AddValues on the fork) stay in the fork: a run learns the
// secrets it meets without teaching them to the rest of the session, and
// without slowing the session's other runs.
func (r *Redactor) Fork() *Redactor {
	return &Redactor{rules: r.rules, global: r.global, kw: r.kw, always: r.always, wholeText: r.wholeText,
		parent: r, values: map[string]string{}, counts: map[string]int{}}
}

// Counts returns how many spans of each kind this Redactor has masked.
func (r *Redactor) Counts() map[string]int {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	out := make(map[string]int, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

// Count returns how many spans of the given kind have been masked.
func (r *Redactor) Count(kind string) int {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	return r.counts[kind]
}

// Marker returns the replacement text for a kind.
func Marker(kind string) string { return "[REDACTED:" + kind + "]" }

const markerPrefix = "[REDACTED:"

// span priorities: exact values beat specific rules beat generic ones.
const (
	prioBroad = iota
	prioGeneric
	prioRule
	prioValue
)

type span struct {
	start, end int
	kind       string
	prio       int
}

// Redact returns s with every secret replaced by [REDACTED:<kind>], and the
// findings in input order. Overlapping matches are merged into one marker.
// Redacting the output again changes nothing.
func (r *Redactor) Redact(s string) (string, []Finding) {
	if r == nil || len(s) == 0 {
		return s, nil
	}
	spans := r.find(s)
	if len(spans) == 0 {
		return s, nil
	}
	spans = merge(spans, r.markers(s))
	if len(spans) == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	findings := make([]Finding, 0, len(spans))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Marker(sp.kind))
		last = sp.end
		findings = append(findings, Finding{Kind: sp.kind, Start: sp.start, End: sp.end})
	}
	b.WriteString(s[last:])
	r.cmu.Lock()
	for _, f := range findings {
		r.counts[f.Kind]++
	}
	r.cmu.Unlock()
	return b.String(), findings
}

// String is Redact without the findings.
func (r *Redactor) String(s string) string {
	out, _ := r.Redact(s)
	return out
}

// Contains reports whether s holds anything Redact would mask.
func (r *Redactor) Contains(s string) bool {
	if r == nil || len(s) == 0 {
		return false
	}
	return len(merge(r.find(s), r.markers(s))) > 0
}

// find collects candidate spans from rules and exact values.
func (r *Redactor) find(s string) []span {
	var spans []span
	if len(r.rules) > 0 {
		tp := windowsPool.Get().(*[][]window)
		if len(*tp) != len(r.rules) {
			*tp = make([][]window, len(r.rules))
		}
		wins := *tp
		defer func() {
			clear(wins)
			windowsPool.Put(tp)
		}()
		r.kw.windows(s, r.rules, wins)
		for _, i := range r.always {
			wins[i] = []window{{0, len(s)}}
		}
		for i, ws := range wins {
			if len(ws) == 0 {
				continue
			}
			if r.wholeText {
				// The reference the tests compare with: the rule's own
				// regexp over the whole text, as gitleaks runs it.
				ref := *r.rules[i]
				ref.scan, ref.leadMax = ref.re, 0
				spans = r.scanPiece(&ref, s, 0, len(s), len(s), spans, nil)
				continue
			}
			var cov *coverage
			if r.rules[i].broad {
				cov = &coverage{}
			}
			for _, w := range ws {
				spans = r.applyRule(r.rules[i], s, w, spans, cov)
			}
		}
	}
	if len(r.rules) > 0 {
		spans = pemBodies(s, spans)
	}
	for _, vs := range r.valueSets() {
		vs.ac.each(s, func(end int, id int32) bool {
			spans = append(spans, span{end - vs.ac.lens[id], end, vs.kinds[id], prioValue})
			return true
		})
	}
	return spans
}

// Pieces: a window is scanned in pieces of about rule.piece bytes, each
// read on to overlap bytes past its end, and only matches that start in a
// piece's own part are kept. Small inputs let Go's regexp use its
// backtracking engine, several times faster than its NFA on these rules.
const rematchCap = 64 << 10

func (r *Redactor) applyRule(ru *rule, s string, w window, spans []span, cov *coverage) []span {
	if ru.anchored != nil {
		return r.scanAnchored(ru, s, w, spans, cov)
	}
	if ru.after > 0 || ru.before > 0 {
		// PEM blocks: one scan; the reach was bounded by the window.
		return r.scanPiece(ru, s, w.start, w.end, w.end, spans, cov)
	}
	for a := w.start; a < w.end; {
		own := w.end
		if w.end-a > ru.piece+ru.overlap {
			own = cutPoint(s, a+ru.piece/2, a+ru.piece)
		}
		spans = r.scanPiece(ru, s, a, own, min(w.end, own+ru.overlap), spans, cov)
		a = own
	}
	return spans
}

// scanAnchored tries ru's anchored regexp at each place in w where one of
// its start literals occurs, left to right, skipping places inside the
// last match: the matches FindAll would give, without trying the
// positions where no match can start. At each place the rule's DFA first
// rules out, in one pass, the places where no match can start either
// (most keyword places of a keyword storm), before the regexp's
// backtracker would explore every way of splitting the text there.
func (r *Redactor) scanAnchored(ru *rule, s string, w window, spans []span, cov *coverage) []span {
	var starts []int
	ru.starts.each(s[w.start:w.end], func(end int, id int32) bool {
		starts = append(starts, w.start+end-ru.starts.lens[id])
		return true
	})
	slices.Sort(starts)
	k := keeper{r: r, ru: ru, s: s, cov: cov}
	next := -1
	for _, p := range starts {
		if p < next {
			continue
		}
		if ru.wordStart && p > 0 && isWordByte(s[p-1]) {
			continue
		}
		end := len(s)
		switch {
		case ru.after > 0:
			end = min(end, w.end)
		case ru.maxLen > 0:
			end = min(end, p+ru.maxLen+1)
		default:
			end = min(end, p+ru.overlap)
		}
		m := ru.anchoredAt(s, p, end)
		if m == nil {
			next = p + 1
			continue
		}
		shift(m, p)
		m = k.complete(m, end)
		next = max(m[1], p+1)
		spans = k.keep(m, spans)
	}
	return spans
}

// anchoredAt returns the submatches of ru.anchored on s[p:end] (offsets
// into it), or nil. The rule's DFA rules out most places first; the
// regexp then reads only up to one rune past the furthest end the DFA
// allows a match, which none of its matches reaches; a match that reaches
// the cut could be one the cut made, and is taken again on s[p:end].
func (ru *rule) anchoredAt(s string, p, end int) []int {
	cut := end
	if ru.possible != nil {
		if ru.after > 0 {
			// A PEM body may run on far past its first possible end.
			if !ru.possible.possible(s[p:end]) {
				return nil
			}
		} else {
			b := ru.possible.bound(s[p:end])
			if b < 0 {
				return nil
			}
			if p+b < end {
				_, size := utf8.DecodeRuneInString(s[p+b : end])
				cut = p + b + size
			}
		}
	}
	m := ru.anchored.FindStringSubmatchIndex(s[p:cut])
	if m != nil && cut < end && p+m[1] == cut {
		m = ru.anchored.FindStringSubmatchIndex(s[p:end])
	}
	return m
}

// cutPoint picks where a piece ends, in (lo, hi]: after a newline if there
// is one, else after a byte that is not part of a word (so that \b does not
// hold falsely at the next piece's start), else at a rune start.
func cutPoint(s string, lo, hi int) int {
	if j := strings.LastIndexByte(s[lo:hi], '\n'); j >= 0 {
		return lo + j + 1
	}
	for i := hi; i > lo; i-- {
		if !isWordByte(s[i-1]) && s[i-1] < utf8.RuneSelf {
			return i
		}
	}
	return runeStart(s, hi)
}

// scanPiece applies ru to s[start:end] and keeps the matches that start
// before own.
func (r *Redactor) scanPiece(ru *rule, s string, start, own, end int, spans []span, cov *coverage) []span {
	k := keeper{r: r, ru: ru, s: s, cov: cov}
	for _, m := range ru.scan.FindAllStringSubmatchIndex(s[start:end], -1) {
		shift(m, start)
		if m[0] >= own {
			break
		}
		spans = k.keep(k.complete(m, end), spans)
	}
	return spans
}

func shift(m []int, by int) {
	for i := range m {
		if m[i] >= 0 {
			m[i] += by
		}
	}
}

// keeper turns a rule's regexp matches into spans: it applies the secret
// group, entropy, digit and allowlist checks as gitleaks does.
type keeper struct {
	r    *Redactor
	ru   *rule
	s    string
	memo map[string]bool
	// lines: where line allowlists' literals occur in s (textLine).
	lines map[*matcher]*litHits
	line  textLine // the current match's
	// cov, for a broad rule, tells the secrets other rules already mask.
	cov *coverage
}

// coverage answers "is [start, end) inside one span of a rule that is not
// broad?" for a broad rule's candidate secrets. Such a candidate would
// change nothing in merge (the span's kind wins; its extent holds the
// candidate), so its entropy and allowlist checks are skipped: config
// lines matched by gitleaks' generic rule are not checked twice. Built
// once per rule and Redact call, from the spans found before it.
type coverage struct {
	built  bool
	starts []int // span starts, in order
	reach  []int // reach[i]: the furthest end of spans 0..i
}

func (c *coverage) covers(spans []span, start, end int) bool {
	if !c.built {
		c.built = true
		n := 0
		for _, sp := range spans {
			if sp.prio > prioBroad {
				n++
			}
		}
		own := make([]span, 0, n)
		for _, sp := range spans {
			if sp.prio > prioBroad {
				own = append(own, sp)
			}
		}
		slices.SortFunc(own, func(a, b span) int { return cmp.Compare(a.start, b.start) })
		c.starts, c.reach = make([]int, len(own)), make([]int, len(own))
		for i, sp := range own {
			c.starts[i], c.reach[i] = sp.start, sp.end
			if i > 0 {
				c.reach[i] = max(c.reach[i], c.reach[i-1])
			}
		}
	}
	// The last span starting at or before start.
	i, _ := slices.BinarySearch(c.starts, start+1)
	return i > 0 && c.reach[i-1] >= end
}

// complete finishes a match m found in s[:end]: one that reaches end may
// continue past it and is matched again from its start; a lazy leading
// class taken off the rule's regexp is put back.
func (k *keeper) complete(m []int, end int) []int {
	s, ru := k.s, k.ru
	if m[1] == end && end < len(s) {
		lim := len(s)
		if ru.after == 0 && ru.before == 0 {
			lim = min(len(s), m[0]+rematchCap)
		}
		if m2 := ru.scan.FindStringSubmatchIndex(s[m[0]:lim]); m2 != nil && m2[0] == 0 {
			shift(m2, m[0])
			m = m2
		}
	}
	if ru.leadMax > 0 {
		m[0] = ru.extendLead(s, m[0])
	}
	return m
}

func (k *keeper) keep(m []int, spans []span) []span {
	s, ru, r := k.s, k.ru, k.r
	if ru.lineStart && !blankBefore(s, m[0]) {
		return spans
	}
	prio := prioRule
	if ru.broad {
		prio = prioBroad
	} else if strings.HasPrefix(ru.id, "generic") {
		prio = prioGeneric
	}
	ms, me := m[0], m[1]
	// gitleaks trims newlines from the match.
	for me > ms && s[me-1] == '\n' {
		me--
	}
	for ms < me && s[ms] == '\n' {
		ms++
	}
	if ms >= me {
		return spans
	}
	ss, se := ms, me
	if ru.secretGroup > 0 {
		g := ru.secretGroup
		if 2*g+1 >= len(m) || m[2*g] < 0 {
			return spans
		}
		ss, se = m[2*g], m[2*g+1]
	} else {
		for g := 1; 2*g+1 < len(m); g++ {
			if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
				ss, se = m[2*g], m[2*g+1]
				break
			}
		}
	}
	ss, se = max(ss, ms), min(se, me)
	if ss >= se {
		return spans
	}
	if k.cov != nil && k.cov.covers(spans, ss, se) {
		return spans
	}
	secret := s[ss:se]
	if ru.entropy > 0 && shannon(secret) <= ru.entropy {
		return spans
	}
	if ru.needDigit && !hasDigit(secret) {
		return spans
	}
	if strings.HasPrefix(secret, markerPrefix) {
		return spans
	}
	match := s[ms:me]
	var line *textLine
	if ru.lineAllow {
		if k.lines == nil {
			k.lines = map[*matcher]*litHits{}
		}
		line = &k.line
		*line = textLine{s: s, hits: k.lines}
		line.start, line.end = lineBounds(s, ms, me)
	}
	if len(ru.allow) > 0 || len(r.global) > 0 {
		// Repeated matches (a token logged a thousand times) are checked
		// against the allowlists once per call.
		key := ""
		if !ru.lineAllow {
			key = match + "\x00" + strconv.Itoa(ss-ms) + "\x00" + strconv.Itoa(se-ms)
		}
		allowed, seen := k.memo[key]
		if key == "" || !seen {
			allowed = allowedBy(r.global, secret, match, line) || allowedBy(ru.allow, secret, match, line)
			if key != "" {
				if k.memo == nil {
					k.memo = map[string]bool{}
				}
				k.memo[key] = allowed
			}
		}
		if allowed {
			return spans
		}
	}
	return append(spans, span{ss, se, ru.id, prio})
}

func allowedBy(lists []allowlist, secret, match string, line *textLine) bool {
	for i := range lists {
		if lists[i].allowed(secret, match, line) {
			return true
		}
	}
	return false
}

// lineAround returns the line(s) holding s[start:end], at most lineCap
// bytes either side (allowlists with regexTarget "line" look at it).
func lineAround(s string, start, end int) string {
	ls, le := lineBounds(s, start, end)
	return s[ls:le]
}

// lineBounds returns where lineAround's text starts and ends in s.
func lineBounds(s string, start, end int) (ls, le int) {
	const lineCap = 4 << 10
	lo := max(0, start-lineCap)
	ls = lo
	if j := strings.LastIndexByte(s[lo:start], '\n'); j >= 0 {
		ls = lo + j + 1
	}
	hi := min(len(s), end+lineCap)
	le = hi
	if j := strings.IndexByte(s[end:hi], '\n'); j >= 0 {
		le = end + j
	}
	return ls, le
}

// isKind reports whether kind is one this Redactor produces: a rule id or
// the kind of a registered value. Only such markers are left alone, so text
// cannot shield a secret by wrapping it as "[REDACTED:<secret>]".
func (r *Redactor) isKind(kind string, vsets []*valueSet) bool {
	if ruleIDs[kind] {
		return true
	}
	for _, vs := range vsets {
		if vs.vkinds[kind] {
			return true
		}
	}
	return false
}

// markers returns the spans of existing [REDACTED:kind] markers in s.
func (r *Redactor) markers(s string) []span {
	vsets := r.valueSets()
	var out []span
	for off := 0; ; {
		i := strings.Index(s[off:], markerPrefix)
		if i < 0 {
			return out
		}
		st := off + i
		j := strings.IndexByte(s[st+len(markerPrefix):], ']')
		if j < 0 {
			return out
		}
		en := st + len(markerPrefix) + j + 1
		kind := s[st+len(markerPrefix) : en-1]
		if !r.isKind(kind, vsets) {
			off = st + len(markerPrefix)
			continue
		}
		out = append(out, span{st, en, kind, -1})
		off = en
	}
}

// merge sorts spans, merges overlapping ones (keeping the kind of the
// highest-priority, then longest, member), widens any span that cuts into
// an existing marker to cover it, and drops spans wholly inside a marker.
func merge(spans, marks []span) []span {
	if len(spans) == 0 {
		return nil
	}
	// Stable: of equal spans, the first rule's kind is kept.
	slices.SortStableFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return cmp.Compare(a.start, b.start)
		}
		return cmp.Compare(b.end, a.end)
	})
	out := make([]span, 0, len(spans))
	for _, sp := range spans {
		if n := len(out); n > 0 && sp.start < out[n-1].end {
			cur := &out[n-1]
			if sp.prio > cur.prio || (sp.prio == cur.prio && sp.end-sp.start > cur.end-cur.start) {
				cur.kind, cur.prio = sp.kind, sp.prio
			}
			cur.end = max(cur.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	if len(marks) == 0 {
		return out
	}
	// Markers are sorted and disjoint.
	res := out[:0]
	mi := 0
	for _, sp := range out {
		for mi < len(marks) && marks[mi].end <= sp.start {
			mi++
		}
		inside := false
		for k := mi; k < len(marks) && marks[k].start < sp.end; k++ {
			m := marks[k]
			if m.start <= sp.start && sp.end <= m.end {
				inside = true
				break
			}
			sp.start, sp.end = min(sp.start, m.start), max(sp.end, m.end)
		}
		if inside {
			continue
		}
		if n := len(res); n > 0 && sp.start < res[n-1].end {
			res[n-1].end = max(res[n-1].end, sp.end)
			continue
		}
		res = append(res, sp)
	}
	return res
}

// blankBefore reports whether only spaces and tabs stand between the start
// of the line holding s[i] and i.
func blankBefore(s string, i int) bool {
	for i > 0 {
		switch s[i-1] {
		case ' ', '\t':
			i--
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}
