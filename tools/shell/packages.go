package shell

import (
	"path/filepath"
	"strings"
)

// installs records the packages an install names and returns the verdict.
// A package name that is not known statically makes it destructive: the
// user could not be shown what would be installed.
func (c *classifier) installs(what string, pkgs []arg) verdict {
	for _, p := range pkgs {
		if p.dyn {
			return v(Destructive, what+" of a package not known statically: "+p.s)
		}
	}
	for _, p := range pkgs {
		c.pkgs = append(c.pkgs, p.s)
	}
	if len(pkgs) > 0 {
		what += " " + strings.Join(strs(pkgs), " ")
	}
	return v(Install, what)
}

// --- git ---

func (c *classifier) git(name string, args []arg, depth int) verdict {
	vd := c.gitGlobal(name, args, depth).max(c.gitRepo(args))
	if vd.risk == Destructive {
		return vd
	}
	return vd.max(c.gitCmd(args, depth))
}

// gitRepo judges the repository git will use: one other than the
// workspace's own (a nested .git, or a directory that is a git directory by
// content, such as an embedded bare repository shipped as plain files), or
// one outside the workspace, brings a configuration the repository's author
// wrote, which runs commands (core.fsmonitor, hooks, filters, pagers).
func (c *classifier) gitRepo(args []arg) verdict {
	ws := c.opts.Workspace
	if ws == "" {
		return v(Read, "git")
	}
	dir := c.cwd
	if dir == "" {
		// After a cd the classifier cannot follow (which may also be a
		// $(git ...) that ran before it): not judged here.
		return v(Read, "git")
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn || !strings.HasPrefix(a.s, "-") {
			break
		}
		switch {
		case a.s == "-C" && i+1 < len(args):
			i++
			d := args[i]
			if d.dyn || d.tilde {
				dir = ""
			} else if filepath.IsAbs(d.s) {
				dir = c.opts.Realpath(filepath.Clean(d.s))
			} else if dir != "" {
				dir = c.opts.Realpath(filepath.Join(dir, d.s))
			}
		case a.s == "-c" || a.s == "--config-env" || a.s == "--git-dir" || a.s == "--work-tree" || a.s == "--namespace":
			i++
		}
	}
	switch {
	case dir == "":
		return v(Write, "git -C a directory not known statically may use another repository's configuration, which can run commands")
	case !c.inside(dir):
		return v(Write, "git in "+dir+", outside the workspace, uses that repository's configuration, which can run commands")
	}
	for p := dir; ; p = filepath.Dir(p) {
		own := p == ws
		if !own && c.exists(filepath.Join(p, ".git")) {
			return v(Write, "git in "+dir+" uses the nested repository "+p+", whose configuration can run commands (fsmonitor, hooks, filters)")
		}
		if !c.exists(filepath.Join(p, ".git")) && c.exists(filepath.Join(p, "HEAD")) && c.exists(filepath.Join(p, "config")) &&
			(c.exists(filepath.Join(p, "objects")) || c.exists(filepath.Join(p, "refs"))) {
			return v(Write, "git in "+dir+" uses "+p+", a git directory shipped as files, whose configuration can run commands (fsmonitor, hooks, filters)")
		}
		if own || p == filepath.Dir(p) {
			return v(Read, "git")
		}
	}
}

