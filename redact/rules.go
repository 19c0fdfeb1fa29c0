package redact

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// GitleaksVersion is the gitleaks release whose default rule set is embedded
// (config/gitleaks.toml, converted to JSON by gen-rules.sh).
const GitleaksVersion = "v8.30.1"

//go:generate sh ./gen-rules.sh

//go:embed gitleaks-rules.json
var gitleaksRulesJSON []byte

// The subset of the gitleaks configuration schema that applies to text that
// has no file path or commit: path-only rules and path/commit allowlists are
// skipped.
type glConfig struct {
	Allowlist glAllowlist `json:"allowlist"`
	Rules     []glRule    `json:"rules"`
}

type glRule struct {
	ID          string        `json:"id"`
	Regex       string        `json:"regex"`
	SecretGroup int           `json:"secretGroup"`
	Entropy     float64       `json:"entropy"`
	Keywords    []string      `json:"keywords"`
	Path        string        `json:"path"`
	Allowlists  []glAllowlist `json:"allowlists"`
}

type glAllowlist struct {
	Condition   string   `json:"condition"`
	Paths       []string `json:"paths"`
	Commits     []string `json:"commits"`
	RegexTarget string   `json:"regexTarget"`
	Regexes     []string `json:"regexes"`
	StopWords   []string `json:"stopwords"`
}

// rule is one compiled detection rule.
type rule struct {
	id          string
	re          *regexp.Regexp
	secretGroup int
	entropy     float64
	keywords    []string // lower case; empty means always run
	allow       []allowlist
	// minDigits requires the secret to contain a digit (used by Cairn's
	// own supplementary rules to avoid flagging identifiers).
	needDigit bool
	// after, when set, is how far past a keyword hit the rule's regex
	// may reach (PEM blocks span lines); otherwise matches are line-local.
	after int
	// scan is the regexp find runs: re, or re without a lazy leading
	// class (leadClass, at most leadMax runes), put back by extendLead.
	scan      *regexp.Regexp
	leadClass []rune
	leadMax   int
	// anchored is scan anchored at its start, tried only where one of
	// starts (the literals every match begins with) occurs.
	anchored *regexp.Regexp
	starts   *acAutomaton
	// wordStart: anchored begins with \b, so a place whose previous byte
	// is a word character cannot start a match.
	wordStart bool
	// possible, when set, rejects in one pass over the bytes the places
	// where anchored cannot match (possibleDFA).
	possible *possibleDFA
	// piece and overlap: find scans long windows in pieces (applyRule).
	piece, overlap int
	// maxLen bounds the length of a match in bytes (0: unbounded); find
	// scans only that far around a keyword and in pieces of that order.
	maxLen int
	// before, when set, is how far before a keyword hit a match may start
	// (a private key's body ahead of its END line).
	before int
	// lineStart keeps only matches with nothing but blanks before them
	// on their line (a `^[ \t]*` the regexp itself does not carry, so that
	// it can be tried where its keywords are).
	lineStart bool
	// broad marks Cairn's catch-all rules: where gitleaks' own generic
	// rule finds the same secret, its kind is kept.
	broad bool
	// lineAllow is set when an allowlist of the rule (or the global one)
	// targets the whole line, which is then computed for each match.
	lineAllow bool
}

// pemReach is the forward reach of private-key rules: larger than any
// PEM-encoded private key.
const pemReach = 64 << 10

type allowlist struct {
	target string // "", "match" or "line"
	re     *matcher
	stop   *acAutomaton // stopwords, matched case-insensitively
}

func (a *allowlist) allowed(secret, match string, line *textLine) bool {
	switch a.target {
	case "match":
		if match != "" && a.re.match(match) {
			return true
		}
	case "line":
		if line != nil && line.start < line.end && a.re.matchLine(line) {
			return true
		}
	default:
		if secret != "" && a.re.match(secret) {
			return true
		}
	}
	return a.stop != nil && secret != "" && a.stop.containsAny(secret)
}

func compileAllowlist(a glAllowlist) (allowlist, bool, error) {
	// An allowlist that needs a path or a commit (condition AND) can never
	// hold for free text; regex-less, stopword-less lists are path-only.
	if strings.EqualFold(a.Condition, "AND") && (len(a.Paths) > 0 || len(a.Commits) > 0) {
		return allowlist{}, false, nil
	}
	if len(a.Regexes) == 0 && len(a.StopWords) == 0 {
		return allowlist{}, false, nil
	}
	out := allowlist{target: a.RegexTarget}
	if len(a.Regexes) > 0 {
		m, err := newMatcher(a.Regexes)
		if err != nil {
			return allowlist{}, false, err
		}
		out.re = m
	}
	if len(a.StopWords) > 0 {
		out.stop = newAC(a.StopWords, true)
	}
	return out, true, nil
}

