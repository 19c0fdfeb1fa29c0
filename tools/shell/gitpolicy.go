package shell

import "strings"

// Git's policy is data: what each subcommand is, by its options and the
// word after it, read by gitCmd. The classifier only chooses a sandbox
// profile and the approval prompt's text (the sandbox is the wall), but a
// row here must never rate a form lower than what it can do.

// gitForm is one form of a git subcommand and its risk. A form matches
// when every condition it sets holds; the forms of a subcommand are tried
// in order, and the last one, which sets none, is the default.
type gitForm struct {
	opts     []string // one of these options is given ("-f" a short letter, "--force" a long name)
	and      []string // and one of these too
	not      []string // and none of these
	subs     []string // the word after the subcommand is one of these ("": there is none)
	operands int      // at least this many operands
	refspec  bool     // an operand begins with + (forced) or : (deleting)
	dashdash bool     // "--" is among the arguments
	check    gitCheck // a check in code, when the conditions above hold
	risk     Risk
	// why is the prompt's text; %s stands for the word after the
	// subcommand, or the operand the form matched on.
	why string
}

// gitCheck names a judgement a table row cannot hold as data.
type gitCheck int

const (
	noCheck gitCheck = iota
	// checkoutPaths: an operand that names files (., a glob, an existing
	// path in the workspace) discards their changes.
	checkoutPaths
	// configValue: `git config KEY VALUE` sets a value that runs a command.
	configValue
)

// gitForms are the subcommands whose risk depends on their options or on
// the word after them.
var gitForms = map[string][]gitForm{
	"push": {
		{opts: []string{"-f", "-d", "--force", "--force-with-lease", "--force-if-includes", "--delete", "--mirror", "--prune"},
			risk: Destructive, why: "git push that overwrites or deletes remote refs"},
		{refspec: true, risk: Destructive, why: "git push with a forced or deleting refspec %s"},
		{risk: Network, why: "git push uses the network"},
	},
	"reset": {
		{opts: []string{"--hard", "--merge", "--keep"}, risk: Destructive, why: "git reset discarding work"},
		{risk: Write, why: "git reset moves HEAD or the index"},
	},
	"clean": {
		{opts: []string{"-n", "--dry-run"}, risk: Read, why: "git clean -n only lists"},
		{risk: Destructive, why: "git clean deletes untracked files"},
	},
	"checkout": {
		{opts: []string{"-f", "--force", "--ours", "--theirs"}, risk: Destructive, why: "git checkout --force discards changes"},
		{dashdash: true, risk: Destructive, why: "git checkout -- <paths> discards changes"},
		{opts: []string{"-b", "-B", "--orphan"}, risk: Write, why: "git checkout -b creates a branch"},
		{check: checkoutPaths},
		{risk: Write, why: "git checkout switches branches"},
	},
	"restore": {
		{opts: []string{"-S", "--staged"}, not: []string{"-W", "--worktree"}, risk: Write, why: "git restore --staged unstages"},
		{risk: Destructive, why: "git restore discards changes"},
	},
	"rm": {
		{opts: []string{"-f", "--force"}, risk: Destructive, why: "git rm -f discards changes"},
		{risk: Write, why: "git rm removes tracked files"},
	},
	"branch": {
		{opts: []string{"-D"}, risk: Destructive, why: "git branch -D deletes an unmerged branch"},
		{opts: []string{"-d", "--delete"}, and: []string{"-f", "--force"}, risk: Destructive, why: "git branch -D deletes an unmerged branch"},
		{opts: []string{"-d", "-m", "-M", "-c", "-C", "-u", "--delete", "--move", "--copy", "--set-upstream-to", "--unset-upstream", "--edit-description"},
			risk: Write, why: "git branch modifies branches"},
		{operands: 1, not: []string{"-l", "--list"}, risk: Write, why: "git branch creates a branch"},
		{risk: Read, why: "git branch lists"},
	},
	"tag": {
		{opts: []string{"-d", "--delete"}, risk: Write, why: "git tag -d deletes a tag"},
		{operands: 1, not: []string{"-l", "--list", "--contains", "--points-at", "--merged"}, risk: Write, why: "git tag creates a tag"},
		{risk: Read, why: "git tag lists"},
	},
	"stash": {
		{subs: []string{"list", "show"}, risk: Read, why: "git stash %s only reads"},
		{subs: []string{"drop", "clear"}, risk: Destructive, why: "git stash %s deletes stashed work"},
		{risk: Write, why: "git stash"},
	},
	"remote": {
		{subs: []string{"", "get-url"}, risk: Read, why: "git remote lists"},
		{subs: []string{"show", "update", "prune"}, risk: Network, why: "git remote %s uses the network"},
		{risk: Write, why: "git remote %s changes configuration"},
	},
	"config": {
		{opts: []string{"-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--show-origin"}, risk: Read, why: "git config reads"},
		{operands: 2, check: configValue},
		{operands: 2, risk: Write, why: "git config sets a value"},
		{risk: Read, why: "git config reads"},
	},
	"reflog": {
		{subs: []string{"expire", "delete"}, risk: Destructive, why: "git reflog %s deletes history"},
		{risk: Read, why: "git reflog lists"},
	},
	"update-ref": {
		{opts: []string{"-d"}, risk: Destructive, why: "git update-ref -d deletes a ref"},
		{risk: Write, why: "git update-ref moves a ref"},
	},
	"worktree": {
		{subs: []string{"list"}, risk: Read, why: "git worktree list"},
		{subs: []string{"remove", "prune"}, risk: Destructive, why: "git worktree %s deletes a worktree"},
		{risk: Write, why: "git worktree %s"},
	},
	"submodule": {
		{subs: []string{"", "status", "summary"}, risk: Read, why: "git submodule status"},
		{subs: []string{"deinit"}, risk: Destructive, why: "git submodule deinit removes a working tree"},
		{subs: []string{"foreach"}, risk: Write, why: "git submodule foreach runs commands (not analysed)"},
		{risk: Network, why: "git submodule %s may fetch"},
	},
	"lfs": {
		{subs: []string{"fetch", "pull", "push", "clone"}, risk: Network, why: "git lfs %s uses the network"},
		{subs: []string{"ls-files", "status", "env", "version", ""}, risk: Read, why: "git lfs %s"},
		{risk: Write, why: "git lfs %s"},
	},
	"archive": {
		{opts: []string{"--remote"}, risk: Network, why: "git archive --remote uses the network"},
		{opts: []string{"-o", "--output"}, risk: Write, why: "git archive writes a file"},
		{risk: Read, why: "git archive to standard output"},
	},
}