// gitGlobal judges git's options before the subcommand: configuration
// given on the command line (-c) or taken from the environment
// (--config-env), and another repository or work tree.
func (c *classifier) gitGlobal(name string, args []arg, depth int) verdict {
	vd := v(Read, "git")
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn || !strings.HasPrefix(a.s, "-") {
			return vd
		}
		val := ""
		if i+1 < len(args) {
			val = args[i+1].s
		}
		switch {
		case a.s == "-c":
			vd = vd.max(c.gitConfig(val, depth))
			i++
		case a.s == "--config-env" || strings.HasPrefix(a.s, "--config-env="):
			if a.s == "--config-env" {
				i++
			} else {
				val = strings.TrimPrefix(a.s, "--config-env=")
			}
			k, _, _ := strings.Cut(val, "=")
			if gitKeyRunsCommand(strings.ToLower(k)) {
				return v(Destructive, "git --config-env takes "+k+", a command, from the environment")
			}
			vd = vd.max(v(Write, "git --config-env takes configuration from the environment"))
		case a.s == "--git-dir" || a.s == "--work-tree" || strings.HasPrefix(a.s, "--git-dir=") || strings.HasPrefix(a.s, "--work-tree="):
			// Another repository brings its own configuration (fsmonitor,
			// hooks, filters), which runs commands.
			vd = vd.max(v(Write, "git "+a.s+" uses another repository's configuration"))
			if !strings.Contains(a.s, "=") {
				i++
			}
		case a.s == "-C" || a.s == "--namespace":
			i++
		}
	}
	return vd
}

// gitKeyRunsCommand reports configuration keys whose value git runs.
func gitKeyRunsCommand(k string) bool {
	return strings.HasPrefix(k, "alias.") || strings.HasSuffix(k, "sshcommand") || strings.HasSuffix(k, "pager") ||
		strings.HasSuffix(k, "editor") || strings.HasSuffix(k, "fsmonitor") || strings.HasSuffix(k, ".textconv") ||
		strings.HasPrefix(k, "filter.") || strings.HasSuffix(k, ".helper") || strings.HasSuffix(k, "askpass") ||
		strings.HasPrefix(k, "diff.external") || strings.HasSuffix(k, ".command") || strings.HasSuffix(k, ".cmd") ||
		strings.HasPrefix(k, "core.gitproxy") || k == "core.hookspath" || strings.HasPrefix(k, "include") ||
		strings.HasSuffix(k, ".tool") || strings.HasSuffix(k, ".program") || strings.HasSuffix(k, ".path") ||
		strings.HasPrefix(k, "credential") || strings.HasSuffix(k, ".driver") || strings.HasSuffix(k, ".process") ||
		strings.HasSuffix(k, "proxycommand") || strings.HasSuffix(k, "processor")
}

// gitConfig classifies a key=value git setting. Settings that hold
// commands (aliases starting with '!', sshCommand, pager, editor, helpers,
// filters, textconv, fsmonitor, askpass, diff.external) are classified by
// the command, and are at least write.
func (c *classifier) gitConfig(kv string, depth int) verdict {
	k, val, _ := strings.Cut(kv, "=")
	k = strings.ToLower(k)
	for _, safe := range []string{"color.", "user.", "core.quotepath", "log.", "i18n.", "core.abbrev", "advice.", "init.defaultbranch", "format.pretty", "diff.renames", "grep.linenumber", "blame.", "column."} {
		if strings.HasPrefix(k, safe) {
			return v(Read, "git display configuration "+k)
		}
	}
	holdsCmd := strings.HasPrefix(k, "alias.") || strings.HasSuffix(k, "sshcommand") || strings.HasSuffix(k, "pager") ||
		strings.HasSuffix(k, "editor") || strings.HasSuffix(k, "fsmonitor") || strings.HasSuffix(k, ".textconv") ||
		strings.HasPrefix(k, "filter.") || strings.HasSuffix(k, ".helper") || strings.HasSuffix(k, "askpass") ||
		strings.HasPrefix(k, "diff.external") || strings.HasSuffix(k, ".command") || strings.HasSuffix(k, ".cmd") ||
		strings.HasSuffix(k, "proxy") && strings.HasPrefix(k, "core.gitproxy")
	switch {
	case strings.HasPrefix(k, "alias."):
		if strings.HasPrefix(val, "!") {
			return c.nested("git alias", val[1:], depth).max(v(Write, "git alias"))
		}
		return v(Write, "git alias of a git command")
	case k == "core.hookspath":
		return v(Write, "git hooks path (hooks run scripts)")
	case holdsCmd && strings.HasSuffix(k, "pager") && (val == "cat" || val == "less" || val == "more"):
		return v(Read, "git pager "+val)
	case holdsCmd:
		if val == "" || val == "true" || val == "false" {
			return v(Write, "git configuration "+k)
		}
		return c.nested("git "+k, val+" /dev/null", depth).max(v(Write, "git configuration that runs a command: "+k))
	}
	return v(Write, "git configuration")
}

