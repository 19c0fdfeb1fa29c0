package shell

import (
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Options tell the classifier where the command will run.
type Options struct {
	// Workspace is the absolute workspace root; the command runs there.
	// Paths below it are "inside". Empty means no path is inside.
	Workspace string
	// Exists reports whether a path exists (absolute, cleaned). Nil means
	// os.Lstat is consulted.
	Exists func(path string) bool
	// IsDir reports whether a path is an existing directory. Nil means
	// os.Stat is consulted. Used to judge `cp x /some/dir`.
	IsDir func(path string) bool
	// Realpath resolves symbolic links in an absolute path (a path that
	// does not exist yet resolves through its longest existing ancestor).
	// Nil means the real file system is consulted.
	Realpath func(path string) string
}

// Part is the verdict on one simple command of a line, or on one
// redirection. Every simple command is a part wherever it occurs
// (pipelines, lists, subshells, $(...), sh -c strings, the command a
// wrapper such as env, timeout, xargs or find -exec runs), so that a
// policy rule can be checked against each of them: a rule that names a
// command covers that part, never the others.
type Part struct {
	// Command is the source text of the statement (with its redirections),
	// or of the redirection, or, for a command run by a wrapper, its words.
	Command string `json:"command"`
	// Risk and Reason judge this part alone: for a statement, the command
	// without its redirections (each of which is a part of its own).
	Risk   Risk   `json:"risk"`
	Reason string `json:"reason"`
	// Redirection marks a part that is a redirection of the statement
	// before it: a rule naming the command does not cover where its
	// output goes.
	Redirection bool `json:"redirection,omitempty"`
	// Via names the wrapper that runs this command (env, timeout, xargs,
	// find -exec, ...); the wrapper's statement is a part of its own.
	Via string `json:"via,omitempty"`
	// Unparsed marks source that does not parse (or nests too deep): it
	// is not known to be one command, so no rule naming a command covers it.
	Unparsed bool `json:"unparsed,omitempty"`
}

// Classification is the verdict on a whole command line.
type Classification struct {
	// Risk is the most dangerous class among Parts (Destructive when the
	// command does not parse, Read for an empty command).
	Risk  Risk   `json:"risk"`
	Parts []Part `json:"parts,omitempty"`
	// Packages lists what installs would fetch, as written
	// ("left-pad@1.3.0", "requests==2.31", "-r requirements.txt").
	Packages   []string `json:"packages,omitempty"`
	ParseError string   `json:"parseError,omitempty"`
}

// Reason returns the reason of the first part carrying the overall class.
func (c Classification) Reason() string {
	if c.ParseError != "" {
		return "does not parse: " + c.ParseError
	}
	for _, p := range c.Parts {
		if p.Risk == c.Risk {
			return p.Reason
		}
	}
	return ""
}

const maxDepth = 8

// Classify parses command with a Bash parser and classifies every simple
// command and redirection in it. See the package documentation for the
// rules.
func Classify(command string, opts Options) Classification {
	if opts.Realpath == nil {
		opts.Realpath = realpath
	}
	if opts.Workspace != "" {
		opts.Workspace = opts.Realpath(filepath.Clean(opts.Workspace))
	}
	c := &classifier{opts: opts, cwd: opts.Workspace, links: map[string]bool{}}
	r, perr := c.script(command, 0)
	out := Classification{Risk: r, Parts: c.parts, Packages: c.pkgs}
	if perr != "" {
		out.ParseError = perr
		out.Risk = Destructive
	}
	return out
}

type classifier struct {
	opts  Options
	cwd   string          // "" when unknown (after cd to a dynamic place)
	links map[string]bool // symlinks created by this command
	parts []Part
	pkgs  []string
}

type verdict struct {
	risk   Risk
	reason string
}

func v(r Risk, reason string) verdict { return verdict{r, reason} }

// max keeps the more dangerous verdict (the first on ties).
func (a verdict) max(b verdict) verdict {
	if b.risk.Rank() > a.risk.Rank() {
		return b
	}
	return a
}

func parse(src string) (*syntax.File, error) {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	return p.Parse(strings.NewReader(src), "")
}

// script classifies a whole script, appending parts, and returns its class
// and, if it does not parse, the parse error.
func (c *classifier) script(src string, depth int) (Risk, string) {
	if depth > maxDepth {
		c.parts = append(c.parts, Part{Command: strings.TrimSpace(src), Risk: Destructive, Reason: "shell nesting too deep to analyse", Unparsed: true})
		return Destructive, "nesting too deep"
	}
	f, err := parse(src)
	if err != nil {
		c.parts = append(c.parts, Part{Command: strings.TrimSpace(src), Risk: Destructive, Reason: "does not parse: " + err.Error(), Unparsed: true})
		return Destructive, err.Error()
	}
	start := len(c.parts)
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			c.stmt(src, n, depth)
		case *syntax.TestClause, *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.LetClause:
			c.arithStrings(src, n, depth)
		}
		return true
	})
	r := Read
	for _, p := range c.parts[start:] {
		r = Max(r, p.Risk)
	}
	return r, ""
}

