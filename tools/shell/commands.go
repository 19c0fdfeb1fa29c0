package shell

import (
	"path/filepath"
	"strings"
)

var readCmds = set(
	"ls", "ll", "la", "dir", "vdir", "cat", "tac", "head", "tail", "less", "more", "wc",
	"rg", "grep", "egrep", "fgrep", "zgrep", "ag", "ack", "nl", "od", "hexdump", "strings",
	"file", "stat", "du", "df", "tree", "pwd", "which", "whereis", "type", "echo", "printf",
	"true", "false", ":", "test", "[", "basename", "dirname", "realpath", "readlink", "cut",
	"tr", "diff", "cmp", "comm", "column", "paste", "join", "fold", "fmt", "expand",
	"unexpand", "rev", "seq", "yes", "sleep", "date", "cal", "uptime", "whoami", "id",
	"groups", "uname", "ps", "pgrep", "pstree", "top", "free", "vmstat", "lsof", "lsblk",
	"lscpu", "printenv", "locale", "man", "info", "help", "history", "jobs", "wait",
	"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum",
	"cksum", "sum", "base64", "base32", "zcat", "bzcat", "xzcat", "zless", "jq", "gron",
	"tokei", "cloc", "scc", "ldd", "nm", "objdump", "readelf", "getconf", "nproc", "tput",
	"clear", "cd", "pushd", "popd", "dirs", "set", "unset", "shift", "read", "export",
	"alias", "unalias", "hash", "ulimit", "umask", "shopt", "declare", "local", "readonly",
	"typeset", "getopts", "return", "exit", "break", "continue", "bc", "expr", "numfmt",
	"look", "xmllint", "diffstat", "lsattr", "iconv", "envsubst", "shellcheck", "mapfile",
	"readarray", "let", "logname", "tty", "arch", "hostid", "stty", "apt-cache", "dpkg-query", "netstat", "ss", "getent", "lsns",
)

var writeCmds = set(
	"patch", "zip", "7z",
	"make", "gmake", "cmake", "ninja", "bazel", "meson", "mvn", "gradle", "gradlew", "ant",
	"prettier", "eslint", "black", "ruff", "isort", "rustfmt", "clang-format", "tsc",
	"pytest", "jest", "vitest", "mocha", "dotnet", "javac", "java", "gcc", "g++", "clang",
	"clang++", "cc", "c++", "rustc", "ld", "protoc", "sqlite3", "mktemp", "split", "csplit",
	"ssh-keygen", "gpg", "vim", "vi", "nano", "emacs", "code", "renice", "mkfifo",
	"golangci-lint", "staticcheck", "mypy", "tox", "nox", "rake", "swift", "zig", "deno",
)

var networkCmds = set(
	"curl", "wget", "ftp", "lftp", "tftp", "nc", "ncat", "netcat",
	"socat", "telnet", "ping", "ping6", "dig", "nslookup", "host", "whois", "traceroute",
	"tracepath", "mtr", "aria2c", "http", "https", "xh", "httpie", "nmap", "ngrok", "wscat",
	"grpcurl", "gh", "hub", "aws", "gcloud", "gsutil", "az", "rclone", "ssh-keyscan",
	"ssh-copy-id", "git-lfs", "helm", "terraform", "doctl", "flyctl",
	"heroku", "vercel", "netlify", "s3cmd", "websocat", "arp", "arping",
)

var destructiveCmds = set(
	"dd", "shred", "wipefs", "mkswap", "fdisk", "sfdisk", "gdisk", "cfdisk", "parted",
	"blkdiscard", "hdparm", "shutdown", "reboot", "halt", "poweroff", "init", "telinit",
	"swapoff", "swapon", "mount", "umount", "losetup", "insmod", "rmmod", "modprobe",
	"iptables", "ip6tables", "nft", "ufw", "passwd", "chpasswd", "useradd", "userdel",
	"usermod", "groupadd", "groupdel", "visudo", "chroot", "pkill", "killall", "truncate",
	"sudo", "doas", "su", "pkexec", "runuser", "run0", "eval", "srm", "wipe", "mkfs",
	"kexec", "setenforce", "chattr", "cryptsetup", "lvremove", "vgremove", "pvremove",
	"zpool", "zfs", "debugfs", "firewall-cmd", "launchctl", "diskutil", "format",
	"at", "batch", "systemd-run", "nsenter", "unshare", "tmux", "screen", "byobu", "enable", "expect",
	// D-Bus clients: the session bus starts programs outside the sandbox
	// (systemd's StartTransientUnit).
	"busctl", "gdbus", "dbus-send", "qdbus", "dbus-run-session", "systemd-run0",
)

// dynSensitive: commands whose options can make them write files or run
// programs. With an argument not known statically they are classified at
// least this high.
var dynSensitive = map[string]Risk{
	"find": Destructive, "fd": Destructive, "fdfind": Destructive, "sed": Destructive, "sort": Destructive,
	"uniq": Destructive, "xxd": Destructive, "yq": Destructive, "tar": Destructive, "unzip": Destructive,
	"awk": Destructive, "gawk": Destructive, "mawk": Destructive, "nawk": Destructive, "gofmt": Destructive,
	"rg": Destructive, "git": Write, "go": Write, "hash": Destructive, "mapfile": Destructive,
	"readarray": Destructive, "tee": Destructive, "touch": Destructive, "alias": Destructive,
	"gzip": Destructive, "gunzip": Destructive, "bzip2": Destructive, "bunzip2": Destructive, "xz": Destructive,
	"unxz": Destructive, "zstd": Destructive, "ssh": Destructive, "scp": Destructive, "sftp": Destructive,
	"rsync": Destructive, "script": Destructive, "ln": Destructive, "dc": Destructive,
	"less": Write, "more": Write, "zless": Write, "most": Write,
}

var shells = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox-sh", "fish", "csh", "tcsh")

var interpreters = set("python", "python2", "python3", "node", "nodejs", "perl", "ruby", "php", "lua", "luajit", "Rscript", "R", "julia", "tclsh", "irb", "pypy", "pypy3", "osascript")

// command classifies one simple command given as words (already stripped of
// assignments). depth bounds recursion through wrappers and sh -c.
func (c *classifier) command(args []arg, depth int) verdict {
	if len(args) == 0 {
		return v(Read, "no command")
	}
	if depth > maxDepth {
		return v(Destructive, "command nesting too deep to analyse")
	}
	name, ok := cmdName(args[0])
	if !ok {
		return v(Destructive, "command name is not known statically: "+args[0].text())
	}
	rest := args[1:]
	if strings.HasPrefix(name, "pip") && len(name) > 3 && strings.Trim(name[3:], "0123456789.") == "" {
		name = "pip"
	}
	if strings.HasPrefix(name, "python") && len(name) > 6 && strings.Trim(name[6:], "0123456789.") == "" {
		name = "python"
	}
	if strings.HasPrefix(name, "mkfs") || strings.HasPrefix(name, "mke2fs") {
		return v(Destructive, name+" formats a file system")
	}
	if h, ok := handlers[name]; ok {
		vd := h(c, name, rest, depth)
		if r, ok := dynSensitive[name]; ok && vd.risk.Rank() < r.Rank() && anyOptDyn(rest) {
			return v(r, name+" with arguments not known statically (they could select a "+string(r)+" mode)")
		}
		return vd
	}
	switch {
	case readCmds[name]:
		return v(Read, name+" only reads")
	case writeCmds[name]:
		return v(Write, name+" writes files or runs builds")
	case networkCmds[name]:
		return v(Network, name+" uses the network")
	case destructiveCmds[name]:
		return v(Destructive, name+" is destructive or escalates privileges")
	case shells[name]:
		return c.shell(name, rest, depth)
	case interpreters[name]:
		return c.interpreter(name, rest, depth)
	}
	return v(Write, "unknown command "+name+" (assumed to write)")
}