// gitClasses are the subcommands whose risk is the same whatever their
// arguments (once gitCmd's checks for commands they may run pass), with
// the prompt's text after "git <subcommand>".
var gitClasses = []struct {
	risk Risk
	why  string
	subs []string
}{
	{Read, " only reads", []string{"status", "diff", "log", "show", "rev-parse", "ls-files", "blame", "annotate",
		"shortlog", "describe", "grep", "cat-file", "ls-tree", "merge-base", "name-rev", "rev-list",
		"whatchanged", "count-objects", "check-ignore", "check-attr", "check-ref-format",
		"for-each-ref", "show-ref", "var", "help", "version", "show-branch", "cherry", "range-diff",
		"diff-tree", "diff-files", "diff-index", "fsck", "verify-commit", "verify-tag", "verify-pack", "get-tar-commit-id", "column"}},
	{Network, " uses the network", []string{"fetch", "pull", "clone", "ls-remote", "send-email", "request-pull", "svn", "p4",
		"fetch-pack", "send-pack", "http-fetch", "http-push", "upload-pack", "receive-pack", "daemon", "instaweb", "cvsimport", "credential"}},
	{Destructive, " deletes history or objects", []string{"prune", "filter-branch", "filter-repo", "prune-packed"}},
	{Write, " changes the repository or working tree", []string{"add", "commit", "merge", "rebase", "cherry-pick", "revert", "mv", "init", "apply",
		"am", "format-patch", "notes", "switch", "gc", "repack", "pack-refs", "maintenance", "bisect",
		"mergetool", "commit-tree", "update-index", "rerere", "sparse-checkout", "hash-object",
		"mktree", "mktag", "replace", "symbolic-ref", "write-tree", "read-tree", "checkout-index",
		"difftool", "stage", "citool", "gui", "bundle", "unpack-objects", "fast-import"}},
}

