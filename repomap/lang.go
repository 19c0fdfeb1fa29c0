package repomap

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/workspace"
	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/csharp"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/php"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/ruby"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

//go:embed queries/*.scm
var queryFS embed.FS

// captureRole is what a capture name in a tags query means to the extractor.
//
// The queries in queries/<lang>-tags.scm use these capture names:
//
//	@definition.<kind>  the whole definition node (its line range is the def's range)
//	@name               the defined or referenced identifier
//	@receiver           an explicit enclosing type written outside the body
//	                    (a Go receiver, the Foo in C++ "void Foo::bar()")
//	@scope              a node that encloses definitions without being one
//	                    (a Rust impl block); needs @name
//	@scope.namespace    the same for a namespace: functions inside it stay
//	                    functions rather than becoming methods
//	@reference.<kind>   a use of a name; when the pattern has no @name the
//	                    reference node itself is the name
type captureRole uint8

// ParseTimeout bounds one file's parse; a parse that runs longer fails
// and the file is skipped as parse-failed.
var ParseTimeout = 5 * time.Second

const (
	roleOther captureRole = iota
	roleName
	roleDef
	roleRef
	roleReceiver
	roleScope
	roleQualifier // the package name before a qualified reference (Go's context.Context)
	roleImport    // an import spec (Go): its name or path gives the qualifiers the file can use
)

type language struct {
	name  string
	get   func() *sitter.Language
	once  sync.Once
	lang  *sitter.Language
	query *sitter.Query
	err   error
	roles []captureRole // by capture id
	kinds []string      // by capture id: the <kind> of definition.<kind> / reference.<kind>
	// predicates are the #eq?/#match? conditions of each pattern (by
	// pattern index; nil for most), which the cursor does not apply by
	// itself.
	predicates [][]predicate

	parsers sync.Pool // *sitter.Parser
}

var languages = map[string]*language{
	"go":         {name: "go", get: golang.GetLanguage},
	"python":     {name: "python", get: python.GetLanguage},
	"javascript": {name: "javascript", get: javascript.GetLanguage},
	"typescript": {name: "typescript", get: typescript.GetLanguage},
	"tsx":        {name: "tsx", get: tsx.GetLanguage},
	"rust":       {name: "rust", get: rust.GetLanguage},
	"java":       {name: "java", get: java.GetLanguage},
	"c":          {name: "c", get: c.GetLanguage},
	"cpp":        {name: "cpp", get: cpp.GetLanguage},
	"ruby":       {name: "ruby", get: ruby.GetLanguage},
	"csharp":     {name: "csharp", get: csharp.GetLanguage},
	"php":        {name: "php", get: php.GetLanguage},
}

// LanguageOf returns the tags language of a path (workspace.LanguageOf),
// or "" when the repo map has no grammar for it.
func LanguageOf(rel string) string {
	if l := workspace.LanguageOf(rel); languages[l] != nil {
		return l
	}
	return ""
}

// Languages lists the supported language names.
func Languages() []string {
	return []string{"c", "cpp", "csharp", "go", "java", "javascript", "php", "python", "ruby", "rust", "tsx", "typescript"}
}

// queryExtends names languages whose query file only adds to another's.
var queryExtends = map[string]string{"tsx": "typescript"}