type handler func(c *classifier, name string, args []arg, depth int) verdict

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"rm": (*classifier).rm, "rmdir": (*classifier).rmdir, "unlink": (*classifier).rmdir,
		"git": (*classifier).git, "go": (*classifier).goCmd, "gofmt": (*classifier).gofmt,
		"npm": (*classifier).npm, "pnpm": (*classifier).pnpm, "yarn": (*classifier).yarn,
		"bun": (*classifier).bun, "npx": (*classifier).npx, "pnpx": (*classifier).npx,
		"bunx": (*classifier).npx, "pip": (*classifier).pip, "pip3": (*classifier).pip,
		"uv": (*classifier).uv, "uvx": (*classifier).npx, "pipx": (*classifier).pipx,
		"poetry": (*classifier).poetry, "conda": (*classifier).conda, "mamba": (*classifier).conda,
		"gem": (*classifier).gem, "bundle": (*classifier).bundle, "cargo": (*classifier).cargo,
		"brew": (*classifier).brew, "composer": (*classifier).composer,
		"apt": (*classifier).apt, "apt-get": (*classifier).apt, "aptitude": (*classifier).apt,
		"yum": (*classifier).apt, "dnf": (*classifier).apt, "microdnf": (*classifier).apt,
		"zypper": (*classifier).apt, "apk": (*classifier).apt, "snap": (*classifier).apt,
		"flatpak": (*classifier).apt, "port": (*classifier).apt, "pacman": (*classifier).pacman,
		"dpkg": (*classifier).dpkg, "rpm": (*classifier).rpm, "nix-env": (*classifier).apt,
		"find": (*classifier).find, "fd": (*classifier).fd, "fdfind": (*classifier).fd,
		"xargs": (*classifier).xargs, "parallel": (*classifier).parallel,
		"env": (*classifier).env, "command": (*classifier).commandBuiltin,
		"builtin": (*classifier).wrapper, "exec": (*classifier).wrapper, "nohup": (*classifier).wrapper,
		"time": (*classifier).wrapper, "nice": (*classifier).wrapper, "ionice": (*classifier).wrapper,
		"timeout": (*classifier).timeoutCmd, "stdbuf": (*classifier).wrapper, "setsid": (*classifier).wrapper,
		"unbuffer": (*classifier).wrapper, "strace": (*classifier).wrapper, "ltrace": (*classifier).wrapper,
		"chrt": (*classifier).wrapper, "taskset": (*classifier).wrapper, "caffeinate": (*classifier).wrapper,
		"watch": (*classifier).watch, "flock": (*classifier).flock,
		"source": (*classifier).source, ".": (*classifier).source, "trap": (*classifier).trap,
		"sed": (*classifier).sed, "awk": (*classifier).awk, "gawk": (*classifier).awk,
		"mawk": (*classifier).awk, "nawk": (*classifier).awk, "sort": (*classifier).sortCmd,
		"uniq": (*classifier).uniq, "tee": (*classifier).tee, "touch": (*classifier).touch,
		"mkdir": (*classifier).mkdir, "cp": (*classifier).cp, "mv": (*classifier).cp,
		"ln": (*classifier).cp, "install": (*classifier).cp, "chmod": (*classifier).chmod,
		"chown": (*classifier).chmod, "chgrp": (*classifier).chmod, "setfacl": (*classifier).chmod,
		"kill": (*classifier).kill, "cd": (*classifier).cd, "pushd": (*classifier).cd,
		"rsync": (*classifier).rsync, "tar": (*classifier).tar, "docker": (*classifier).docker,
		"podman": (*classifier).docker, "kubectl": (*classifier).kubectl,
		"systemctl": (*classifier).systemctl, "service": (*classifier).service,
		"hostname": (*classifier).hostname, "crontab": (*classifier).crontab,
		"yq": (*classifier).yq, "xxd": (*classifier).xxd, "openssl": (*classifier).openssl,
		"sysctl": (*classifier).sysctl, "unzip": (*classifier).unzip,
		"hash": (*classifier).hash, "mapfile": (*classifier).mapfile, "readarray": (*classifier).mapfile,
		"script": (*classifier).scriptCmd, "rg": (*classifier).rg, "ssh": (*classifier).ssh,
		"scp": (*classifier).ssh, "sftp": (*classifier).ssh, "alias": (*classifier).alias,
		"popd": (*classifier).popd, "ip": (*classifier).netcfg, "ifconfig": (*classifier).netcfg,
		"route": (*classifier).netcfg, "gzip": (*classifier).compress, "gunzip": (*classifier).compress,
		"bzip2": (*classifier).compress, "bunzip2": (*classifier).compress, "xz": (*classifier).compress,
		"unxz": (*classifier).compress, "zstd": (*classifier).compress, "busybox": (*classifier).busybox,
		"iconv": (*classifier).outputFlag, "tree": (*classifier).outputFlag, "info": (*classifier).outputFlag,
		"xmllint": (*classifier).outputFlag, "history": (*classifier).history, "ldd": (*classifier).ldd,
		"man": (*classifier).man,
		"dc":  (*classifier).dc, "less": (*classifier).pager, "more": (*classifier).pager,
		"zless": (*classifier).pager, "most": (*classifier).pager, "date": (*classifier).date,
		"nm": (*classifier).nm, "ss": (*classifier).ss,
		"printf": (*classifier).varNames, "read": (*classifier).varNames, "unset": (*classifier).varNames,
		"wait": (*classifier).varNames, "export": (*classifier).varNames, "local": (*classifier).varNames,
		"declare": (*classifier).varNames, "typeset": (*classifier).varNames, "readonly": (*classifier).varNames,
		"getopts": (*classifier).varNames, "test": (*classifier).varNames, "[": (*classifier).varNames,
	}
}

// --- removal ---

func (c *classifier) rm(name string, args []arg, _ int) verdict {
	o := parseOpts(args)
	if o.has("rRf", "recursive", "force", "no-preserve-root") {
		return v(Destructive, "rm with -r/-f")
	}
	if len(o.operands) == 0 {
		return v(Read, "rm without operands does nothing")
	}
	return c.removes(name, o.operands)
}

func (c *classifier) rmdir(name string, args []arg, _ int) verdict {
	o := parseOpts(args)
	return c.removes(name, o.operands)
}

func (c *classifier) removes(name string, ops []arg) verdict {
	vd := v(Write, name+" of files inside the workspace")
	for _, a := range ops {
		abs, ok := c.resolve(a)
		switch {
		case !ok:
			return v(Destructive, name+" of a path not known statically: "+a.text())
		case !c.inside(abs) || abs == c.opts.Workspace:
			return v(Destructive, name+" outside the workspace (or of the workspace itself): "+abs)
		}
	}
	return vd
}

// --- wrappers ---