// gitPolicy is every known subcommand's forms: gitForms, and one form per
// subcommand of gitClasses.
var gitPolicy = func() map[string][]gitForm {
	m := make(map[string][]gitForm, len(gitForms)+160)
	for s, fs := range gitForms {
		m[s] = fs
	}
	for _, cl := range gitClasses {
		for _, s := range cl.subs {
			if _, dup := m[s]; dup {
				panic("shell: git subcommand " + s + " has two policies")
			}
			m[s] = []gitForm{{risk: cl.risk, why: "git " + s + cl.why}}
		}
	}
	return m
}()

// gitDynRisky lists subcommands with destructive variants: with an
// argument not known statically they are classified destructive.
var gitDynRisky = set("push", "checkout", "reset", "clean", "restore", "branch", "stash", "rm", "update-ref",
	"config", "reflog", "worktree", "submodule", "switch", "tag", "remote")

// gitRunsArgs are arguments that make git run a command: an option (or
// its prefix) for the subcommands named (none: every subcommand), or a
// transport prefix of an operand. why is the prompt's text, with the
// subcommand for %s; "" says "git <subcommand> <arg> runs a command".
var gitRunsArgs = []struct {
	prefix string
	exact  bool // the whole argument, not a prefix
	subs   []string
	why    string
	whole  bool // the prompt names the whole argument, not the prefix
}{
	{prefix: "--upload-pack"},
	{prefix: "--receive-pack"},
	{prefix: "--exec="},
	{prefix: "--open-files-in-pager"},
	{prefix: "-O", subs: []string{"grep"}, why: "git grep -O runs a pager command"},
	{prefix: "-u", exact: true, subs: []string{"clone", "fetch", "ls-remote", "pull", "archive", "push"}},
	{prefix: "--exec", exact: true, subs: []string{"clone", "fetch", "ls-remote", "pull", "archive", "push"}},
	{prefix: "ext::", why: "git %s with a transport that runs a command: ", whole: true},
	{prefix: "fd::", why: "git %s with a transport that runs a command: ", whole: true},
}

// gitValued are the options of git's subcommands that take a separate
// value, so that the value is not taken for an operand.
var gitValued = []string{"-m", "-F", "-C", "-c", "--config", "--contains", "--no-contains", "--merged", "--no-merged",
	"--points-at", "--sort", "--format", "-u", "--set-upstream-to", "-b", "-B", "--orphan", "-s", "--source",
	"-o", "--push-option", "--repo", "--author", "--date", "-n", "--depth", "--branch"}

// gitCmd judges git's subcommand and its arguments: first what makes any
// subcommand run a command or write a file, then the subcommand's forms.
func (c *classifier) gitCmd(args []arg, depth int) verdict {
	s, rest, vd, ok := gitSubcommand(args)
	if !ok {
		return vd
	}
	if vd, ok := c.gitRunsCommand(s, rest, depth); ok {
		return vd
	}
	if out := c.gitOutput(s, rest); out.risk != Read {
		return out
	}
	forms, known := gitPolicy[s]
	if !known {
		return v(Write, "unknown git subcommand "+s+" (assumed to write; may be an alias)")
	}
	vd, _ = c.gitForm(forms, rest, parseOpts(rest, gitValued...), depth)
	return vd
}

// gitSubcommand finds the subcommand after git's own options. Without
// one, ok is false and vd says why.
func gitSubcommand(args []arg) (s string, rest []arg, vd verdict, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			return "", nil, v(Destructive, "git with an argument not known statically"), false
		}
		switch {
		case a.s == "-c":
			i++
		case strings.HasPrefix(a.s, "--exec-path="):
			return "", nil, v(Destructive, "git --exec-path runs git programs from another directory"), false
		case a.s == "-C" || a.s == "--git-dir" || a.s == "--work-tree" || a.s == "--namespace" || a.s == "--config-env":
			i++
		case strings.HasPrefix(a.s, "-"):
		default:
			return a.s, args[i+1:], verdict{}, true
		}
	}
	return "", nil, v(Read, "git without a subcommand prints help"), false
}

