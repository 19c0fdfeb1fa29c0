package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/redact"
)

// TestAuditRecordsHoldNoSecrets (issue 24 finding 8): every text of an
// audit record passes the redactor, not only the input summary (the rule
// or answer that decided, the tool's name, the ids), and the chain still
// verifies.
func TestAuditRecordsHoldNoSecrets(t *testing.T) {
	const token = "ghp_R8bXq2Lz7Kd4Vn9Wm3Tc6Yh1Jp5Fs0Ga8Ue2"
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAuditLog(path, redact.Default().String)
	if err != nil {
		t.Fatal(err)
	}
	recs := []AuditRecord{
		{RunID: "run-1", CallID: "c1", Tool: "run_command", Risk: RiskWrite, Input: `{"command":"echo ` + token + `"}`, Decision: "allow", By: "user: allow for session: echo " + token},
		{RunID: "run-1", CallID: "c-" + token, Tool: "mcp__srv__" + token, Risk: RiskRead, Input: "{}", Decision: "deny", By: "policy"},
	}
	for _, r := range recs {
		if err := a.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), token) {
		t.Errorf("the audit log holds the token:\n%s", b)
	}
	if got, err := ReadAudit(path); err != nil || len(got) != 2 || got[0].By == "" {
		t.Errorf("read back %d records (%v): %+v", len(got), err, got)
	}
	if n, err := VerifyAudit(path); err != nil {
		t.Errorf("the chain breaks at record %d: %v", n, err)
	}
}