// --- go ---

func (c *classifier) goCmd(name string, args []arg, depth int) verdict {
	s, rest, ok := sub(args, "-C")
	if !ok {
		return v(Destructive, "go subcommand not known statically")
	}
	for i, a := range rest {
		n, val, hasEq := strings.Cut(strings.TrimLeft(a.s, "-"), "=")
		if !strings.HasPrefix(a.s, "-") || (n != "exec" && n != "toolexec" && n != "vettool") {
			continue
		}
		if !hasEq {
			if i+1 >= len(rest) {
				break
			}
			val = rest[i+1].s
			if rest[i+1].dyn {
				return v(Destructive, "go -"+n+" of a program not known statically")
			}
		}
		return c.nested("go -"+n, val+` /dev/null`, depth).max(v(Write, "go "+s+" -"+n+" runs another program"))
	}
	o := parseOpts(rest, "-o", "-C", "-run", "-bench", "-tags", "-ldflags", "-gcflags", "-mod", "-p", "-timeout", "-count", "-coverprofile", "-f", "-json-out", "-modfile", "-exec", "-toolexec", "-overlay", "-pgo")
	switch s {
	case "vet":
		// vet compiles: it writes the build cache, which the read-only
		// sandbox keeps read-only (a poisoned cache entry would run later,
		// outside the sandbox).
		return v(Write, "go vet compiles packages into the build cache")
	case "", "version", "list", "doc", "help":
		if len(o.values["-exec"]) > 0 || len(o.values["-toolexec"]) > 0 {
			return v(Write, "go "+s+" with -exec/-toolexec runs other programs")
		}
		return v(Read, "go "+s+" only reads (it may fill the build cache)")
	case "env":
		if o.has("wu") {
			return v(Write, "go env -w changes the go configuration")
		}
		return v(Read, "go env prints")
	case "get", "install":
		return c.installs("go "+s, o.operands)
	case "run":
		for _, a := range o.operands {
			if strings.Contains(a.s, "@") {
				return c.installs("go run (downloads)", []arg{a})
			}
		}
		return v(Write, "go run builds and runs workspace code")
	case "mod":
		ms, _, _ := sub(rest)
		switch ms {
		case "download", "tidy", "vendor", "verify":
			return v(Network, "go mod "+ms+" may download modules")
		case "graph", "why":
			return v(Read, "go mod "+ms+" only reads")
		}
		return v(Write, "go mod "+ms+" edits go.mod")
	case "work":
		ms, _, _ := sub(rest)
		if ms == "sync" {
			return v(Network, "go work sync may download modules")
		}
		return v(Write, "go work "+ms+" edits go.work")
	}
	return v(Write, "go "+s+" builds, tests or writes files (and writes the build cache)")
}

func (c *classifier) gofmt(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-r")
	if o.has("w") {
		vd := v(Write, "gofmt -w rewrites files")
		for _, f := range o.operands {
			vd = vd.max(c.target(f, "rewrites", false, false))
		}
		return vd
	}
	return v(Read, "gofmt without -w only prints")
}

// --- JavaScript ---

var npmValued = []string{"--registry", "--prefix", "--cache", "-w", "--workspace", "--tag", "--omit", "--include", "--userconfig", "-C", "--dir", "--filter", "-F", "--cwd", "--loglevel"}

var npmInstall = set("install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal",
	"isntall", "add", "ci", "clean-install", "ic", "install-clean", "isntall-clean", "update", "up", "upgrade",
	"udpate", "uninstall", "un", "remove", "rm", "r", "unlink", "link", "ln", "install-test", "it",
	"install-ci-test", "cit", "dedupe", "ddp", "prune", "exec", "x", "dlx", "import", "fetch", "rebuild", "rb")