// wrapperValued lists flags taking a value, per wrapper.
var wrapperValued = map[string][]string{
	"exec":       {"-a"},
	"time":       {"-o", "-f", "--output", "--format"},
	"nice":       {"-n", "--adjustment"},
	"ionice":     {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"},
	"stdbuf":     {"-i", "-o", "-e"},
	"strace":     {"-e", "-o", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-S", "-X"},
	"ltrace":     {"-e", "-o", "-p", "-s", "-u", "-a", "-n"},
	"chrt":       {"-p"},
	"caffeinate": {"-t", "-w"},
}

// skipFlags drops leading flags (and values of valued flags) and returns
// the remaining words.
func skipFlags(args []arg, valued ...string) []arg {
	takes := set(valued...)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			return args[i:]
		}
		if a.s == "--" {
			return args[i+1:]
		}
		if !strings.HasPrefix(a.s, "-") || a.s == "-" {
			return args[i:]
		}
		if takes[a.s] {
			i++
		}
	}
	return nil
}

func (c *classifier) inner(via string, args []arg, depth int) verdict {
	if len(args) == 0 {
		return v(Read, via+" without a command")
	}
	vd := c.command(args, depth+1)
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = a.text()
	}
	c.parts = append(c.parts, Part{Command: strings.Join(words, " "), Risk: vd.risk, Reason: vd.reason, Via: via})
	vd.reason = "via " + via + ": " + vd.reason
	return vd
}

func (c *classifier) wrapper(name string, args []arg, depth int) verdict {
	rest := skipFlags(args, wrapperValued[name]...)
	out := v(Read, name)
	if name == "time" || name == "strace" || name == "ltrace" {
		// Their own output goes to a file: -o FILE, --output=FILE;
		// strace -o '|cmd' pipes it to a command.
		o := parseOpts(args[:len(args)-len(rest)], wrapperValued[name]...)
		for _, f := range append(o.values["-o"], o.values["--output"]...) {
			switch {
			case strings.HasPrefix(f, "|") || strings.HasPrefix(f, "!"):
				out = out.max(c.nested(name+" -o", f[1:], depth).max(v(Write, name+" -o pipes its output to a command")))
			default:
				out = out.max(c.target(lit(f), name+" -o writes", true, false))
			}
		}
		if a, ok := o.long["output"]; ok && a != "" {
			out = out.max(c.target(lit(a), name+" --output writes", true, false))
		}
	}
	switch name {
	case "nice":
		// nice -5 cmd (old syntax) is handled by skipFlags.
	case "taskset":
		if len(rest) > 0 {
			rest = rest[1:] // the mask
		}
	case "chrt":
		if len(rest) > 0 {
			rest = rest[1:] // the priority
		}
	}
	return out.max(c.inner(name, rest, depth))
}

func (c *classifier) commandBuiltin(name string, args []arg, depth int) verdict {
	o := parseOpts(args)
	if o.has("vV") {
		return v(Read, "command -v looks a name up")
	}
	return c.inner(name, skipFlags(args), depth)
}

func (c *classifier) timeoutCmd(name string, args []arg, depth int) verdict {
	rest := skipFlags(args, "-s", "-k", "--signal", "--kill-after")
	if len(rest) > 0 {
		rest = rest[1:] // the duration
	}
	return c.inner(name, rest, depth)
}

func (c *classifier) env(name string, args []arg, depth int) verdict {
	vd := v(Read, "env prints the environment")
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.dyn:
			return v(Destructive, "env with an argument not known statically")
		case a.s == "-S" || a.s == "--split-string" || strings.HasPrefix(a.s, "--split-string="):
			s := strings.TrimPrefix(a.s, "--split-string=")
			if s == a.s {
				if i+1 >= len(args) || args[i+1].dyn {
					return v(Destructive, "env -S with a dynamic string")
				}
				s = args[i+1].s
			}
			return vd.max(c.nested("env -S", s, depth))
		case a.s == "-u" || a.s == "-C" || a.s == "--unset" || a.s == "--chdir":
			i++
		case a.s == "--":
		case strings.HasPrefix(a.s, "-"):
		case strings.Contains(a.s, "="):
			n, val, _ := strings.Cut(a.s, "=")
			vd = vd.max(c.assign(n, arg{s: val}, depth))
		default:
			return vd.max(c.inner(name, args[i:], depth))
		}
	}
	return vd
}

func (c *classifier) xargs(name string, args []arg, depth int) verdict {
	valued := []string{"-n", "-L", "-I", "-P", "-d", "-E", "-s", "-a", "--max-args", "--max-lines",
		"--max-procs", "--delimiter", "--eof", "--arg-file", "--max-chars", "--replace"}
	o := parseOpts(args, valued...)
	rest := skipFlags(args, valued...)
	repl := ""
	if vs := o.values["-I"]; len(vs) > 0 {
		repl = vs[0]
	} else if vs := o.values["--replace"]; len(vs) > 0 {
		repl = vs[0]
	} else if o.has("i") {
		repl = "{}"
	}
	if len(rest) == 0 {
		return v(Read, "xargs echo")
	}
	in := make([]arg, 0, len(rest)+1)
	for _, a := range rest {
		if repl != "" && strings.Contains(a.s, repl) {
			a.dyn, a.hole = true, a.s == repl
		}
		in = append(in, a)
	}
	if repl == "" {
		in = append(in, arg{s: "<stdin>", dyn: true, hole: true})
	}
	return c.inner(name, in, depth)
}

func (c *classifier) parallel(name string, args []arg, depth int) verdict {
	rest := skipFlags(args, "-j", "-S", "--jobs", "--sshlogin")
	var in []arg
	for _, a := range rest {
		if a.s == ":::" || a.s == "::::" {
			break
		}
		in = append(in, a)
	}
	if len(in) == 1 && !in[0].dyn && strings.ContainsAny(in[0].s, " \t;|&") {
		s := in[0].s
		if !strings.Contains(s, "{") {
			s += " {}"
		}
		return c.nested(name, strings.ReplaceAll(s, "{}", `"$PARALLEL_ARG"`), depth)
	}
	for i := range in {
		if strings.Contains(in[i].s, "{") {
			in[i].dyn, in[i].hole = true, in[i].s == "{}"
		}
	}
	in = append(in, arg{s: "<input>", dyn: true, hole: true})
	return c.inner(name, in, depth)
}

func (c *classifier) watch(name string, args []arg, depth int) verdict {
	rest := skipFlags(args, "-n", "-d", "--interval", "--differences")
	if len(rest) == 1 {
		if rest[0].dyn {
			return v(Destructive, "watch of a dynamic command string")
		}
		return c.nested(name, rest[0].s, depth)
	}
	return c.inner(name, rest, depth)
}

func (c *classifier) flock(name string, args []arg, depth int) verdict {
	o := parseOpts(args, "-c", "--command", "-w", "--timeout", "-E")
	if cs := append(o.values["-c"], o.values["--command"]...); len(cs) > 0 {
		return c.nested(name, cs[0], depth)
	}
	rest := skipFlags(args, "-w", "--timeout", "-E")
	if len(rest) > 0 {
		rest = rest[1:] // the lock file
	}
	return c.inner(name, rest, depth)
}

// nested classifies a literal shell string run by another command.
func (c *classifier) nested(via, src string, depth int) verdict {
	r, perr := c.script(src, depth+1)
	if perr != "" {
		return v(Destructive, via+" runs a string that does not parse")
	}
	return v(r, via+" runs: "+src)
}