// load compiles the language's tags query once.
func (l *language) load() error {
	l.once.Do(func() {
		l.lang = l.get()
		src, err := queryFS.ReadFile("queries/" + l.name + "-tags.scm")
		if err != nil {
			l.err = fmt.Errorf("repomap: no tags query for %s: %w", l.name, err)
			return
		}
		if base, ok := queryExtends[l.name]; ok {
			// TSX is TypeScript plus JSX: its file holds only the additions.
			b, err := queryFS.ReadFile("queries/" + base + "-tags.scm")
			if err != nil {
				l.err = fmt.Errorf("repomap: no tags query for %s: %w", base, err)
				return
			}
			src = append(append(b, '\n'), src...)
		}
		q, err := sitter.NewQuery(src, l.lang)
		if err != nil {
			l.err = fmt.Errorf("repomap: compiling %s tags query: %w", l.name, err)
			return
		}
		l.query = q
		if l.predicates, err = compilePredicates(q); err != nil {
			l.err = fmt.Errorf("repomap: %s tags query: %w", l.name, err)
			return
		}
		n := q.CaptureCount()
		l.roles = make([]captureRole, n)
		l.kinds = make([]string, n)
		for i := uint32(0); i < n; i++ {
			name := q.CaptureNameForId(i)
			switch {
			case name == "name":
				l.roles[i] = roleName
			case name == "receiver":
				l.roles[i] = roleReceiver
			case name == "qualifier":
				l.roles[i] = roleQualifier
			case name == "import":
				l.roles[i] = roleImport
			case name == "scope" || strings.HasPrefix(name, "scope."):
				l.roles[i] = roleScope
				l.kinds[i] = strings.TrimPrefix(strings.TrimPrefix(name, "scope"), ".")
			case strings.HasPrefix(name, "definition."):
				l.roles[i] = roleDef
				l.kinds[i] = strings.TrimPrefix(name, "definition.")
			case strings.HasPrefix(name, "reference."):
				l.roles[i] = roleRef
				l.kinds[i] = strings.TrimPrefix(name, "reference.")
			}
		}
		l.parsers.New = func() any {
			p := sitter.NewParser()
			p.SetLanguage(l.lang)
			return p
		}
	})
	return l.err
}

// predicate is one #eq?, #not-eq?, #match? or #not-match? condition of a
// query pattern: every capture left of the pattern's match must equal the
// text (or match the expression) on the right; with a capture on the
// right, the first captures of both names are compared.
type predicate struct {
	not   bool
	left  uint32         // capture id
	right int64          // capture id, or -1 for text / re
	text  string         // #eq? with a string
	re    *regexp.Regexp // #match?
}

func compilePredicates(q *sitter.Query) ([][]predicate, error) {
	out := make([][]predicate, q.PatternCount())
	for i := range out {
		for _, steps := range q.PredicatesForPattern(uint32(i)) {
			if len(steps) < 3 || steps[0].Type != sitter.QueryPredicateStepTypeString || steps[1].Type != sitter.QueryPredicateStepTypeCapture {
				continue
			}
			op := q.StringValueForId(steps[0].ValueId)
			p := predicate{left: steps[1].ValueId, right: -1, not: strings.HasPrefix(op, "not-")}
			switch strings.TrimPrefix(op, "not-") {
			case "eq?":
				if steps[2].Type == sitter.QueryPredicateStepTypeCapture {
					p.right = int64(steps[2].ValueId)
				} else {
					p.text = q.StringValueForId(steps[2].ValueId)
				}
			case "match?":
				re, err := regexp.Compile(q.StringValueForId(steps[2].ValueId))
				if err != nil {
					return nil, fmt.Errorf("pattern %d: %w", i, err)
				}
				p.re = re
			default:
				continue // other predicates are not conditions on the match
			}
			out[i] = append(out[i], p)
		}
	}
	return out, nil
}

// holds reports whether a match's captures satisfy the predicates.
func holds(ps []predicate, cs []capture, content []byte) bool {
	for _, p := range ps {
		if p.right >= 0 {
			l, r := -1, -1
			for i := range cs {
				if l < 0 && cs[i].id == p.left {
					l = i
				}
				if r < 0 && int64(cs[i].id) == p.right {
					r = i
				}
			}
			if l >= 0 && r >= 0 && bytes.Equal(cs[l].bytes(content), cs[r].bytes(content)) == p.not {
				return false
			}
			continue
		}
		for i := range cs {
			if cs[i].id != p.left {
				continue
			}
			var ok bool
			if p.re != nil {
				ok = p.re.Match(cs[i].bytes(content))
			} else {
				ok = string(cs[i].bytes(content)) == p.text
			}
			if ok == p.not {
				return false
			}
		}
	}
	return true
}
