package redact

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
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

	mu     sync.RWMutex
	values map[string]string // value -> kind, written by AddValues
	sorted []string          // snapshot of values, longest first; rebuilt lazily
	kinds  map[string]string // snapshot of values; never written after publication
	vkinds map[string]bool   // snapshot of the kinds of values
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
// per process (~20 ms) and shared, so a Redactor per run is cheap.
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

func (r *Redactor) valueList() ([]string, map[string]string, map[string]bool) {
	r.mu.RLock()
	if !r.dirty {
		s, m, k := r.sorted, r.kinds, r.vkinds
		r.mu.RUnlock()
		return s, m, k
	}
	r.mu.RUnlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dirty {
		s := make([]string, 0, len(r.values))
		m := make(map[string]string, len(r.values))
		ks := map[string]bool{}
		for v, k := range r.values {
			s = append(s, v)
			m[v] = k
			ks[k] = true
		}
		sort.Slice(s, func(i, j int) bool {
			if len(s[i]) != len(s[j]) {
				return len(s[i]) > len(s[j])
			}
			return s[i] < s[j]
		})
		r.sorted, r.kinds, r.vkinds, r.dirty = s, m, ks, false
	}
	return r.sorted, r.kinds, r.vkinds
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
	prioGeneric = iota
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
		wins := r.kw.windows(s, r.rules)
		for _, i := range r.always {
			wins[i] = []window{{0, len(s)}}
		}
		if r.wholeText {
			for i := range wins {
				if len(wins[i]) > 0 {
					wins[i] = []window{{0, len(s)}}
				}
			}
		}
		for i, ws := range wins {
			for _, w := range ws {
				spans = r.applyRule(r.rules[i], s, w, spans)
			}
		}
	}
	vals, kinds, _ := r.valueList()
	for _, v := range vals {
		for off := 0; off < len(s); {
			j := strings.Index(s[off:], v)
			if j < 0 {
				break
			}
			st := off + j
			spans = append(spans, span{st, st + len(v), kinds[v], prioValue})
			off = st + len(v)
		}
	}
	return spans
}

func (r *Redactor) applyRule(ru *rule, s string, w window, spans []span) []span {
	var memo map[string]bool
	prio := prioRule
	if strings.HasPrefix(ru.id, "generic") {
		prio = prioGeneric
	}
	for _, m := range ru.re.FindAllStringSubmatchIndex(s[w.start:w.end], -1) {
		for k := range m {
			if m[k] >= 0 {
				m[k] += w.start
			}
		}
		if m[1] == w.end && w.end < len(s) {
			// The match reaches the window's edge: it may continue past
			// it. Match again from its start over the rest of the text.
			m2 := ru.re.FindStringSubmatchIndex(s[m[0]:])
			if m2 != nil && m2[0] == 0 {
				for k := range m2 {
					if m2[k] >= 0 {
						m2[k] += m[0]
					}
				}
				m = m2
			}
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
			continue
		}
		ss, se := ms, me
		if ru.secretGroup > 0 {
			g := ru.secretGroup
			if 2*g+1 >= len(m) || m[2*g] < 0 {
				continue
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
			continue
		}
		secret := s[ss:se]
		if ru.entropy > 0 && shannon(secret) <= ru.entropy {
			continue
		}
		if ru.needDigit && !hasDigit(secret) {
			continue
		}
		if strings.HasPrefix(secret, markerPrefix) {
			continue
		}
		match := s[ms:me]
		line := ""
		if ru.lineAllow {
			line = lineAround(s, ms, me)
		}
		if len(ru.allow) > 0 || len(r.global) > 0 {
			// Repeated matches (a token logged a thousand times) are
			// checked against the allowlists once per call.
			key := ""
			if !ru.lineAllow {
				key = match + "\x00" + strconv.Itoa(ss-ms) + "\x00" + strconv.Itoa(se-ms)
			}
			allowed, seen := memo[key]
			if key == "" || !seen {
				allowed = allowedBy(r.global, secret, match, line) || allowedBy(ru.allow, secret, match, line)
				if key != "" {
					if memo == nil {
						memo = map[string]bool{}
					}
					memo[key] = allowed
				}
			}
			if allowed {
				continue
			}
		}
		spans = append(spans, span{ss, se, ru.id, prio})
	}
	return spans
}

func allowedBy(lists []allowlist, secret, match, line string) bool {
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
	const lineCap = 4 << 10
	lo := max(0, start-lineCap)
	ls := lo
	if j := strings.LastIndexByte(s[lo:start], '\n'); j >= 0 {
		ls = lo + j + 1
	}
	hi := min(len(s), end+lineCap)
	le := hi
	if j := strings.IndexByte(s[end:hi], '\n'); j >= 0 {
		le = end + j
	}
	return s[ls:le]
}

// isKind reports whether kind is one this Redactor produces: a rule id or
// the kind of a registered value. Only such markers are left alone, so text
// cannot shield a secret by wrapping it as "[REDACTED:<secret>]".
func (r *Redactor) isKind(kind string, vkinds map[string]bool) bool {
	return ruleIDs[kind] || vkinds[kind]
}

// markers returns the spans of existing [REDACTED:kind] markers in s.
func (r *Redactor) markers(s string) []span {
	_, _, vkinds := r.valueList()
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
		if !r.isKind(kind, vkinds) {
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
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	out := spans[:0:0]
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