func (c *classifier) shell(name string, args []arg, depth int) verdict {
	cflag := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			return v(Destructive, name+" with arguments not known statically")
		}
		switch {
		case a.s == "--version" || a.s == "--help":
			return v(Read, name+" "+a.s)
		case a.s == "--rcfile" || a.s == "--init-file":
			i++
		case a.s == "--":
			i++
			if i < len(args) {
				a = args[i]
			}
			goto operand
		case strings.HasPrefix(a.s, "--"):
		case len(a.s) > 1 && (a.s[0] == '-' || a.s[0] == '+'):
			letters := a.s[1:]
			if strings.ContainsAny(letters, "oO") {
				i++ // the option name
			}
			if strings.Contains(letters, "c") {
				cflag = true
			}
			if strings.Contains(letters, "s") && a.s[0] == '-' {
				return v(Destructive, name+" -s executes code from standard input")
			}
		default:
			goto operand
		}
		continue
	operand:
		if i >= len(args) {
			break
		}
		if a.dyn {
			return v(Destructive, name+" with arguments not known statically")
		}
		if cflag {
			return c.nested(name+" -c", a.s, depth)
		}
		if a.s == "-" || strings.HasPrefix(a.s, "/dev/") || strings.HasPrefix(a.s, "/proc/") {
			return v(Destructive, name+" runs code from "+a.s)
		}
		return v(Write, name+" runs script "+a.s+" (not analysed)")
	}
	if cflag {
		return v(Destructive, name+" -c without a string")
	}
	return v(Destructive, name+" executes code from standard input")
}

func (c *classifier) interpreter(name string, args []arg, depth int) verdict {
	if len(args) == 0 {
		return v(Destructive, name+" executes code from standard input")
	}
	for i, a := range args {
		if a.dyn {
			return v(Destructive, name+" runs code not known statically: "+a.text())
		}
		switch a.s {
		case "--version", "-V", "--help", "-h", "-v":
			if len(args) == 1 {
				return v(Read, name+" "+a.s)
			}
		case "-":
			return v(Destructive, name+" executes code from standard input")
		case "-m":
			if name == "python" && i+1 < len(args) {
				switch args[i+1].s {
				case "pip":
					return c.pip("pip", args[i+2:], depth)
				case "http.server", "smtpd", "ftplib":
					return v(Network, "python -m "+args[i+1].s+" uses the network")
				case "json.tool", "tokenize", "pydoc":
					return v(Read, "python -m "+args[i+1].s)
				}
			}
			return v(Write, name+" runs module code (not analysed)")
		case "-c", "-e", "-E", "-p", "-r", "--eval", "--print":
			return v(Write, name+" runs inline code (not analysed)")
		}
		if !strings.HasPrefix(a.s, "-") {
			if strings.HasPrefix(a.s, "/dev/") || strings.HasPrefix(a.s, "/proc/") {
				return v(Destructive, name+" runs code from "+a.s)
			}
			return v(Write, name+" runs "+a.s+" (not analysed)")
		}
	}
	return v(Destructive, name+" executes code from standard input")
}

func (c *classifier) source(name string, args []arg, _ int) verdict {
	if len(args) == 0 {
		return v(Read, name+" without a file")
	}
	if args[0].dyn || strings.HasPrefix(args[0].s, "/dev/") || strings.HasPrefix(args[0].s, "/proc/") {
		return v(Destructive, name+" runs code not known statically: "+args[0].text())
	}
	return v(Write, name+" runs the shell file "+args[0].s+" (not analysed)")
}

func (c *classifier) trap(name string, args []arg, depth int) verdict {
	if len(args) == 0 || strings.HasPrefix(args[0].s, "-") && !args[0].dyn {
		return v(Read, "trap listing or reset")
	}
	if args[0].dyn {
		return v(Destructive, "trap of a string not known statically")
	}
	if args[0].s == "" {
		return v(Read, "trap ignoring signals")
	}
	return c.nested("trap", args[0].s, depth)
}

func (c *classifier) busybox(name string, args []arg, depth int) verdict {
	if len(args) == 0 {
		return v(Read, "busybox lists applets")
	}
	return c.inner(name, args, depth)
}

// --- file tools ---

func (c *classifier) find(name string, args []arg, depth int) verdict {
	vd := v(Read, "find only lists")
	var roots []arg
	i := 0
	for ; i < len(args); i++ {
		s := args[i].s
		if s == "-H" || s == "-L" || s == "-P" || strings.HasPrefix(s, "-D") || strings.HasPrefix(s, "-O") {
			continue
		}
		if strings.HasPrefix(s, "-") || s == "(" || s == "!" {
			break
		}
		roots = append(roots, args[i])
	}
	placeholder := arg{s: "{}", dyn: true, hole: true}
	if len(roots) == 0 {
		roots = []arg{{s: "."}}
	}
	if abs, ok := c.resolve(roots[0]); ok && len(roots) == 1 {
		placeholder = arg{s: filepath.Join(abs, "found")}
	}
	for ; i < len(args); i++ {
		s := args[i].s
		switch s {
		case "-delete":
			return v(Destructive, "find -delete")
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				vd = vd.max(c.target(args[i+1], "writes", true, false))
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			var in []arg
			for i++; i < len(args); i++ {
				if args[i].s == ";" || args[i].s == "+" {
					break
				}
				a := args[i]
				if a.s == "{}" {
					a = placeholder
				} else if strings.Contains(a.s, "{}") {
					a.dyn = true
				}
				in = append(in, a)
			}
			if len(in) > 0 {
				if n, ok := cmdName(in[0]); ok && (n == "rm" || n == "shred" || n == "unlink" || n == "rmdir") {
					return v(Destructive, "find "+s+" "+n)
				}
			}
			vd = vd.max(c.inner("find "+s, in, depth))
		}
	}
	return vd
}

func (c *classifier) fd(name string, args []arg, depth int) verdict {
	for i, a := range args {
		if a.s == "-x" || a.s == "--exec" || a.s == "-X" || a.s == "--exec-batch" {
			in := append([]arg{}, args[i+1:]...)
			if len(in) > 0 {
				if n, ok := cmdName(in[0]); ok && (n == "rm" || n == "shred" || n == "unlink") {
					return v(Destructive, name+" "+a.s+" "+n)
				}
			}
			for j := range in {
				if strings.Contains(in[j].s, "{") {
					in[j].dyn = true
				}
			}
			in = append(in, arg{s: "{}", dyn: true, hole: true})
			return c.inner(name+" "+a.s, in, depth)
		}
	}
	return v(Read, name+" only lists")
}

func (c *classifier) sed(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-e", "-f", "--expression", "--file", "-l", "--line-length")
	inPlace := o.has("i", "in-place")
	for l := range o.long {
		if strings.HasPrefix(l, "in-place") {
			inPlace = true
		}
	}
	scripts := append(o.values["-e"], o.values["--expression"]...)
	if len(scripts) == 0 && len(o.values["-f"]) == 0 && len(o.values["--file"]) == 0 && len(o.operands) > 0 {
		if o.operands[0].dyn {
			return v(Destructive, "sed script not known statically")
		}
		scripts = []string{o.operands[0].s}
	}
	if len(o.values["-f"])+len(o.values["--file"]) > 0 {
		return v(Write, "sed runs a script file (not analysed)")
	}
	svd := v(Read, "sed without -i only prints")
	for _, s := range scripts {
		svd = svd.max(c.sedScript(s))
	}
	if svd.risk == Destructive {
		return svd
	}
	if !inPlace {
		return svd
	}
	files := o.operands
	if len(o.values["-e"]) == 0 && len(o.values["--expression"]) == 0 && len(o.values["-f"]) == 0 && len(o.values["--file"]) == 0 && len(files) > 0 {
		files = files[1:] // the script
	}
	vd := v(Write, "sed -i edits files")
	for _, f := range files {
		if f.dyn {
			return v(Destructive, "sed -i of a path not known statically: "+f.text())
		}
		vd = vd.max(c.target(f, "edits", false, false))
	}
	return vd
}