var npmRead = set("ls", "list", "ll", "la", "help", "root", "prefix", "bin", "explain", "why", "query", "fund",
	"help-search", "completion", "-v", "--version", "-h", "--help", "get", "licenses", "store-path")

var npmNetwork = set("view", "v", "info", "show", "search", "s", "se", "find", "outdated", "audit", "publish",
	"unpublish", "login", "logout", "whoami", "ping", "deprecate", "dist-tag", "owner", "token", "star",
	"unstar", "access", "org", "team", "adduser", "hook", "doctor", "repo", "docs", "bugs", "home", "sbom")

func (c *classifier) jsPM(name string, s string, rest []arg, noArgInstall bool) verdict {
	o := parseOpts(rest, npmValued...)
	switch {
	case s == "" && noArgInstall:
		return c.installs(name+" install", nil)
	case s == "":
		return v(Read, name+" prints help")
	case s == "audit" && len(o.operands) > 0 && o.operands[0].s == "fix":
		return c.installs(name+" audit fix", nil)
	case s == "global" && len(o.operands) > 0:
		return c.installs(name+" global "+o.operands[0].s, o.operands[1:])
	case npmInstall[s]:
		pk := o.operands
		if s == "exec" || s == "x" || s == "dlx" {
			if len(pk) > 1 {
				pk = pk[:1]
			}
		}
		return c.installs(name+" "+s, pk)
	case npmRead[s]:
		return v(Read, name+" "+s+" only reads")
	case npmNetwork[s]:
		return v(Network, name+" "+s+" uses the registry")
	case s == "config" || s == "c":
		if len(o.operands) > 0 && (o.operands[0].s == "get" || o.operands[0].s == "list" || o.operands[0].s == "ls") {
			return v(Read, name+" config reads")
		}
		return v(Write, name+" config changes configuration")
	case s == "version" && len(o.operands) == 0:
		return v(Read, name+" version prints")
	}
	return v(Write, name+" "+s+" runs package scripts or writes files")
}

func (c *classifier) npm(name string, args []arg, _ int) verdict {
	s, rest, ok := sub(args, npmValued...)
	if !ok {
		return v(Destructive, name+" subcommand not known statically")
	}
	return c.jsPM(name, s, rest, false)
}

func (c *classifier) pnpm(name string, args []arg, _ int) verdict {
	s, rest, ok := sub(args, npmValued...)
	if !ok {
		return v(Destructive, name+" subcommand not known statically")
	}
	return c.jsPM(name, s, rest, false)
}

func (c *classifier) yarn(name string, args []arg, _ int) verdict {
	s, rest, ok := sub(args, npmValued...)
	if !ok {
		return v(Destructive, name+" subcommand not known statically")
	}
	return c.jsPM(name, s, rest, true)
}

func (c *classifier) bun(name string, args []arg, _ int) verdict {
	s, rest, ok := sub(args, npmValued...)
	if !ok {
		return v(Destructive, name+" subcommand not known statically")
	}
	if s == "i" || s == "a" {
		s = "install"
	}
	return c.jsPM(name, s, rest, false)
}

func (c *classifier) npx(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-p", "--package", "-c", "--call", "--from", "--with", "--python")
	if o.has("", "no-install", "offline") {
		return v(Write, name+" runs a locally installed package")
	}
	pk := append(o.values["-p"], o.values["--package"]...)
	pk = append(pk, o.values["--from"]...)
	var pa []arg
	for _, p := range pk {
		pa = append(pa, arg{s: p})
	}
	if len(pa) == 0 && len(o.operands) > 0 {
		pa = o.operands[:1]
	}
	return c.installs(name+" (may download and run)", pa)
}

// --- Python ---

