package shell

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testExisting = map[string]bool{
	"/ws": true, "/ws/README.md": true, "/ws/main.go": true, "/ws/build": true, "/ws/src": true,
	"/ws/go.mod": true, "/etc": true, "/etc/passwd": true, "/etc/hosts": true, "/tmp": true,
	"/tmp/existing.txt": true, "/usr": true, "/home/u/.bashrc": true, "/dev/sda": true,
	// An embedded bare repository shipped as plain files, and a nested
	// repository.
	"/ws/vendor": true, "/ws/vendor/dep": true, "/ws/vendor/dep/HEAD": true, "/ws/vendor/dep/config": true,
	"/ws/vendor/dep/objects": true, "/ws/nested": true, "/ws/nested/.git": true, "/ws/nested/pkg": true,
}

var testDirs = map[string]bool{"/ws": true, "/ws/build": true, "/ws/src": true, "/etc": true, "/tmp": true, "/usr": true,
	"/ws/vendor": true, "/ws/vendor/dep": true, "/ws/vendor/dep/objects": true, "/ws/nested": true, "/ws/nested/.git": true, "/ws/nested/pkg": true}

func testOpts() Options {
	return Options{
		Workspace: "/ws",
		Exists:    func(p string) bool { return testExisting[p] },
		IsDir:     func(p string) bool { return testDirs[p] },
		Realpath:  func(p string) string { return p },
	}
}

type corpusLine struct {
	line    int
	want    Risk
	command string
}