func (c *classifier) awk(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-f", "-v", "-F", "--file", "--assign", "--field-separator", "-e", "--source",
		"-i", "--include", "-l", "--load", "-E", "--exec")
	if len(o.values["-f"])+len(o.values["--file"])+len(o.values["-E"])+len(o.values["--exec"]) > 0 {
		return v(Write, name+" runs a program file (not analysed)")
	}
	if len(o.values["-l"])+len(o.values["--load"]) > 0 {
		return v(Write, name+" loads a shared library extension")
	}
	includes := append(o.values["-i"], o.values["--include"]...)
	for _, inc := range includes {
		if inc == "inplace" || inc == "inplace.awk" {
			return v(Write, name+" -i inplace edits files")
		}
	}
	if len(includes) > 0 {
		return v(Write, name+" includes an awk library "+includes[0]+" (not analysed)")
	}
	if o.has("", "in-place") {
		return v(Write, name+" -i edits files")
	}
	// -e/--source give the program text; otherwise it is the first operand.
	programs := append(o.values["-e"], o.values["--source"]...)
	if len(programs) == 0 {
		if len(o.operands) == 0 {
			return v(Read, name)
		}
		if o.operands[0].dyn {
			return v(Destructive, name+" program not known statically")
		}
		programs = []string{o.operands[0].s}
	}
	vd := v(Read, name+" only reads")
	for _, p := range programs {
		switch {
		case strings.Contains(p, "system") || strings.Contains(p, "|"):
			return v(Destructive, name+" program runs shell commands")
		case strings.Contains(p, "@load") || strings.Contains(p, "@include"):
			vd = vd.max(v(Write, name+" program loads code (not analysed)"))
		case strings.Contains(p, ">"):
			vd = vd.max(v(Write, name+" program may write files"))
		}
	}
	return vd
}

// dc runs the rest of a line after ! as a shell command (!<, !> and !=
// are comparisons). Programs from files or standard input are not known.
func (c *classifier) dc(name string, args []arg, depth int) verdict {
	o := parseOpts(args, "-e", "--expression", "-f", "--file")
	if len(o.values["-f"])+len(o.values["--file"]) > 0 || len(o.operands) > 0 {
		return v(Write, name+" runs a program file (not analysed; ! in it runs shell commands)")
	}
	exprs := append(o.values["-e"], o.values["--expression"]...)
	if len(exprs) == 0 {
		return v(Write, name+" runs a program from standard input (not analysed; ! in it runs shell commands)")
	}
	vd := v(Read, name+" only computes")
	for _, e := range exprs {
		for _, line := range strings.Split(e, "\n") {
			for i := 0; i < len(line); i++ {
				if line[i] != '!' {
					continue
				}
				if i+1 < len(line) && strings.ContainsRune("<>=", rune(line[i+1])) {
					i++
					continue
				}
				vd = vd.max(c.nested(name+" !", line[i+1:], depth)).max(v(Write, name+" ! runs a shell command: "+line[i+1:]))
				break
			}
		}
	}
	return vd
}

// pager judges less and its kin: +cmd runs pager commands at start (! runs
// a shell command, s saves a file), -k/--lesskey-file read key bindings
// that can run commands, -o/-O write a log file.
func (c *classifier) pager(name string, args []arg, _ int) verdict {
	vd := v(Read, name+" only reads")
	for i, a := range args {
		s := a.s
		next := ""
		if i+1 < len(args) {
			next = args[i+1].s
		}
		switch {
		case strings.HasPrefix(s, "+"):
			cmd := strings.TrimPrefix(strings.TrimPrefix(s, "+"), "+")
			if cmd == "" || strings.Trim(cmd, "0123456789") == "" || cmd == "G" || cmd == "F" || cmd == "g" ||
				(strings.HasPrefix(cmd, "/") || strings.HasPrefix(cmd, "?")) && !strings.ContainsAny(cmd, "!|") {
				continue
			}
			vd = vd.max(v(Write, name+" "+s+" runs pager commands at start (! runs a shell command)"))
		case s == "-k" || strings.HasPrefix(s, "--lesskey"):
			vd = vd.max(v(Write, name+" "+s+" reads key bindings, which can run commands"))
		case s == "-o" || s == "-O":
			vd = vd.max(c.target(lit(next), name+" "+s+" writes a log file", true, false))
		case strings.HasPrefix(s, "--log-file=") || strings.HasPrefix(s, "--LOG-FILE="):
			_, f, _ := strings.Cut(s, "=")
			vd = vd.max(c.target(lit(f), name+" --log-file writes", true, false))
		case s == "--log-file" || s == "--LOG-FILE":
			vd = vd.max(c.target(lit(next), name+" --log-file writes", true, false))
		case len(s) > 2 && (strings.HasPrefix(s, "-o") || strings.HasPrefix(s, "-O")) && !strings.HasPrefix(s, "--"):
			vd = vd.max(c.target(lit(s[2:]), name+" "+s[:2]+" writes a log file", true, false))
		}
	}
	return vd
}

// date -s sets the system clock.
func (c *classifier) date(name string, args []arg, _ int) verdict {
	for _, a := range args {
		if a.s == "-s" || strings.HasPrefix(a.s, "--set") || len(a.s) > 2 && a.s[0] == '-' && strings.Trim(a.s[1:], "uR") == "s" {
			return v(Destructive, "date -s sets the system clock")
		}
	}
	return v(Read, "date prints")
}

// nm --plugin loads a shared library.
func (c *classifier) nm(name string, args []arg, _ int) verdict {
	for _, a := range args {
		if strings.HasPrefix(a.s, "--plugin") {
			return v(Write, name+" --plugin loads a shared library")
		}
	}
	return v(Read, name+" only reads")
}

// ss -K closes the sockets it lists.
func (c *classifier) ss(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-f", "--family", "-A", "--query", "-N", "--net", "-F", "--filter")
	if o.has("K", "kill") {
		return v(Destructive, "ss -K closes sockets")
	}
	return v(Read, "ss lists sockets")
}

func (c *classifier) sortCmd(name string, args []arg, depth int) verdict {
	o := parseOpts(args, "-o", "--output", "-k", "-t", "-S", "-T", "--key", "--field-separator", "--buffer-size", "--temporary-directory",
		"--compress-program", "--files0-from", "--random-source", "--batch-size", "--parallel")
	vd := v(Read, "sort prints")
	for _, prog := range o.values["--compress-program"] {
		vd = vd.max(c.nested("sort --compress-program", prog+" -d", depth)).max(v(Write, "sort --compress-program runs "+prog))
	}
	for _, out := range append(o.values["-o"], o.values["--output"]...) {
		vd = vd.max(c.target(arg{s: out}, "writes", true, false))
	}
	return vd
}

func (c *classifier) uniq(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-f", "-s", "-w")
	if len(o.operands) >= 2 {
		return c.target(o.operands[1], "writes", true, false)
	}
	return v(Read, "uniq prints")
}

func (c *classifier) tee(name string, args []arg, _ int) verdict {
	o := parseOpts(args)
	vd := v(Read, "tee to standard output")
	for _, f := range o.operands {
		vd = vd.max(c.target(f, "tee writes", !o.has("a", "append"), false))
	}
	return vd
}

func (c *classifier) touch(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-d", "-r", "-t", "--date", "--reference")
	vd := v(Write, "touch")
	for _, f := range o.operands {
		vd = vd.max(c.target(f, "touches", false, false))
	}
	return vd
}

