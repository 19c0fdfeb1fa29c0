package shell

import (
	"strings"
	"testing"
)

// gitRest returns git's subcommand and the arguments after it in a
// command line of literal words.
func gitRest(t *testing.T, cmd string) (string, []arg) {
	t.Helper()
	w := strings.Fields(cmd)
	if len(w) < 2 || w[0] != "git" {
		t.Fatalf("%q: not git SUBCOMMAND ...", cmd)
	}
	var rest []arg
	for _, s := range w[2:] {
		rest = append(rest, lit(s))
	}
	return w[1], rest
}

func testClassifier() *classifier {
	o := testOpts()
	return &classifier{opts: o, cwd: o.Workspace, links: map[string]bool{}}
}

// TestGitFormRows covers every row of gitForms: the command picks that
// row, Classify rates it so, and gitCmd gives that prompt text.
func TestGitFormRows(t *testing.T) {
	cases := []struct {
		cmd  string
		row  int
		risk Risk
		why  string // "" when the text comes from a check in code
	}{
		{"git push -f origin main", 0, Destructive, "git push that overwrites or deletes remote refs"},
		{"git push --force-with-lease origin main", 0, Destructive, "git push that overwrites or deletes remote refs"},
		{"git push origin +main", 1, Destructive, "git push with a forced or deleting refspec +main"},
		{"git push origin :old", 1, Destructive, "git push with a forced or deleting refspec :old"},
		{"git push origin main", 2, Network, "git push uses the network"},
		{"git reset --hard HEAD~1", 0, Destructive, "git reset discarding work"},
		{"git reset HEAD~1", 1, Write, "git reset moves HEAD or the index"},
		{"git clean -n", 0, Read, "git clean -n only lists"},
		{"git clean -fdx", 1, Destructive, "git clean deletes untracked files"},
		{"git checkout --theirs main.go", 0, Destructive, "git checkout --force discards changes"},
		{"git checkout -- nothing-here", 1, Destructive, "git checkout -- <paths> discards changes"},
		{"git checkout -b feature", 2, Write, "git checkout -b creates a branch"},
		{"git checkout main.go", 3, Destructive, "git checkout main.go discards changes to that path"},
		{"git checkout .", 3, Destructive, "git checkout of paths discards changes"},
		{"git checkout develop", 4, Write, "git checkout switches branches"},
		{"git restore --staged main.go", 0, Write, "git restore --staged unstages"},
		{"git restore --staged --worktree main.go", 1, Destructive, "git restore discards changes"},
		{"git restore main.go", 1, Destructive, "git restore discards changes"},
		{"git rm -f main.go", 0, Destructive, "git rm -f discards changes"},
		{"git rm main.go", 1, Write, "git rm removes tracked files"},
		{"git branch -D old", 0, Destructive, "git branch -D deletes an unmerged branch"},
		{"git branch -d -f old", 1, Destructive, "git branch -D deletes an unmerged branch"},
		{"git branch -d old", 2, Write, "git branch modifies branches"},
		{"git branch -m old new", 2, Write, "git branch modifies branches"},
		{"git branch feature", 3, Write, "git branch creates a branch"},
		{"git branch --list feature", 4, Read, "git branch lists"},
		{"git branch", 4, Read, "git branch lists"},
		{"git tag -d v1", 0, Write, "git tag -d deletes a tag"},
		{"git tag v1", 1, Write, "git tag creates a tag"},
		{"git tag -l v1", 2, Read, "git tag lists"},
		{"git stash list", 0, Read, "git stash list only reads"},
		{"git stash drop", 1, Destructive, "git stash drop deletes stashed work"},
		{"git stash push", 2, Write, "git stash"},
		{"git remote", 0, Read, "git remote lists"},
		{"git remote get-url origin", 0, Read, "git remote lists"},
		{"git remote update", 1, Network, "git remote update uses the network"},
		{"git remote add up https://example.com/r", 2, Write, "git remote add changes configuration"},
		{"git config --get user.name", 0, Read, "git config reads"},
		{"git config core.pager sh", 1, Destructive, ""},
		{"git config user.name Me", 2, Write, "git config sets a value"},
		{"git config core.pager less", 2, Write, "git config sets a value"},
		{"git config user.name", 3, Read, "git config reads"},
		{"git reflog expire --all", 0, Destructive, "git reflog expire deletes history"},
		{"git reflog", 1, Read, "git reflog lists"},
		{"git update-ref -d refs/heads/x", 0, Destructive, "git update-ref -d deletes a ref"},
		{"git update-ref refs/heads/x HEAD", 1, Write, "git update-ref moves a ref"},
		{"git worktree list", 0, Read, "git worktree list"},
		{"git worktree remove ../x", 1, Destructive, "git worktree remove deletes a worktree"},
		{"git worktree add ../x", 2, Write, "git worktree add"},
		{"git submodule", 0, Read, "git submodule status"},
		{"git submodule deinit lib", 1, Destructive, "git submodule deinit removes a working tree"},
		{"git submodule foreach ls", 2, Write, "git submodule foreach runs commands (not analysed)"},
		{"git submodule update --init", 3, Network, "git submodule update may fetch"},
		{"git lfs pull", 0, Network, "git lfs pull uses the network"},
		{"git lfs ls-files", 1, Read, "git lfs ls-files"},
		{"git lfs install", 2, Write, "git lfs install"},
		{"git archive --remote=origin HEAD", 0, Network, "git archive --remote uses the network"},
		{"git archive -o x.tar HEAD", 1, Write, "git archive writes a file"},
		{"git archive HEAD", 2, Read, "git archive to standard output"},
	}
	covered := map[string]map[int]bool{}
	for _, tc := range cases {
		if got := Classify(tc.cmd, testOpts()); got.Risk != tc.risk {
			t.Errorf("%q: Classify rates it %s (%s), want %s", tc.cmd, got.Risk, got.Reason(), tc.risk)
		}
		s, rest := gitRest(t, tc.cmd)
		c := testClassifier()
		vd, row := c.gitForm(gitForms[s], rest, parseOpts(rest, gitValued...), 0)
		if row != tc.row || vd.risk != tc.risk || (tc.why != "" && vd.reason != tc.why) {
			t.Errorf("%q: row %d, %s %q; want row %d, %s %q", tc.cmd, row, vd.risk, vd.reason, tc.row, tc.risk, tc.why)
		}
		if covered[s] == nil {
			covered[s] = map[int]bool{}
		}
		covered[s][row] = true
	}
	for s, forms := range gitForms {
		for i := range forms {
			if !covered[s][i] {
				t.Errorf("git %s: row %d has no case", s, i)
			}
		}
		if f := forms[len(forms)-1]; f.opts != nil || f.and != nil || f.not != nil || f.subs != nil || f.operands != 0 ||
			f.refspec || f.dashdash || f.check != noCheck {
			t.Errorf("git %s: the last form is not a default", s)
		}
	}
}

