package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cairn acp's command line: bad flags and settings files are clear errors
// before any protocol starts; help exits 0. (The protocol itself is driven
// by acp/'s tests and by test/acp with the official TypeScript SDK.)
func TestACPCommandLine(t *testing.T) {
	out, _, code := runCLI(t, "help")
	if code != 0 || !strings.Contains(out, "acp ") {
		t.Errorf("help does not list acp: %q", out)
	}
	if _, _, code := runCLI(t, "acp", "-h"); code != 0 {
		t.Errorf("acp -h exits %d", code)
	}
	if _, errs, code := runCLI(t, "acp", "extra"); code != 2 || !strings.Contains(errs, "takes no arguments") {
		t.Errorf("acp extra: exit %d, %q", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := runCLI(t, "acp", "--settings", bad); code != 1 || !strings.Contains(errs, "not valid JSON") || out != "" {
		t.Errorf("acp --settings bad: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