// gitRunsCommand reports, with ok, a subcommand whose arguments make it
// run a command: one not known statically where a variant is destructive,
// an argument of gitRunsArgs, a -c setting of clone or submodule that
// holds a command.
func (c *classifier) gitRunsCommand(s string, rest []arg, depth int) (vd verdict, ok bool) {
	if gitDynRisky[s] && anyDyn(rest) {
		return v(Destructive, "git "+s+" with an argument not known statically"), true
	}
	for _, a := range rest {
		for _, r := range gitRunsArgs {
			if (r.exact && a.s != r.prefix) || !strings.HasPrefix(a.s, r.prefix) || (r.subs != nil && !oneOf(s, r.subs)) {
				continue
			}
			switch {
			case r.why == "":
				return v(Destructive, "git "+s+" "+r.prefix+" runs a command"), true
			case r.whole:
				return v(Destructive, strings.Replace(r.why, "%s", s, 1)+a.s), true
			default:
				return v(Destructive, strings.Replace(r.why, "%s", s, 1)), true
			}
		}
	}
	if s != "clone" && s != "submodule" {
		return verdict{}, false
	}
	o := parseOpts(rest, gitValued...)
	for _, kv := range append(o.values["-c"], o.values["--config"]...) {
		if vd := c.gitConfig(kv, depth); vd.risk == Destructive {
			return vd, true
		}
	}
	return verdict{}, false
}

// gitOutput judges --output FILE (diff, log, show, format-patch, ...),
// which writes a file.
func (c *classifier) gitOutput(s string, rest []arg) verdict {
	gs := "git " + s
	out := v(Read, gs)
	for j, a := range rest {
		switch {
		case strings.HasPrefix(a.s, "--output="):
			out = out.max(c.target(lit(strings.TrimPrefix(a.s, "--output=")), gs+" --output writes", true, false))
		case a.s == "--output" && j+1 < len(rest):
			out = out.max(c.target(rest[j+1], gs+" --output writes", true, false))
		}
	}
	return out
}

// gitForm returns the verdict of the first of forms that matches, and
// its index.
func (c *classifier) gitForm(forms []gitForm, rest []arg, o optview, depth int) (verdict, int) {
	word, _, _ := sub(rest)
	for i, f := range forms {
		w, ok := f.matches(rest, o, word)
		if !ok {
			continue
		}
		switch f.check {
		case checkoutPaths:
			if vd, ok := c.checkoutPaths(o); ok {
				return vd, i
			}
			continue
		case configValue:
			if vd := c.gitConfig(o.operands[0].s+"="+o.operands[1].s, depth); vd.risk == Destructive {
				return vd, i
			}
			continue
		}
		return v(f.risk, strings.Replace(f.why, "%s", w, 1)), i
	}
	panic("shell: git forms without a default")
}

// matches reports whether the form's conditions hold, and the word its
// prompt names: the operand a refspec condition matched, else word.
func (f gitForm) matches(rest []arg, o optview, word string) (string, bool) {
	if (f.opts != nil && !hasOpt(o, f.opts)) || (f.and != nil && !hasOpt(o, f.and)) ||
		(f.not != nil && hasOpt(o, f.not)) || (f.subs != nil && !oneOf(word, f.subs)) || len(o.operands) < f.operands {
		return "", false
	}
	if f.dashdash && !hasArg(rest, "--") {
		return "", false
	}
	if f.refspec {
		for _, a := range o.operands {
			if strings.HasPrefix(a.s, "+") || strings.HasPrefix(a.s, ":") {
				return a.s, true
			}
		}
		return "", false
	}
	return word, true
}

// checkoutPaths judges checkout's operands that name files, whose
// changes it discards.
func (c *classifier) checkoutPaths(o optview) (verdict, bool) {
	for _, a := range o.operands {
		if a.s == "." || a.glob {
			return v(Destructive, "git checkout of paths discards changes"), true
		}
		if abs, ok := c.resolve(a); ok && c.inside(abs) && c.exists(abs) && abs != c.opts.Workspace {
			return v(Destructive, "git checkout "+a.s+" discards changes to that path"), true
		}
	}
	return verdict{}, false
}

// hasOpt reports whether one of names ("-f", "--force") is given.
func hasOpt(o optview, names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, "--") {
			if o.has("", n[2:]) {
				return true
			}
		} else if o.has(n[1:]) {
			return true
		}
	}
	return false
}

func hasArg(args []arg, s string) bool {
	for _, a := range args {
		if a.s == s {
			return true
		}
	}
	return false
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