func (c *classifier) pip(name string, args []arg, _ int) verdict {
	s, rest, ok := sub(args, "--index-url", "-i", "--extra-index-url", "--proxy", "--python", "--target", "-t", "--cache-dir")
	if !ok {
		return v(Destructive, name+" subcommand not known statically")
	}
	o := parseOpts(rest, "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
		"--extra-index-url", "-t", "--target", "--prefix", "--root", "--python", "-f", "--find-links", "--platform",
		"--python-version", "--implementation", "--abi", "--no-binary", "--only-binary", "-d", "--dest", "--progress-bar")
	switch s {
	case "install", "uninstall", "sync", "compile":
		if s == "compile" {
			return v(Network, name+" compile resolves packages")
		}
		pk := append([]arg{}, o.operands...)
		for _, f := range []string{"-r", "--requirement", "-c", "--constraint", "-e", "--editable"} {
			for _, val := range o.values[f] {
				flag := f
				if f == "--requirement" {
					flag = "-r"
				} else if f == "--editable" {
					flag = "-e"
				} else if f == "--constraint" {
					flag = "-c"
				}
				pk = append(pk, arg{s: flag + " " + val})
			}
		}
		return c.installs(name+" "+s, pk)
	case "download", "wheel", "search", "index":
		return v(Network, name+" "+s+" uses the network")
	case "list", "show", "freeze", "check", "help", "debug", "inspect", "", "tree":
		return v(Read, name+" "+s+" only reads")
	case "config", "cache":
		sub2, _, _ := sub(rest)
		if sub2 == "list" || sub2 == "get" || sub2 == "dir" || sub2 == "info" || sub2 == "debug" {
			return v(Read, name+" "+s+" "+sub2)
		}
		return v(Write, name+" "+s+" "+sub2)
	}
	if strings.HasPrefix(s, "-") || s == "--version" {
		return v(Read, name+" "+s)
	}
	return v(Write, name+" "+s)
}

func (c *classifier) uv(name string, args []arg, depth int) verdict {
	s, rest, ok := sub(args, "--directory", "--project", "--python", "-p", "--cache-dir")
	if !ok {
		return v(Destructive, name+" subcommand not known statically")
	}
	o := parseOpts(rest, "--python", "-p", "--with", "--from", "--group", "--extra", "--index", "--default-index", "--directory", "--project", "-r", "--requirements")
	switch s {
	case "pip":
		return c.pip("uv pip", rest, depth)
	case "add", "remove":
		return c.installs("uv "+s, o.operands)
	case "sync", "lock", "run":
		return c.installs("uv "+s+" (syncs the environment)", nil)
	case "tool":
		ts, trest, _ := sub(rest)
		switch ts {
		case "list", "dir":
			return v(Read, "uv tool "+ts)
		}
		to := parseOpts(trest, "--with", "--from", "--python", "-p")
		pk := to.operands
		if len(pk) > 1 {
			pk = pk[:1]
		}
		return c.installs("uv tool "+ts, pk)
	case "python":
		ps, prest, _ := sub(rest)
		if ps == "list" || ps == "find" || ps == "dir" {
			return v(Read, "uv python "+ps)
		}
		return c.installs("uv python "+ps, parseOpts(prest).operands)
	case "venv", "init", "build", "cache", "export", "format":
		return v(Write, "uv "+s)
	case "publish", "tree":
		return v(Network, "uv "+s+" uses the network")
	case "", "version", "help", "--version":
		return v(Read, "uv "+s)
	}
	return v(Write, "uv "+s)
}

func (c *classifier) pipx(name string, args []arg, _ int) verdict {
	s, rest, _ := sub(args)
	switch s {
	case "list", "environment", "", "--version":
		return v(Read, "pipx "+s)
	}
	o := parseOpts(rest, "--python", "--spec", "--pip-args", "--suffix")
	pk := o.operands
	if (s == "run" || s == "inject") && len(pk) > 1 {
		pk = pk[:1]
		if s == "inject" && len(o.operands) > 1 {
			pk = o.operands[1:]
		}
	}
	return c.installs("pipx "+s, pk)
}

func (c *classifier) poetry(name string, args []arg, _ int) verdict {
	s, rest, _ := sub(args)
	switch s {
	case "add", "remove", "install", "update", "lock", "sync":
		return c.installs("poetry "+s, parseOpts(rest, "-G", "--group", "-E", "--extras", "--source").operands)
	case "show", "check", "about", "list", "", "--version", "env", "search":
		if s == "search" {
			return v(Network, "poetry search")
		}
		return v(Read, "poetry "+s)
	case "publish":
		return v(Network, "poetry publish")
	}
	return v(Write, "poetry "+s)
}