func slice(src string, n syntax.Node) string {
	s, e := n.Pos().Offset(), n.End().Offset()
	if s > e || e > uint(len(src)) {
		return ""
	}
	return src[s:e]
}

func (c *classifier) add(text string, vd verdict) {
	text = strings.TrimSpace(text)
	if t := strings.TrimSuffix(text, ";"); t != text && !strings.HasSuffix(t, "\\") && !strings.HasSuffix(t, ";") {
		text = strings.TrimSpace(t) // the list operator, not the command's
	}
	c.parts = append(c.parts, Part{Command: text, Risk: vd.risk, Reason: vd.reason})
}

func redirPart(text string, vd verdict) Part {
	return Part{Command: strings.TrimSpace(text), Risk: vd.risk, Reason: vd.reason, Redirection: true}
}

func (c *classifier) stmt(src string, st *syntax.Stmt, depth int) {
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		vd := c.call(cmd, depth)
		null := len(cmd.Args) == 0
		if len(cmd.Args) == 1 {
			if a := c.word(cmd.Args[0]); !a.dyn && (a.s == ":" || a.s == "true") {
				null = true
			}
		}
		c.add(slice(src, st), vd)
		for _, r := range st.Redirs {
			c.parts = append(c.parts, redirPart(slice(src, r), c.redirect(r, null)))
		}
	case nil:
		vd := v(Read, "redirection only")
		for _, r := range st.Redirs {
			vd = vd.max(c.redirect(r, true))
		}
		c.add(slice(src, st), vd)
	default:
		if dc, ok := cmd.(*syntax.DeclClause); ok {
			c.add(slice(src, st), c.decl(dc, depth))
		}
		for _, r := range st.Redirs {
			c.parts = append(c.parts, redirPart(slice(src, r), c.redirect(r, false)))
		}
	}
}

// arithStrings handles quoted strings inside arithmetic and test
// contexts: bash evaluates array subscripts in them, so a literal like
// 'a[$(cmd)]' runs cmd. Such strings are parsed and classified.
func (c *classifier) arithStrings(src string, n syntax.Node, depth int) {
	syntax.Walk(n, func(m syntax.Node) bool {
		w, ok := m.(*syntax.Word)
		if !ok {
			return true
		}
		a := c.word(w)
		if !a.dyn && (strings.Contains(a.s, "$(") || strings.Contains(a.s, "`")) {
			vd := c.nested("arithmetic evaluation", a.s, depth)
			c.add(slice(src, w), vd.max(v(Write, "string with command substitution syntax evaluated as arithmetic")))
		}
		return false
	})
}

func (c *classifier) decl(dc *syntax.DeclClause, depth int) verdict {
	vd := v(Read, "shell variable declaration")
	for _, a := range dc.Args {
		if a.Naked && a.Value == nil {
			continue // declare -p NAME names a variable, assigns nothing
		}
		vd = vd.max(c.assignNode(a, depth))
		if a.Naked && a.Value != nil {
			// declare 'a[$(cmd)]=1' evaluates the subscript.
			vd = vd.max(c.subscripts(dc.Variant.Value, []arg{c.word(a.Value)}, depth))
		}
	}
	return vd
}