func (c *classifier) mkdir(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-m", "--mode")
	for _, f := range o.operands {
		if _, ok := c.resolve(f); !ok {
			return v(Destructive, "mkdir of a path not known statically: "+f.text())
		}
	}
	return v(Write, "mkdir creates directories")
}

func (c *classifier) cp(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-t", "--target-directory", "-S", "--suffix", "-m", "-o", "-g", "--mode", "--owner", "--group")
	ops := o.operands
	var dest arg
	var destDir bool
	if ts := append(o.values["-t"], o.values["--target-directory"]...); len(ts) > 0 {
		dest, destDir = arg{s: ts[0]}, true
	} else if len(ops) >= 2 || (name == "ln" && len(ops) == 1) {
		if len(ops) == 1 {
			dest, destDir = arg{s: "."}, true
		} else {
			dest = ops[len(ops)-1]
			ops = ops[:len(ops)-1]
		}
	} else {
		return v(Write, name+" with a single operand")
	}
	vd := v(Write, name+" inside the workspace")
	if name == "mv" {
		for _, s := range ops {
			abs, ok := c.resolve(s)
			if !ok {
				return v(Destructive, "mv of a path not known statically: "+s.s)
			}
			if !c.inside(abs) {
				return v(Destructive, "mv removes a path outside the workspace: "+abs)
			}
		}
	}
	dabs, ok := c.resolve(dest)
	if !ok {
		return v(Destructive, name+" to a path not known statically: "+dest.text())
	}
	if name == "ln" && o.has("s", "symbolic") {
		if destDir || c.isDir(dabs) {
			for _, s := range ops {
				c.links[filepath.Join(dabs, filepath.Base(s.s))] = true
			}
		} else {
			c.links[dabs] = true
		}
		for _, s := range ops {
			if sabs, ok := c.resolve(s); !ok || !c.inside(sabs) {
				vd = v(Write, "ln -s to a path outside the workspace: "+s.text())
			}
		}
	}
	if c.inside(dabs) {
		return vd
	}
	if destDir || c.isDir(dabs) {
		for _, s := range ops {
			p := filepath.Join(dabs, filepath.Base(s.s))
			if s.dyn || s.glob || c.exists(p) {
				return v(Destructive, name+" overwrites paths outside the workspace in "+dabs)
			}
		}
		return v(Write, name+" to new paths outside the workspace in "+dabs)
	}
	return c.target(dest, name+" writes", true, false)
}

func (c *classifier) chmod(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "--reference")
	if o.has("R", "recursive") {
		return v(Destructive, name+" -R")
	}
	ops := o.operands
	if name != "setfacl" && len(ops) > 0 {
		ops = ops[1:] // mode or owner
	}
	vd := v(Write, name+" inside the workspace")
	for _, f := range ops {
		abs, ok := c.resolve(f)
		if !ok || !c.inside(abs) {
			return v(Destructive, name+" outside the workspace or of a dynamic path: "+f.s)
		}
	}
	return vd
}

func (c *classifier) kill(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-s", "-n")
	if o.has("lL", "list", "table") {
		return v(Read, "kill -l lists signals")
	}
	if n := len(args); n >= 2 && !args[n-1].dyn && args[n-1].s == "-1" {
		return v(Destructive, "kill -1 targets every process")
	}
	for _, a := range o.operands {
		if a.dyn {
			return v(Destructive, "kill of a process not known statically")
		}
		if a.s == "0" || a.s == "1" || strings.HasPrefix(a.s, "-") {
			return v(Destructive, "kill of init, all processes or a process group")
		}
	}
	return v(Write, "kill of specific processes")
}

func (c *classifier) cd(name string, args []arg, _ int) verdict {
	ops := parseOpts(args).operands
	if len(ops) == 0 {
		c.cwd = ""
		return v(Read, name+" home")
	}
	if ops[0].s == "-" {
		c.cwd = ""
		return v(Read, name+" -")
	}
	abs, ok := c.resolve(ops[0])
	if !ok {
		c.cwd = ""
	} else {
		c.cwd = abs
	}
	return v(Read, name+" changes directory")
}

func (c *classifier) rsync(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-e", "--rsh", "--exclude", "--include", "--filter", "-f")
	for l := range o.long {
		if strings.HasPrefix(l, "delete") || l == "remove-source-files" {
			return v(Destructive, "rsync --"+l)
		}
	}
	for _, a := range o.operands {
		if before, _, ok := strings.Cut(a.s, ":"); (ok && !strings.Contains(before, "/")) || strings.HasPrefix(a.s, "rsync://") {
			return v(Network, "rsync to or from a remote host")
		}
	}
	if len(o.operands) >= 2 {
		return c.cp("rsync", o.operands, 0)
	}
	return v(Write, "rsync")
}

func (c *classifier) tar(name string, args []arg, _ int) verdict {
	if len(args) == 0 {
		return v(Read, "tar")
	}
	for _, a := range args {
		for _, bad := range []string{"--to-command", "--use-compress-program", "--checkpoint-action", "--info-script",
			"--new-volume-script", "--rsh-command", "--rmt-command"} {
			if strings.HasPrefix(a.s, bad) {
				return v(Destructive, "tar "+bad+" runs a command")
			}
		}
		if a.s == "-I" || a.s == "-F" || (strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.ContainsAny(a.s, "IF")) {
			return v(Destructive, "tar option that runs a command")
		}
	}
	first := strings.TrimPrefix(args[0].s, "-")
	o := parseOpts(args, "-f", "-C", "--file", "--directory")
	oldStyle := !strings.HasPrefix(args[0].s, "-")
	create := strings.ContainsAny(first, "cru") || o.has("cru", "create", "append", "update")
	if create && !o.has("x", "extract", "get") {
		files := append(o.values["-f"], o.values["--file"]...)
		if oldStyle && strings.Contains(first, "f") && len(args) > 1 {
			files = append(files, args[1].s)
		}
		vd := v(Write, "tar creates an archive")
		for _, f := range files {
			if f != "-" {
				vd = vd.max(c.target(lit(f), "tar writes", true, false))
			}
		}
		return vd
	}
	if o.has("t", "list") || (!strings.HasPrefix(args[0].s, "-") && strings.Contains(first, "t")) {
		return v(Read, "tar lists an archive")
	}
	for _, d := range append(o.values["-C"], o.values["--directory"]...) {
		if abs, ok := c.resolve(arg{s: d}); !ok || !c.inside(abs) {
			return v(Destructive, "tar extracts or writes outside the workspace: "+d)
		}
	}
	return v(Write, "tar writes files")
}

func (c *classifier) docker(name string, args []arg, _ int) verdict {
	s, rest, ok := sub(args, "-H", "--host", "--context", "-c", "--config", "-l", "--log-level")
	if !ok {
		return v(Destructive, name+" subcommand not known statically")
	}
	switch s {
	case "", "ps", "images", "inspect", "logs", "version", "info", "history", "top", "stats", "port", "diff", "events":
		return v(Read, name+" "+s+" only reads")
	case "pull", "push", "login", "logout", "search", "build", "buildx":
		return v(Network, name+" "+s+" uses the network")
	case "rm", "rmi", "kill", "prune", "system", "volume", "network", "image", "container":
		return v(Destructive, name+" "+s+" deletes containers, images or data")
	case "run", "exec", "create", "compose":
		for i, a := range rest {
			if a.s == "--privileged" || strings.HasPrefix(a.s, "--pid=host") || a.s == "--pid" || strings.HasPrefix(a.s, "--cap-add") {
				return v(Destructive, name+" "+s+" with host privileges")
			}
			if (a.s == "-v" || a.s == "--volume" || a.s == "--mount") && i+1 < len(rest) {
				src, _, _ := strings.Cut(rest[i+1].s, ":")
				if abs, ok := c.resolve(arg{s: src, dyn: rest[i+1].dyn}); !ok || !c.inside(abs) {
					return v(Destructive, name+" "+s+" mounts a host path outside the workspace")
				}
			}
		}
		return v(Write, name+" "+s+" runs a container")
	}
	return v(Write, name+" "+s)
}