func (c *classifier) conda(name string, args []arg, _ int) verdict {
	s, rest, _ := sub(args)
	switch s {
	case "list", "info", "", "--version", "config-show":
		return v(Read, name+" "+s)
	case "search":
		return v(Network, name+" search")
	case "run", "activate", "deactivate":
		return v(Write, name+" "+s)
	}
	return c.installs(name+" "+s, parseOpts(rest, "-n", "--name", "-c", "--channel", "-p", "--prefix", "--file").operands)
}

// --- other ecosystems ---

func (c *classifier) gem(name string, args []arg, _ int) verdict {
	s, rest, _ := sub(args)
	switch s {
	case "install", "i", "uninstall", "update", "cleanup":
		return c.installs("gem "+s, parseOpts(rest, "-v", "--version", "-i", "--install-dir", "-s", "--source").operands)
	case "list", "query", "environment", "which", "contents", "spec", "specification", "help", "", "--version", "info":
		return v(Read, "gem "+s)
	case "search", "push", "fetch", "owner", "yank", "signin":
		return v(Network, "gem "+s)
	}
	return v(Write, "gem "+s)
}

func (c *classifier) bundle(name string, args []arg, _ int) verdict {
	s, rest, _ := sub(args)
	switch s {
	case "", "install", "add", "update", "remove", "lock", "binstubs", "cache", "pristine":
		return c.installs("bundle "+s, parseOpts(rest, "--version", "--group", "--source", "--path", "--jobs", "-j").operands)
	case "exec":
		return v(Write, "bundle exec runs a program")
	case "check", "list", "show", "info", "config", "platform", "--version", "version", "help":
		return v(Read, "bundle "+s)
	case "outdated":
		return v(Network, "bundle outdated")
	}
	return v(Write, "bundle "+s)
}

func (c *classifier) cargo(name string, args []arg, _ int) verdict {
	s, rest, ok := sub(args, "-Z", "--config", "-C", "--color")
	if !ok {
		return v(Destructive, "cargo subcommand not known statically")
	}
	o := parseOpts(rest, "--version", "--vers", "--git", "--path", "--branch", "--tag", "--rev", "-F", "--features",
		"-p", "--package", "--root", "--registry", "--index", "--rename", "--target", "-j", "--jobs", "--bin", "--example")
	switch s {
	case "add", "install", "uninstall", "remove", "rm", "binstall":
		pk := append([]arg{}, o.operands...)
		if vs := append(o.values["--version"], o.values["--vers"]...); len(vs) == 1 && len(pk) == 1 {
			pk[0].s += "@" + vs[0]
		}
		for _, g := range o.values["--git"] {
			pk = append(pk, arg{s: "--git " + g})
		}
		return c.installs("cargo "+s, pk)
	case "fetch", "update", "search", "publish", "login", "logout", "yank", "owner", "metadata", "vendor", "generate-lockfile", "info":
		return v(Network, "cargo "+s+" uses the network")
	case "tree", "version", "--version", "-V", "locate-project", "verify-project", "help", "pkgid", "read-manifest", "":
		return v(Read, "cargo "+s)
	}
	return v(Write, "cargo "+s+" builds, runs or writes files")
}

func (c *classifier) brew(name string, args []arg, _ int) verdict {
	s, rest, _ := sub(args)
	switch s {
	case "install", "reinstall", "upgrade", "uninstall", "remove", "rm", "tap", "untap", "update", "link", "unlink", "cleanup", "autoremove", "bundle", "pin", "unpin":
		return c.installs("brew "+s, parseOpts(rest).operands)
	case "search", "fetch", "livecheck":
		return v(Network, "brew "+s)
	case "list", "ls", "info", "deps", "uses", "leaves", "config", "doctor", "--version", "--prefix", "--cellar", "--cache", "outdated", "desc", "", "help", "commands", "shellenv":
		return v(Read, "brew "+s)
	}
	return v(Write, "brew "+s)
}