func (c *classifier) assignNode(a *syntax.Assign, depth int) verdict {
	if a.Name == nil {
		return v(Read, "variable assignment")
	}
	val := arg{}
	if a.Value != nil {
		val = c.word(a.Value)
	}
	return c.assign(a.Name.Value, val, depth)
}

// cmdVars hold command lines that some program will run.
var cmdVars = set("GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
	"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "SSH_ASKPASS", "GIT_ASKPASS", "SUDO_ASKPASS",
	"LESSOPEN", "LESSCLOSE", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "GIT_PROXY_COMMAND", "RSYNC_RSH",
	"BROWSER", "FCEDIT", "TERMINAL", "SHELL", "CC", "CXX", "LD")

// loadVars change what code programs load.
var loadVars = set("NODE_OPTIONS", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "PYTHONPATH", "PYTHONSTARTUP",
	"GOFLAGS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH", "GIT_CONFIG_PARAMETERS",
	"GIT_CONFIG_GLOBAL", "GIT_DIR", "GIT_WORK_TREE", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "NPM_CONFIG_USERCONFIG",
	// Where programs find their configuration, which can name commands
	// (HOME=. git reads the workspace's .gitconfig; an rg config can
	// hold --pre).
	"HOME", "XDG_CONFIG_HOME", "RIPGREP_CONFIG_PATH", "ZDOTDIR", "INPUTRC", "CURL_HOME", "WGETRC",
	"PIP_CONFIG_FILE", "PYTHONHOME", "PYTHONUSERBASE", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE",
	"CARGO_HOME", "RUSTC_WRAPPER", "GOENV", "GOROOT", "GOTOOLCHAIN", "VIMINIT", "EXINIT", "MYVIMRC",
	"GNUPGHOME", "DOCKER_CONFIG", "KUBECONFIG", "AWS_CONFIG_FILE", "BAT_CONFIG_PATH", "LESSKEY",
	"GIT_ATTR_SOURCE", "MANOPT", "GIT_SSL_KEYLOGFILE",
	// Options of pagers, which can name commands to run (LESS='+!cmd').
	"LESS", "MORE", "LESSKEYIN", "LESSKEY_SRC")

// traceVars name a file the program writes (traces, key logs, coverage).
var traceVars = set("SSLKEYLOGFILE", "MALLOC_TRACE", "NODE_V8_COVERAGE", "GOCOVERDIR", "LLVM_PROFILE_FILE", "HISTFILE")

// assign classifies NAME=value. Values are usually harmless; names that
// hold command lines are classified by their value, names that inject
// code are destructive, and a literal value containing command
// substitution syntax is parsed, since bash may evaluate it later
// (arithmetic on array subscripts, prompt expansion).
func (c *classifier) assign(name string, val arg, depth int) verdict {
	if name == "CDPATH" {
		c.cwd = ""
	}
	switch {
	case strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || name == "BASH_ENV" || name == "ENV" || strings.HasPrefix(name, "BASH_FUNC_"):
		return v(Destructive, "sets "+name+", which injects code into programs")
	case name == "GOFLAGS" && !val.dyn && !strings.Contains(val.s, "exec") && !strings.Contains(val.s, "vettool") && !strings.Contains(val.s, "overlay"):
		return v(Read, "sets GOFLAGS")
	case strings.HasPrefix(name, "GIT_TRACE") || traceVars[name]:
		// GIT_TRACE=1/2/true print to stderr; anything else is a file
		// (or a socket) the program writes.
		switch {
		case val.dyn:
			return v(Destructive, "sets "+name+" to a path not known statically")
		case val.s == "" || val.s == "0" || val.s == "1" || val.s == "2" || val.s == "true" || val.s == "false":
			return v(Read, "sets "+name)
		case strings.HasPrefix(val.s, "af_unix:"):
			return v(Write, "sets "+name+" to a socket")
		}
		return c.target(val, name+" makes the program write", false, false)
	case strings.HasPrefix(name, "NPM_CONFIG_") || strings.HasPrefix(name, "npm_config_"):
		return v(Write, "sets "+name+", which changes how npm runs scripts")
	case name == "PATH":
		return v(Write, "changes PATH, so command names no longer identify programs")
	case loadVars[name] || strings.HasPrefix(name, "GIT_CONFIG_"):
		return v(Write, "sets "+name+", which changes what code programs load")
	case cmdVars[name]:
		if val.s == "" && !val.dyn {
			return v(Read, "clears "+name)
		}
		if val.dyn {
			return v(Destructive, "sets "+name+" to a command not known statically")
		}
		vd := c.nested(name, val.s+` /dev/null`, depth)
		return vd.max(v(Write, "sets "+name+", a command some program will run"))
	case !val.dyn && (strings.Contains(val.s, "$(") || strings.Contains(val.s, "`")):
		vd := c.nested(name, val.s, depth)
		return vd.max(v(Write, "assigns a string with command substitution syntax, which bash may evaluate"))
	}
	return v(Read, "variable assignment")
}

