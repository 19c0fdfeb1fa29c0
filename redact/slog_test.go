package redact

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// A handler made with a nil redactor masks with Default (compiled when the
// first record is logged).
func TestHandlerWithoutRedactorUsesDefault(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), nil)).With("static", "AKIA"+randFrom(upperDigits, 16))
	ghp := "ghp_" + randFrom(alnum, 36)
	log.Info("token " + ghp)
	if got := buf.String(); strings.Contains(got, ghp) || strings.Contains(got, "static=AKIA") || !strings.Contains(got, "[REDACTED:github-pat]") {
		t.Fatalf("not masked by the default redactor:\n%s", got)
	}
}