func (c *classifier) composer(name string, args []arg, _ int) verdict {
	s, rest, _ := sub(args)
	switch s {
	case "require", "install", "update", "remove", "create-project", "global", "upgrade", "reinstall":
		return c.installs("composer "+s, parseOpts(rest).operands)
	case "show", "validate", "diagnose", "licenses", "", "--version", "list", "help", "depends", "why", "prohibits", "why-not":
		return v(Read, "composer "+s)
	case "outdated", "search", "audit":
		return v(Network, "composer "+s)
	}
	return v(Write, "composer "+s)
}

var sysRead = set("search", "show", "list", "policy", "info", "depends", "rdepends", "showpkg", "madison",
	"provides", "whatprovides", "check", "history", "repolist", "query", "find", "help", "--version", "-v", "version",
	"changelog", "files", "deplist", "ls", "dump", "status")

var sysNetwork = set("download", "source", "fetch", "makecache")

func (c *classifier) apt(name string, args []arg, _ int) verdict {
	s, rest, ok := sub(args, "-o", "-c", "-t", "--option", "--config-file", "--target-release", "-X", "--repository", "--root", "-p", "--installroot", "--releasever", "--enablerepo", "--disablerepo")
	if !ok {
		return v(Destructive, name+" subcommand not known statically")
	}
	switch {
	case sysRead[s] || (s == "" && name != "nix-env"):
		return v(Read, name+" "+s+" only reads")
	case sysNetwork[s]:
		return v(Network, name+" "+s+" uses the network")
	case s == "clean" || s == "autoclean":
		return v(Write, name+" "+s+" clears caches")
	}
	pk := parseOpts(rest, "-o", "-t", "--option", "--target-release", "-X", "--repository", "--channel").operands
	if name == "nix-env" && s == "" {
		o := parseOpts(args, "-f", "-A", "-p", "--file", "--attr", "--profile")
		if o.has("q", "query") {
			return v(Read, "nix-env -q")
		}
		pk = o.operands
	}
	return c.installs(name+" "+s, pk)
}

func (c *classifier) pacman(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-r", "--root", "-b", "--dbpath", "--config", "--cachedir")
	op := ""
	for _, a := range args {
		if strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && len(a.s) > 1 {
			op = a.s[1:]
			break
		}
	}
	switch {
	case strings.HasPrefix(op, "Q") || strings.HasPrefix(op, "F") || strings.HasPrefix(op, "T") || op == "V" || op == "h":
		return v(Read, "pacman -"+op)
	case strings.HasPrefix(op, "S") && (strings.ContainsAny(op, "si") && !strings.Contains(op, "y") && !strings.Contains(op, "u")) && len(o.operands) <= 1 && op != "S":
		return v(Read, "pacman -"+op+" queries the sync database")
	}
	return c.installs("pacman -"+op, o.operands)
}

func (c *classifier) dpkg(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "--root", "--admindir", "--instdir", "--force")
	if o.has("lLsSIcp", "list", "listfiles", "status", "search", "info", "contents", "print-architecture", "print-foreign-architectures", "get-selections", "version", "help", "compare-versions", "audit", "verify") {
		return v(Read, "dpkg query")
	}
	if o.has("irPa", "install", "remove", "purge", "unpack", "configure", "set-selections", "clear-selections", "add-architecture", "remove-architecture") {
		return c.installs("dpkg", o.operands)
	}
	return v(Write, "dpkg")
}

func (c *classifier) rpm(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "--root", "--dbpath")
	if o.has("qV", "query", "verify", "version", "help") {
		return v(Read, "rpm query")
	}
	if o.has("iUFe", "install", "upgrade", "freshen", "erase", "reinstall") {
		pk := o.operands
		for i := range pk {
			pk[i].s = filepath.ToSlash(pk[i].s)
		}
		return c.installs("rpm", pk)
	}
	return v(Write, "rpm")
}