func (c *classifier) call(ce *syntax.CallExpr, depth int) verdict {
	vd := v(Read, "variable assignment")
	if len(ce.Args) > 0 {
		args := make([]arg, len(ce.Args))
		for i, w := range ce.Args {
			args[i] = c.word(w)
		}
		vd = c.command(args, depth)
	}
	for _, a := range ce.Assigns {
		vd = vd.max(c.assignNode(a, depth))
	}
	return vd
}

// arg is a word after quote removal. dyn marks words whose value is not
// known statically (parameter expansion, command substitution, $'..').
// tilde marks an unquoted leading ~.
type arg struct {
	s     string
	dyn   bool
	tilde bool
	glob  bool
	raw   string // source text, for reasons, when dyn
	// hole marks the operands xargs, find -exec and fd -x fill in: not
	// known statically, but file names rather than options.
	hole bool
}

// text is how an argument is shown in reasons.
func (a arg) text() string {
	if a.dyn && a.raw != "" {
		return a.raw
	}
	return a.s
}

func (c *classifier) word(w *syntax.Word) arg {
	var b strings.Builder
	var a arg
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				a.tilde = true
			}
			if strings.ContainsAny(p.Value, "*?[") {
				a.glob = true
			}
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				a.dyn = true
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				a.dyn = true
			}
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, true))
				} else {
					a.dyn = true
				}
			}
		default:
			a.dyn = true
		}
	}
	a.s = b.String()
	if a.dyn {
		var sb strings.Builder
		if err := syntax.NewPrinter().Print(&sb, w); err == nil {
			a.raw = sb.String()
		}
	}
	return a
}

// unescape removes shell backslash quoting from a literal.
func unescape(s string, dquoted bool) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '\\' || i+1 == len(s) {
			b.WriteByte(ch)
			continue
		}
		next := s[i+1]
		if dquoted && !strings.ContainsRune("$`\"\\\n", rune(next)) {
			b.WriteByte(ch)
			continue
		}
		i++
		if next != '\n' {
			b.WriteByte(next)
		}
	}
	return b.String()
}

// resolve returns the absolute cleaned path an argument names, if known.
func (c *classifier) resolve(a arg) (string, bool) {
	if a.dyn || a.tilde {
		return "", false
	}
	p := a.s
	if p == "" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		if c.cwd == "" {
			return "", false
		}
		p = filepath.Join(c.cwd, p)
	}
	return c.opts.Realpath(filepath.Clean(p)), true
}