func loadCorpus(t *testing.T) []corpusLine {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		class, cmd, ok := strings.Cut(line, "\t")
		if !ok || !Risk(class).Valid() {
			t.Fatalf("corpus line %d: malformed: %q", n, line)
		}
		out = append(out, corpusLine{n, Risk(class), strings.ReplaceAll(cmd, "⏎", "\n")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCorpus(t *testing.T) {
	lines := loadCorpus(t)
	if len(lines) < 300 {
		t.Fatalf("corpus has %d commands, want at least 300", len(lines))
	}
	per := map[Risk]int{}
	for _, l := range lines {
		per[l.want]++
		got := Classify(l.command, testOpts())
		if got.Risk != l.want {
			t.Errorf("line %d: %q: got %s (%s), want %s", l.line, l.command, got.Risk, got.Reason(), l.want)
		}
	}
	for _, r := range Risks {
		if per[r] == 0 {
			t.Errorf("corpus has no %s commands", r)
		}
	}
	t.Logf("corpus: %d commands %v", len(lines), per)
}

// TestCorpusNeverRead is the hard safety property: no command the corpus
// calls destructive or network may classify as read.
func TestCorpusNeverRead(t *testing.T) {
	bad := 0
	for _, l := range loadCorpus(t) {
		if l.want != Destructive && l.want != Network {
			continue
		}
		if got := Classify(l.command, testOpts()); got.Risk == Read {
			bad++
			t.Errorf("line %d: %s command %q classified read", l.line, l.want, l.command)
		}
	}
	if bad != 0 {
		t.Fatalf("%d destructive/network commands classified read", bad)
	}
}

func TestPackages(t *testing.T) {
	cases := map[string][]string{
		"npm install left-pad@1.3.0":             {"left-pad@1.3.0"},
		"pip install requests==2.31 'flask>=3'":  {"requests==2.31", "flask>=3"},
		"pip3 install -r requirements.txt":       {"-r requirements.txt"},
		"go get golang.org/x/tools@v0.1.0":       {"golang.org/x/tools@v0.1.0"},
		"npm i -D typescript@5 && pnpm add zod":  {"typescript@5", "zod"},
		"apt-get install -y ripgrep=13.0.0-1 jq": {"ripgrep=13.0.0-1", "jq"},
		"cargo add serde --version 1.0.190":      {"serde@1.0.190"},
		"npm ci":                                 nil,
		"python3 -m pip install --upgrade pip":   {"pip"},
		"uv pip install 'httpx[http2]==0.27'":    {"httpx[http2]==0.27"},
		"npx -y cowsay hi":                       {"cowsay"},
		"yarn add --dev @types/node@20":          {"@types/node@20"},
	}
	for cmd, want := range cases {
		got := Classify(cmd, testOpts())
		if got.Risk != Install {
			t.Errorf("%q: risk %s, want install", cmd, got.Risk)
		}
		if strings.Join(got.Packages, "|") != strings.Join(want, "|") {
			t.Errorf("%q: packages %q, want %q", cmd, got.Packages, want)
		}
	}
}

func TestParts(t *testing.T) {
	got := Classify("ls -la | grep x && rm -rf build; echo $(curl -s u)", testOpts())
	if got.Risk != Destructive {
		t.Fatalf("risk %s", got.Risk)
	}
	var cmds []string
	for _, p := range got.Parts {
		cmds = append(cmds, p.Command+"="+string(p.Risk))
	}
	want := []string{"ls -la=read", "grep x=read", "rm -rf build=destructive", "echo $(curl -s u)=read", "curl -s u=network"}
	if strings.Join(cmds, ",") != strings.Join(want, ",") {
		t.Errorf("parts:\n got %v\nwant %v", cmds, want)
	}
	if got.Reason() == "" {
		t.Error("empty reason")
	}
}

func TestParseError(t *testing.T) {
	got := Classify("echo 'unterminated", testOpts())
	if got.Risk != Destructive || got.ParseError == "" {
		t.Fatalf("got %+v", got)
	}
}

func TestMax(t *testing.T) {
	if Max() != Read || Max(Write, Read) != Write || Max(Install, Network) != Install || Max(Read, Destructive, Write) != Destructive {
		t.Fatal("Max order wrong")
	}
	if Max(Read, Risk("bogus")) != Destructive {
		t.Fatal("invalid risk must count as destructive")
	}
	for i, r := range Risks {
		if r.Rank() != i {
			t.Fatalf("rank of %s = %d", r, r.Rank())
		}
	}
}

// TestNoWorkspace: without a workspace every path is outside.
func TestNoWorkspace(t *testing.T) {
	opts := Options{Exists: func(string) bool { return true }}
	if r := Classify("echo x > f.txt", opts).Risk; r != Destructive {
		t.Errorf("got %s", r)
	}
	if r := Classify("ls", opts).Risk; r != Read {
		t.Errorf("got %s", r)
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"ls", "rm -rf /", "sh -c 'sh -c \"rm x\"'", "a=$(b) c | d > e", "find . -exec {} \\;", "xargs -I", "git -c", "env -S"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Classify(s, testOpts())
		if !c.Risk.Valid() {
			t.Fatalf("invalid risk %q", c.Risk)
		}
	})
}

// TestRealFS uses the default Exists/IsDir/Realpath against a real
// directory with a symlink leaving the workspace.
func TestRealFS(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "victim"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "mine.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	opts := Options{Workspace: ws}
	for cmd, want := range map[string]Risk{
		"echo x > mine.txt":                            Write,
		"echo x > new.txt":                             Write,
		": > mine.txt":                                 Destructive,
		"echo x > link/victim":                         Destructive,
		"echo x > link/newfile":                        Write,
		"rm link/victim":                               Destructive,
		"rm mine.txt":                                  Write,
		"echo x > " + filepath.Join(outside, "v2"):     Write,
		"echo x > " + filepath.Join(outside, "victim"): Destructive,
		"cp mine.txt " + outside:                       Write,
		"cp mine.txt " + outside + "/victim":           Destructive,
	} {
		if got := Classify(cmd, opts); got.Risk != want {
			t.Errorf("%q: got %s (%s), want %s", cmd, got.Risk, got.Reason(), want)
		}
	}
}

// TestPartsSplitRedirectionsAndWrappers: every command of a line is a part
// with its own risk: a redirection is judged apart from the command it
// belongs to, and the command a wrapper runs is a part of its own, so
// that a policy rule naming the command or the wrapper covers only that.
func TestPartsSplitRedirectionsAndWrappers(t *testing.T) {
	got := Classify("go vet ./... > ~/.bashrc; timeout 5 rm -rf build; sh -c 'curl -s u'; echo ( x", testOpts())
	if got.Risk != Destructive || got.ParseError == "" {
		t.Fatalf("got %+v", got)
	}
	got = Classify("go vet ./... > ~/.bashrc; timeout 5 rm -rf build; sh -c 'curl -s u' 2>/dev/null; sh -c 'ls ('", testOpts())
	var parts []string
	for _, p := range got.Parts {
		s := p.Command + "=" + string(p.Risk)
		if p.Redirection {
			s += " redirection"
		}
		if p.Via != "" {
			s += " via " + p.Via
		}
		if p.Unparsed {
			s += " unparsed"
		}
		parts = append(parts, s)
	}
	want := []string{
		"go vet ./... > ~/.bashrc=write", "> ~/.bashrc=destructive redirection",
		"rm -rf build=destructive via timeout", "timeout 5 rm -rf build=destructive",
		"curl -s u=network", "sh -c 'curl -s u' 2>/dev/null=network", "2>/dev/null=read redirection",
		"ls (=destructive unparsed", "sh -c 'ls ('=destructive",
	}
	if strings.Join(parts, "\n") != strings.Join(want, "\n") {
		t.Errorf("parts:\n%s\nwant:\n%s", strings.Join(parts, "\n"), strings.Join(want, "\n"))
	}
}