// loadGitleaks compiles the embedded gitleaks default rules and its global
// allowlist.
func loadGitleaks() ([]*rule, []allowlist, error) {
	var cfg glConfig
	if err := json.Unmarshal(gitleaksRulesJSON, &cfg); err != nil {
		return nil, nil, fmt.Errorf("redact: embedded gitleaks rules: %w", err)
	}
	var global []allowlist
	if a, ok, err := compileAllowlist(cfg.Allowlist); err != nil {
		return nil, nil, fmt.Errorf("redact: gitleaks global allowlist: %w", err)
	} else if ok {
		global = append(global, a)
	}
	rules := make([]*rule, 0, len(cfg.Rules))
	for _, gr := range cfg.Rules {
		if gr.Regex == "" || gr.Path != "" {
			continue // path rules need a file name; Cairn redacts text
		}
		re, err := regexp.Compile(gr.Regex)
		if err != nil {
			return nil, nil, fmt.Errorf("redact: gitleaks rule %s: %w", gr.ID, err)
		}
		r := &rule{id: gr.ID, re: re, secretGroup: gr.SecretGroup, entropy: gr.Entropy}
		for _, k := range gr.Keywords {
			k = strings.ToLower(k)
			r.keywords = append(r.keywords, k)
			if strings.HasPrefix(k, "-----begin") {
				r.after = pemReach
			}
		}
		for _, ga := range gr.Allowlists {
			a, ok, err := compileAllowlist(ga)
			if err != nil {
				return nil, nil, fmt.Errorf("redact: gitleaks rule %s allowlist: %w", gr.ID, err)
			}
			if ok {
				r.allow = append(r.allow, a)
			}
		}
		rules = append(rules, r)
	}
	for _, r := range rules {
		for _, a := range append(append([]allowlist(nil), global...), r.allow...) {
			if a.target == "line" {
				r.lineAllow = true
			}
		}
	}
	return rules, global, nil
}

// placeholder matches values that are references or templates rather than
// secrets: $VAR, ${VAR}, {{ x }}, <password>, %s, ****, and Cairn's own marker.
const placeholderExpr = `^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|<[^<>]*>|%[a-z]|\*+|x+|X+|\.\.\.|\[REDACTED:[^\]]*\])$`

var placeholder = regexp.MustCompile(placeholderExpr)

// mustMatcher compiles Cairn's own allowlist expressions; they are
// constants, so a failure is a programming error caught by every test.
func mustMatcher(exprs ...string) *matcher {
	m, err := newMatcher(exprs)
	if err != nil {
		panic(err)
	}
	return m
}

