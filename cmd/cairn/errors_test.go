package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Where a command does nothing, it says why and exits non-zero: each case
// here once ended silently with exit 0, or with a message that hid the cause.
func TestCommandsSayWhyNothingWasDone(t *testing.T) {
	dir := t.TempDir()
	if err := copyEmbedded(sampleFS, "_sample/ws", dir); err != nil {
		t.Fatal(err)
	}
	// 50 MB of text: over what the repo map indexes.
	big := strings.Repeat(strings.Repeat("x", 99)+"\n", 500_000)
	if err := os.WriteFile(filepath.Join(dir, "big.go"), []byte("package big\n"+big), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAIRN_STATE_DIR", t.TempDir())
	script := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(script, []byte("turns:\n  - text: fine\n"), 0o644)

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string // in stderr
		not  string // not in stderr
	}{
		{"unknown provider", map[string]string{"CAIRN_PROVIDER": "foo"},
			[]string{"ask", "--root", dir, "--file", "greet/greet.go", "hi"}, 1,
			`no usable model provider: model.provider "foo" is not one of openai, anthropic, scripted`, "no model provider is configured"},
		{"scripted without a script", map[string]string{"CAIRN_PROVIDER": "scripted", "CAIRN_SCRIPT": ""},
			[]string{"ask", "--root", dir, "--file", "greet/greet.go", "hi"}, 1,
			"scripted.path (or CAIRN_SCRIPT) is not set", "no model provider is configured"},
		{"focus on a missing file", nil, []string{"map", "--root", dir, "--focus", "nope.go"}, 1,
			"--focus nope.go: no such file", ""},
		{"focus on a 50 MB file", nil, []string{"map", "--root", dir, "--focus", "big.go"}, 1,
			"--focus big.go: the file is 47.7 MiB, over the 1.0 MiB the repo map indexes", ""},
		{"context range past the end", nil, []string{"context", "--root", dir, "--file", "greet/greet.go", "--range", "500-510", "q"}, 2,
			"--range 500-510: greet/greet.go has", ""},
		{"ask range past the end", map[string]string{"CAIRN_PROVIDER": "scripted", "CAIRN_SCRIPT": script},
			[]string{"ask", "--root", dir, "--file", "greet/greet.go", "--range", "500-510", "q"}, 2,
			"--range 500-510: greet/greet.go has", ""},
		{"search limit 0", nil, []string{"search", "--root", dir, "--limit", "0", "greet"}, 2,
			"--limit 0: give at least 1 (the default is 20)", ""},
		{"eval record of an unknown run", nil, []string{"eval", "record", "--root", dir, "run-nope"}, 1,
			`no run "run-nope"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out, errOut, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) || (tc.not != "" && strings.Contains(errOut, tc.not)) {
				t.Errorf("exit %d (want %d)\nstderr: %s\nwant it to say: %s\nstdout: %s", code, tc.code, errOut, tc.want, out)
			}
		})
	}
}

// cairn ask prints the answer on stdout and, on stderr, its own progress
// lines: no routine log lines of the in-process server.
func TestAskOutputHasNoLogLines(t *testing.T) {
	dir := t.TempDir()
	if err := copyEmbedded(sampleFS, "_sample/ws", dir); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(script, []byte("turns:\n  - text: the answer\n"), 0o644)
	t.Setenv("CAIRN_PROVIDER", "scripted")
	t.Setenv("CAIRN_SCRIPT", script)
	t.Setenv("CAIRN_STATE_DIR", t.TempDir())
	t.Setenv("CAIRN_LOG", "")
	out, errOut, code := runCLI(t, "ask", "--root", dir, "--file", "greet/greet.go", "what is it")
	if code != 0 || out != "the answer\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if strings.Contains(errOut, "level=INFO") {
		t.Errorf("info log lines on stderr:\n%s", errOut)
	}
	if got := logLevel([]string{"serve"}, ""); got.String() != "INFO" {
		t.Errorf("serve logs at %s, want INFO", got)
	}
	if got := logLevel([]string{"ask"}, "debug"); got.String() != "DEBUG" {
		t.Errorf("CAIRN_LOG=debug gives %s", got)
	}
}

// A configuration problem reaches the terminal once: when it leaves no
// usable model, as cairn ask's error (exit 1), not also as the in-process
// server's warning (it used to be printed two or three times); when the
// question can still be answered, as one warning.
func TestAskSaysAConfigurationProblemOnce(t *testing.T) {
	dir := t.TempDir()
	if err := copyEmbedded(sampleFS, "_sample/ws", dir); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(script, []byte("turns:\n  - text: the answer\n"), 0o644)
	for _, tc := range []struct {
		name string
		env  map[string]string
		code int
		msg  string // on stderr exactly once
	}{
		{"no provider", map[string]string{"CAIRN_PROVIDER": ""}, 1,
			"no model provider is set: set model.provider (or CAIRN_PROVIDER) to openai, anthropic or scripted"},
		{"unknown provider", map[string]string{"CAIRN_PROVIDER": "foo"}, 1,
			`model.provider "foo" is not one of openai, anthropic, scripted`},
		{"scripted without a script", map[string]string{"CAIRN_PROVIDER": "scripted", "CAIRN_SCRIPT": ""}, 1,
			"scripted.path (or CAIRN_SCRIPT) is not set"},
		{"a warning that does not stop the run", map[string]string{"CAIRN_PROVIDER": "scripted", "CAIRN_SCRIPT": script, "CAIRN_CONTEXT_WINDOW": "lots"}, 0,
			`CAIRN_CONTEXT_WINDOW="lots" is not a positive number; using the default`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CAIRN_STATE_DIR", t.TempDir())
			t.Setenv("CAIRN_LOG", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out, errOut, code := runCLI(t, "ask", "--root", dir, "--file", "greet/greet.go", "what is it")
			n := strings.Count(errOut, tc.msg)
			if quoted := strings.ReplaceAll(tc.msg, `"`, `\"`); quoted != tc.msg {
				n += strings.Count(errOut, quoted) // as the log handler quotes it
			}
			if code != tc.code || n != 1 {
				t.Errorf("exit %d (want %d); the message is on stderr %d times, want once:\n%s\nstdout: %s", code, tc.code, n, errOut, out)
			}
			if tc.code != 0 && !strings.HasPrefix(errOut, "cairn ask: no usable model provider: ") {
				t.Errorf("stderr does not start with the error:\n%s", errOut)
			}
		})
	}
}