func (c *classifier) kubectl(name string, args []arg, _ int) verdict {
	s, _, _ := sub(args, "-n", "--namespace", "--context", "--kubeconfig")
	switch s {
	case "delete", "drain", "cordon", "replace":
		return v(Destructive, name+" "+s+" changes a cluster destructively")
	case "version", "config", "explain", "completion", "":
		return v(Read, name+" "+s)
	}
	return v(Network, name+" "+s+" talks to a cluster")
}

func (c *classifier) systemctl(name string, args []arg, _ int) verdict {
	s, _, _ := sub(args)
	switch {
	case s == "" || s == "status" || s == "show" || s == "cat" || strings.HasPrefix(s, "list-") || strings.HasPrefix(s, "is-"):
		return v(Read, name+" "+s)
	}
	return v(Destructive, name+" "+s+" changes system services")
}

func (c *classifier) service(name string, args []arg, _ int) verdict {
	if len(args) >= 2 && args[1].s == "status" || len(args) == 1 && args[0].s == "--status-all" {
		return v(Read, "service status")
	}
	return v(Destructive, "service changes system services")
}

func (c *classifier) hostname(name string, args []arg, _ int) verdict {
	if len(parseOpts(args, "-F", "--file").operands) > 0 || parseOpts(args, "-F", "--file").has("F", "file") {
		return v(Destructive, "hostname sets the host name")
	}
	return v(Read, "hostname prints")
}

func (c *classifier) crontab(name string, args []arg, _ int) verdict {
	if parseOpts(args).has("l") {
		return v(Read, "crontab -l lists")
	}
	return v(Destructive, "crontab replaces or removes scheduled jobs")
}

func (c *classifier) yq(name string, args []arg, _ int) verdict {
	if parseOpts(args).has("i", "inplace", "in-place") {
		return v(Write, "yq -i edits files")
	}
	return v(Read, "yq prints")
}

func (c *classifier) xxd(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-c", "-g", "-l", "-s", "-o", "-n")
	if len(o.operands) >= 2 {
		return c.target(o.operands[1], "writes", true, false)
	}
	return v(Read, "xxd prints")
}

func (c *classifier) openssl(name string, args []arg, _ int) verdict {
	s, _, _ := sub(args)
	switch s {
	case "s_client", "s_server", "ocsp", "s_time":
		return v(Network, "openssl "+s+" uses the network")
	case "version", "help", "x509", "dgst", "list", "ciphers", "asn1parse", "":
		return v(Read, "openssl "+s)
	}
	return v(Write, "openssl "+s+" may write files")
}

func (c *classifier) sysctl(name string, args []arg, _ int) verdict {
	o := parseOpts(args)
	if o.has("wp", "write", "load", "system") {
		return v(Destructive, "sysctl changes kernel parameters")
	}
	for _, a := range o.operands {
		if strings.Contains(a.s, "=") {
			return v(Destructive, "sysctl changes kernel parameters")
		}
	}
	return v(Read, "sysctl reads kernel parameters")
}

func (c *classifier) unzip(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-d", "-x", "-P")
	if o.has("lvZ") {
		return v(Read, "unzip lists an archive")
	}
	for _, d := range o.values["-d"] {
		if abs, ok := c.resolve(arg{s: d}); !ok || !c.inside(abs) {
			return v(Destructive, "unzip extracts outside the workspace: "+d)
		}
	}
	return v(Write, "unzip extracts files")
}

func (c *classifier) hash(name string, args []arg, _ int) verdict {
	if parseOpts(args, "-p").has("p") {
		return v(Destructive, "hash -p rebinds a command name to another program")
	}
	return v(Read, "hash")
}

func (c *classifier) mapfile(name string, args []arg, depth int) verdict {
	if parseOpts(args, "-C", "-c", "-d", "-n", "-O", "-s", "-u").has("C") {
		return v(Destructive, name+" -C evaluates a callback string")
	}
	return v(Read, name+" reads lines").max(c.subscripts(name, args, depth))
}

func (c *classifier) scriptCmd(name string, args []arg, depth int) verdict {
	o := parseOpts(args, "-c", "--command", "-t", "--timing", "-I", "-O", "-B", "-T", "-E", "-m")
	if cs := append(o.values["-c"], o.values["--command"]...); len(cs) > 0 {
		return c.nested("script -c", cs[0], depth).max(v(Write, "script writes a typescript file"))
	}
	return v(Destructive, "script starts an interactive shell")
}

func (c *classifier) rg(name string, args []arg, depth int) verdict {
	o := parseOpts(args, "--pre", "-e", "--regexp", "-f", "--file", "-g", "--glob", "-t", "--type", "-T", "--type-not",
		"-m", "--max-count", "-A", "-B", "-C", "--context", "-r", "--replace", "-M", "--max-columns", "--pre-glob",
		"--type-add", "-j", "--threads", "--sort", "--sortr", "--color", "--colors", "-E", "--encoding", "--ignore-file")
	for _, p := range o.values["--pre"] {
		return c.nested("rg --pre", p+` /dev/null`, depth)
	}
	return v(Read, "rg only reads")
}

func (c *classifier) ssh(name string, args []arg, depth int) verdict {
	for i, a := range args {
		s := strings.ToLower(a.s)
		if strings.Contains(s, "proxycommand") || strings.Contains(s, "localcommand") || strings.Contains(s, "knownhostscommand") {
			return v(Destructive, name+" option that runs a local command: "+a.s)
		}
		if a.s == "-S" && name != "ssh" {
			return v(Destructive, name+" -S runs another program as ssh")
		}
		if a.s == "-F" && i+1 < len(args) && args[i+1].s != "/dev/null" {
			return v(Destructive, name+" -F reads a configuration that can run local commands")
		}
	}
	return v(Network, name+" uses the network")
}

func (c *classifier) alias(name string, args []arg, depth int) verdict {
	vd := v(Read, "alias lists")
	for _, a := range args {
		n, val, ok := strings.Cut(a.s, "=")
		if !ok || strings.HasPrefix(a.s, "-") {
			continue
		}
		vd = vd.max(c.nested("alias "+n, val+` /dev/null`, depth)).max(v(Write, "alias defines a command (runs when aliases are expanded)"))
	}
	return vd
}

func (c *classifier) popd(name string, args []arg, _ int) verdict {
	c.cwd = ""
	return v(Read, "popd changes directory")
}

func (c *classifier) compress(name string, args []arg, _ int) verdict {
	o := parseOpts(args, "-S", "--suffix", "-o", "--output", "-T", "--threads", "-b", "-L", "--memlimit")
	if o.has("cltV", "stdout", "to-stdout", "list", "test", "version", "help") || len(o.operands) == 0 {
		return v(Read, name+" to standard output")
	}
	vd := v(Write, name+" replaces files inside the workspace")
	for _, f := range o.operands {
		vd = vd.max(c.target(f, name+" replaces", false, false))
	}
	return vd
}