// cairnRules supplement gitleaks where its rules are deliberately narrow
// (gitleaks targets committed files, Cairn also scrubs logs, traces and
// tool output). Each is listed with why.
func cairnRules() []*rule {
	ph := allowlist{re: mustMatcher(placeholderExpr)}
	return []*rule{
		{
			// Credentials in URLs and connection strings: postgres://u:p@h,
			// mysql, mongodb+srv, redis://:p@h, amqp, https://u:p@h.
			// gitleaks only has vendor-specific variants (sidekiq).
			// Only the password is masked; scheme, user and host stay.
			// Unbounded repetitions keep the compiled program small (Go's
			// regexp cost is input length times program size).
			id:          "url-password",
			re:          regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s:/?#@'"\x60<>]*:([^\s/?#@'"\x60<>]+)@[\w\[\]%.-]`),
			secretGroup: 1,
			keywords:    []string{"://"},
			allow:       []allowlist{ph},
		},
		{
			// OpenAI-style keys that lack the T3BlbkFJ marker gitleaks
			// requires (older/shorter keys, OpenAI-compatible providers) and
			// Anthropic key formats other than api03/admin01.
			id:        "llm-api-key",
			re:        regexp.MustCompile(`\b(sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9][A-Za-z0-9_-]{19,250})`),
			entropy:   3.5,
			keywords:  []string{"sk-"},
			needDigit: true,
		},
		{
			// HTTP Authorization headers as they appear in traces and logs.
			id:          "authorization-header",
			re:          regexp.MustCompile(`(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|bot)\s+([A-Za-z0-9._~+/=-]{12,})`),
			secretGroup: 1,
			entropy:     3,
			keywords:    []string{"authorization"},
			allow:       []allowlist{ph},
		},
		{
			// A private key read from its second line on (read_file with a
			// startLine, tail): no BEGIN line, only the base64 body and the
			// END line. The body ahead of END is masked.
			id:       "private-key",
			re:       regexp.MustCompile(`(?:[A-Za-z0-9+/=]{16,}\r?\n)+-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`),
			keywords: []string{"-----end"},
			before:   pemReach,
		},
		{
			// .netrc entries: "machine h login u password p" on one line,
			// or a login line followed by a password line.
			id:       "netrc-password",
			broad:    true,
			re:       regexp.MustCompile(`(?i)\b(?:machine|default|login)[ \t]+\S+(?:[ \t]+login[ \t]+\S+)?[ \t]+password[ \t]+(\S+)|(?im)^[ \t]*login[ \t]+\S+[ \t]*\r?\n[ \t]*password[ \t]+(\S+)`),
			keywords: []string{"machine", "login"},
			allow:    []allowlist{ph},
		},
		{
			// A quoted string assigned to a secret-named identifier: Django's
			// SECRET_KEY = 'django-insecure-…', password = "…" in code and
			// config. gitleaks' generic rule stops at the punctuation such
			// values hold; entropy keeps ordinary words out.
			id:       "quoted-secret",
			broad:    true,
			re:       regexp.MustCompile(`(?i)[\w.-]{0,60}?(?:secret[_-]?key|password|passwd|api[_-]?key|auth[_-]?token|access[_-]?token|private[_-]?key|client[_-]?secret)[\w.-]*["']?[ \t]*(?:=|:|:=|=>)[ \t]*[rbuf]?(?:'([^'\n\\]{8,200})'|"([^"\n\\]{8,200})")`),
			entropy:  3,
			keywords: []string{"secret", "password", "passwd", "key", "token"},
			// Words and identifiers ("encodeUserPassword", "not set") are
			// names and messages in code, not secrets.
			allow: []allowlist{ph, {re: mustMatcher(`^[A-Za-z_][A-Za-z_ .-]*$`)}},
		},
		{
			// XML configuration: <password>…</password>, <apiKey>…</apiKey>.
			id:          "xml-secret",
			broad:       true,
			re:          regexp.MustCompile(`(?i)<([\w.:-]*(?:password|passwd|secret|api[_-]?key|access[_-]?key|token))>[ \t\r\n]*([^<\s][^<]{2,200}?)[ \t\r\n]*</`),
			secretGroup: 2,
			keywords:    []string{"password>", "passwd>", "secret>", "key>", "token>"},
			allow:       []allowlist{ph},
		},
		{
			// Passwords on command lines: mysql -pPASS, --password=PASS,
			// --password PASS.
			id:       "cli-password",
			broad:    true,
			re:       regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlsh|mariadb)\b[^\n|;&]*?[ \t]-p([^\s'"-][^\s'"]*|'[^'\n]+'|"[^"\n]+")|(?i)--password[= ]('[^'\n]+'|"[^"\n]+"|[^\s'"-][^\s'"]*)`),
			keywords: []string{"mysql", "mariadb", "--password"},
			allow:    []allowlist{ph},
		},
		{
			// Java properties and YAML: spring.datasource.password=…,
			// db.password: …, a line "password: …". Values that are
			// expressions in code (req.Password, p,) are not secrets.
			id:        "config-password",
			broad:     true,
			re:        regexp.MustCompile(`(?i)[\w.-]{0,80}?(?:password|passwd|pwd|secret)[ \t]*[=:][ \t]*([^\s#'"{}\[\]&*!|>$%][^\s#]{1,}[^\s#,;(){}\[\]])[ \t]*(?:\r?\n|\z)`),
			keywords:  []string{"password", "passwd", "pwd", "secret"},
			lineStart: true,
			allow:     []allowlist{ph, {re: mustMatcher(`^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$`, `^(?i:true|false|null|none|nil|yes|no)$`)}},
		},
		{
			// A PEM private key cut off before its END line (truncated tool
			// output): the header plus the base64 body that follows it.
			id:       "private-key",
			re:       regexp.MustCompile(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[ \t]*\r?\n(?:[A-Za-z-]+:[^\n]*\r?\n)*)?[A-Za-z0-9+/=\s]{32}[A-Za-z0-9+/=\s]*`),
			keywords: []string{"-----begin"},
			after:    pemReach,
		},
	}
}

// shannon is gitleaks' entropy measure: bits per character over runes.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var counts map[rune]int
	var ascii [128]int
	for _, c := range s {
		if c < 128 {
			ascii[c]++
			continue
		}
		if counts == nil {
			counts = make(map[rune]int)
		}
		counts[c]++
	}
	// H = log2(L) - (1/L) Σ n·log2(n), with n·log2(n) from a table for the
	// counts a secret has (it runs once per candidate secret).
	var sum float64
	for _, n := range ascii {
		sum += nlog2n(n)
	}
	for _, n := range counts {
		sum += nlog2n(n)
	}
	l := float64(len(s))
	return math.Log2(l) - sum/l
}

var nlog2nTable = func() (t [257]float64) {
	for n := 2; n < len(t); n++ {
		t[n] = float64(n) * math.Log2(float64(n))
	}
	return t
}()

func nlog2n(n int) float64 {
	if n < len(nlog2nTable) {
		return nlog2nTable[n]
	}
	return float64(n) * math.Log2(float64(n))
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}