// TestGitClassRows covers every subcommand of gitClasses, and a few of
// them against a verdict written out here.
func TestGitClassRows(t *testing.T) {
	n := 0
	for _, cl := range gitClasses {
		for _, s := range cl.subs {
			n++
			if got := Classify("git "+s, testOpts()); got.Risk != cl.risk {
				t.Errorf("git %s: Classify rates it %s (%s), want %s", s, got.Risk, got.Reason(), cl.risk)
			}
			if vd := testClassifier().gitCmd([]arg{lit(s)}, 0); vd.risk != cl.risk || vd.reason != "git "+s+cl.why {
				t.Errorf("git %s: %s %q, want %s %q", s, vd.risk, vd.reason, cl.risk, "git "+s+cl.why)
			}
		}
	}
	if n != len(gitPolicy)-len(gitForms) {
		t.Errorf("gitPolicy has %d subcommands, the tables %d", len(gitPolicy), n+len(gitForms))
	}
	for cmd, want := range map[string]Risk{
		"git status": Read, "git log --oneline": Read, "git fetch origin": Network, "git clone https://example.com/r": Network,
		"git filter-branch --all": Destructive, "git prune": Destructive, "git commit -m x": Write, "git switch main": Write,
		"git frobnicate": Write,
	} {
		if got := Classify(cmd, testOpts()); got.Risk != want {
			t.Errorf("%q: %s (%s), want %s", cmd, got.Risk, got.Reason(), want)
		}
	}
}

// TestGitRunsArgsRows covers every row of gitRunsArgs, the subcommands
// of gitDynRisky, and arguments that are harmless outside a row's
// subcommands.
func TestGitRunsArgsRows(t *testing.T) {
	cases := []struct{ cmd, why string }{ // one per row of gitRunsArgs, in order
		{"git fetch --upload-pack=evil origin", "git fetch --upload-pack runs a command"},
		{"git push --receive-pack=evil origin", "git push --receive-pack runs a command"},
		{"git archive --exec=evil --remote=origin HEAD", "git archive --exec= runs a command"},
		{"git grep --open-files-in-pager=vim x", "git grep --open-files-in-pager runs a command"},
		{"git grep -Ovim x", "git grep -O runs a pager command"},
		{"git clone -u evil https://example.com/r", "git clone -u runs a command"},
		{"git ls-remote --exec evil origin", "git ls-remote --exec runs a command"},
		{"git fetch ext::sh", "git fetch with a transport that runs a command: ext::sh"},
		{"git clone fd::3 dir", "git clone with a transport that runs a command: fd::3"},
	}
	if len(cases) != len(gitRunsArgs) {
		t.Fatalf("%d cases for %d rows", len(cases), len(gitRunsArgs))
	}
	for i, tc := range cases {
		if got := Classify(tc.cmd, testOpts()); got.Risk != Destructive {
			t.Errorf("%q: %s (%s), want destructive", tc.cmd, got.Risk, got.Reason())
		}
		s, rest := gitRest(t, tc.cmd)
		if !strings.HasPrefix(rest[0].s, gitRunsArgs[i].prefix) && !strings.HasPrefix(rest[len(rest)-2].s, gitRunsArgs[i].prefix) {
			t.Errorf("%q does not exercise row %d (%s)", tc.cmd, i, gitRunsArgs[i].prefix)
		}
		vd, ok := testClassifier().gitRunsCommand(s, rest, 0)
		if !ok || vd.risk != Destructive || vd.reason != tc.why {
			t.Errorf("%q: %v %s %q, want destructive %q", tc.cmd, ok, vd.risk, vd.reason, tc.why)
		}
	}
	for s := range gitDynRisky {
		if vd, ok := testClassifier().gitRunsCommand(s, []arg{{s: "x", dyn: true}}, 0); !ok || vd.risk != Destructive {
			t.Errorf("git %s $X: %v %s, want destructive", s, ok, vd.risk)
		}
	}
	for cmd, want := range map[string]Risk{
		"git diff -u": Read, "git log -Oorder": Read, `git clone -c "core.sshCommand=rm -rf ~" https://example.com/r`: Destructive,
		"git clone -c user.name=x https://example.com/r": Network,
	} {
		if got := Classify(cmd, testOpts()); got.Risk != want {
			t.Errorf("%q: %s (%s), want %s", cmd, got.Risk, got.Reason(), want)
		}
	}
}