// realpath resolves symlinks through the longest existing ancestor.
func realpath(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// viaLink reports whether abs is, or is below, a symlink this command
// creates.
func (c *classifier) viaLink(abs string) bool {
	for p := abs; ; p = filepath.Dir(p) {
		if c.links[p] {
			return true
		}
		if p == filepath.Dir(p) {
			return false
		}
	}
}

func (c *classifier) inside(abs string) bool {
	ws := c.opts.Workspace
	if ws == "" {
		return false
	}
	return abs == ws || strings.HasPrefix(abs, ws+string(filepath.Separator)) || ws == "/"
}

func (c *classifier) exists(abs string) bool {
	if c.opts.Exists != nil {
		return c.opts.Exists(abs)
	}
	_, err := os.Lstat(abs)
	return err == nil
}

func (c *classifier) isDir(abs string) bool {
	if c.opts.IsDir != nil {
		return c.opts.IsDir(abs)
	}
	fi, err := os.Stat(abs)
	return err == nil && fi.IsDir()
}

// harmlessDevice reports paths that accept or give data without effect.
func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/random", "/dev/urandom":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/")
}

// target judges writing to (modifying) the file an argument names.
// truncate: the write replaces existing content. pure: the command's only
// effect is to truncate/empty it (`: > f`, `truncate`).
func (c *classifier) target(a arg, what string, truncate, pure bool) verdict {
	abs, ok := c.resolve(a)
	if !ok {
		if c.cwd == "" && !a.dyn && !a.tilde {
			return v(Destructive, what+" "+a.s+" after cd to a directory not known statically")
		}
		if a.tilde {
			return v(Destructive, what+" in the home directory: "+a.s)
		}
		return v(Destructive, what+" a path not known statically: "+a.text())
	}
	if harmlessDevice(abs) {
		return v(Read, what+" "+abs)
	}
	if strings.HasPrefix(abs, "/dev/tcp/") || strings.HasPrefix(abs, "/dev/udp/") {
		return v(Network, what+" a network connection "+abs)
	}
	if c.viaLink(abs) {
		return v(Destructive, what+" through a symlink created by this command: "+a.s)
	}
	if strings.HasPrefix(abs, "/dev/") || strings.HasPrefix(abs, "/proc/") || strings.HasPrefix(abs, "/sys/") {
		return v(Destructive, what+" device or kernel file "+abs)
	}
	if c.inside(abs) {
		if pure && c.exists(abs) {
			return v(Destructive, "truncates existing file "+a.s)
		}
		return v(Write, what+" "+a.s+" inside the workspace")
	}
	if c.exists(abs) {
		if truncate {
			return v(Destructive, "truncates existing file outside the workspace: "+abs)
		}
		return v(Destructive, "modifies existing path outside the workspace: "+abs)
	}
	return v(Write, what+" new file outside the workspace: "+abs)
}

func (c *classifier) redirect(r *syntax.Redirect, null bool) verdict {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return v(Read, "here-document")
	case syntax.RdrIn, syntax.DplIn:
		if r.Word == nil {
			return v(Read, "input redirection")
		}
		a := c.word(r.Word)
		if strings.HasPrefix(a.s, "/dev/tcp/") || strings.HasPrefix(a.s, "/dev/udp/") {
			return v(Network, "reads from a network connection "+a.text())
		}
		if a.dyn && !(r.Op == syntax.DplIn && isDigits(a.s)) && !strings.HasPrefix(a.s, "/") {
			return v(Write, "input from a path not known statically (could be a network connection): "+a.text())
		}
		return v(Read, "input redirection")
	}
	if r.Word == nil {
		return v(Destructive, "unexpected redirection")
	}
	a := c.word(r.Word)
	if r.Op == syntax.DplOut {
		if !a.dyn && (a.s == "-" || isDigits(a.s)) {
			return v(Read, "file descriptor duplication")
		}
		if a.dyn {
			return v(Destructive, "redirection to a target not known statically")
		}
	}
	truncate := true
	switch r.Op {
	case syntax.AppOut, syntax.AppAll, syntax.AppClob, syntax.AppAllClob, syntax.RdrInOut:
		truncate = false
	}
	what := "writes"
	if !truncate {
		what = "appends to"
	}
	return c.target(a, what, truncate, truncate && null)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
