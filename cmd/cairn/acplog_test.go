package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// At the default level cairn acp logs to a file, never to stderr; CAIRN_LOG
// puts the log back on stderr.
func TestQuietACPLog(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	cache := t.TempDir()
	env := map[string]string{"XDG_CACHE_HOME": cache}
	getenv := func(k string) string { return env[k] }
	closeLog := quietACPLog(getenv)
	slog.Warn("a warning for the log file", "key", "token ghp_N4mEtOkEn7Qz2Lx9Wv3Bc8Rt5Yp1Ks6Hd0Ja")
	closeLog()
	b, err := os.ReadFile(filepath.Join(cache, "cairn", "acp.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "a warning for the log file") || strings.Contains(string(b), "N4mEtOkEn7Qz2Lx9") {
		t.Errorf("log file = %q: want the warning, redacted", b)
	}

	env["CAIRN_LOG_FILE"] = filepath.Join(t.TempDir(), "x", "mine.log")
	if got := acpLogPath(getenv); got != env["CAIRN_LOG_FILE"] {
		t.Errorf("acpLogPath = %q with CAIRN_LOG_FILE", got)
	}
	env["CAIRN_LOG"] = "debug"
	slog.SetDefault(prev)
	quietACPLog(getenv)()
	if slog.Default() != prev {
		t.Errorf("with CAIRN_LOG set the logger was replaced")
	}
}