// sedScript looks for the GNU sed commands that run programs (e, and the
// e flag of s) or write files (w, W, and the w flag of s). It is a
// conservative approximation of sed syntax.
func (c *classifier) sedScript(script string) verdict {
	vd := v(Read, "sed prints")
	for _, cmd := range splitSed(script) {
		cmd = strings.TrimLeft(cmd, " \t")
		// Strip an address: numbers, $, /re/, \cREc, ranges, ! and spaces.
		for len(cmd) > 0 {
			ch := cmd[0]
			switch {
			case ch >= '0' && ch <= '9' || ch == '$' || ch == ',' || ch == '!' || ch == ' ' || ch == '~' || ch == '+':
				cmd = cmd[1:]
				continue
			case ch == '/' || ch == '\\':
				d := byte('/')
				start := 1
				if ch == '\\' && len(cmd) > 1 {
					d, start = cmd[1], 2
				}
				end := indexUnescaped(cmd[start:], d)
				if end < 0 {
					return v(Write, "sed script not understood")
				}
				cmd = cmd[start+end+1:]
				cmd = strings.TrimLeft(cmd, "IM")
				continue
			}
			break
		}
		if cmd == "" {
			continue
		}
		switch cmd[0] {
		case 'e':
			return v(Destructive, "sed e command runs a shell command")
		case 'w', 'W':
			vd = vd.max(c.target(arg{s: strings.TrimSpace(cmd[1:])}, "sed writes", true, false))
		case 's', 'y':
			if len(cmd) < 2 {
				continue
			}
			d := cmd[1]
			rest := cmd[2:]
			for i := 0; i < 2; i++ {
				end := indexUnescaped(rest, d)
				if end < 0 {
					return v(Write, "sed script not understood")
				}
				rest = rest[end+1:]
			}
			if cmd[0] == 'y' {
				continue
			}
			for i := 0; i < len(rest); i++ {
				switch rest[i] {
				case 'e':
					return v(Destructive, "sed s///e runs the pattern space as a command")
				case 'w':
					vd = vd.max(c.target(arg{s: strings.TrimSpace(rest[i+1:])}, "sed writes", true, false))
					i = len(rest)
				}
			}
		}
	}
	return vd
}

// splitSed splits a sed script on newlines, ';' and braces outside
// regular expressions (roughly).
func splitSed(s string) []string {
	var out []string
	cur := strings.Builder{}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '\\' && i+1 < len(s) {
			cur.WriteByte(ch)
			cur.WriteByte(s[i+1])
			i++
			continue
		}
		if ch == ';' || ch == '\n' || ch == '{' || ch == '}' {
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(ch)
	}
	return append(out, cur.String())
}

func indexUnescaped(s string, d byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == d {
			return i
		}
	}
	return -1
}

func (c *classifier) netcfg(name string, args []arg, _ int) verdict {
	ops := parseOpts(args).operands
	for _, a := range ops {
		switch a.s {
		case "add", "del", "delete", "set", "flush", "change", "replace", "append", "up", "down", "prepend":
			return v(Destructive, name+" changes network configuration")
		case "exec":
			return v(Destructive, name+" exec runs a command in another namespace or VRF")
		}
	}
	if name == "ifconfig" && len(ops) > 1 {
		return v(Destructive, "ifconfig changes an interface")
	}
	return v(Read, name+" shows network configuration")
}

// --- leaks of "read" commands ---

// outputFlags are the options by which otherwise read-only tools write
// their output to a file.
var outputFlags = map[string][]string{
	"iconv":   {"-o", "--output"},
	"tree":    {"-o"},
	"info":    {"-o", "--output"},
	"xmllint": {"--output", "-o"},
}

// outputFlag judges tools that only read unless told to write their
// output to a file.
func (c *classifier) outputFlag(name string, args []arg, _ int) verdict {
	flags := outputFlags[name]
	o := parseOpts(args, flags...)
	vd := v(Read, name+" only reads")
	for _, f := range flags {
		for _, val := range o.values[f] {
			vd = vd.max(c.target(lit(val), name+" "+f+" writes", true, false))
		}
	}
	for i, a := range args {
		if a.dyn && i > 0 && slicesContains(flags, args[i-1].s) {
			return v(Destructive, name+" writes to a path not known statically")
		}
	}
	return vd
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// history -w/-a write the history list to a file ($HISTFILE, in the home
// directory, when none is named).
func (c *classifier) history(name string, args []arg, _ int) verdict {
	o := parseOpts(args)
	if !o.has("wa") {
		return v(Read, "history lists or edits the in-memory history")
	}
	if len(o.operands) == 0 {
		return v(Destructive, "history -w/-a writes $HISTFILE in the home directory")
	}
	return c.target(o.operands[0], "history writes", o.has("w"), false)
}

// ldd may run the program it inspects (it loads it with the dynamic
// loader).
func (c *classifier) ldd(name string, args []arg, _ int) verdict {
	return v(Write, "ldd may execute the program it inspects")
}

// man runs a pager or browser it is given as a command.
func (c *classifier) man(name string, args []arg, depth int) verdict {
	o := parseOpts(args, "-P", "--pager", "-H", "--html", "-M", "-C", "--config-file")
	for _, f := range []string{"-P", "--pager", "-H", "--html"} {
		for _, val := range o.values[f] {
			return c.nested("man "+f, val+" /dev/null", depth).max(v(Write, "man "+f+" runs a command"))
		}
	}
	if len(o.values["-C"])+len(o.values["--config-file"]) > 0 {
		return v(Write, "man reads another configuration")
	}
	return v(Read, "man only reads")
}

// subscriptCode reports whether a static word names an array element
// whose subscript holds command substitution: bash evaluates it when the
// builtin assigns, reads or tests the variable.
func subscriptCode(a arg) (string, bool) {
	if a.dyn {
		return "", false
	}
	i := strings.Index(a.s, "[")
	if i < 0 || !(strings.Contains(a.s[i:], "$(") || strings.Contains(a.s[i:], "`")) {
		return "", false
	}
	sub := a.s[i+1:]
	if j := strings.LastIndex(sub, "]"); j >= 0 {
		sub = sub[:j]
	}
	return sub, true
}

// varNames judges builtins that take variable names (printf -v, read,
// unset, wait -p, declare and kin, getopts, test -v): a name like
// 'a[$(cmd)]' runs cmd.
func (c *classifier) varNames(name string, args []arg, depth int) verdict {
	vd := v(Read, name+" only reads")
	if name == "printf" {
		// printf FORMAT ARGS only prints; only the -v operand is a name.
		o := parseOpts(args, "-v")
		args = nil
		for _, n := range o.values["-v"] {
			args = append(args, arg{s: n})
		}
		if len(o.values["-v"]) > 0 {
			vd = v(Read, "printf -v assigns a shell variable")
		}
	}
	return vd.max(c.subscripts(name, args, depth))
}

// subscripts classifies the code in array subscripts of variable names.
func (c *classifier) subscripts(name string, args []arg, depth int) verdict {
	vd := v(Read, name)
	for _, a := range args {
		if sub, ok := subscriptCode(a); ok {
			// The subscript is arithmetic; `: SUB` runs its substitutions.
			vd = vd.max(c.nested(name+" array subscript", ": "+sub, depth).max(v(Write, name+" evaluates the array subscript of "+a.s+", which runs a command")))
		}
	}
	return vd
}

// lit is a static word taken from inside another (an option's value); a
// leading ~ counts as the home directory, to be safe.
func lit(s string) arg { return arg{s: s, tilde: strings.HasPrefix(s, "~")} }
