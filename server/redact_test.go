package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
)

const secretWS = `
-- .env --
PAYMENTS_TOKEN=pt_live_9fQ2xV7mK4wZ8rB1
-- config/config.go --
package config

// Credentials that must never reach a model or a trace.
const awsKey = "AKIAZ7Q4M2KXW6PLRT5B"
const dsn = "postgres://app:Sup3rS3cretPw@db.internal:5432/app"
const payments = "pt_live_9fQ2xV7mK4wZ8rB1"

func Port() int { return 8080 }
`

func TestSecretsNeverReachTheModel(t *testing.T) {
	script := `
turns:
  - toolCalls:
      - name: read_file
        arguments: {path: config/config.go}
      - name: run_command
        arguments: {command: "cat .env"}
  - text: "The port is 8080."
`
	e := newEnv(t, secretWS, withScript(script), withEnv(map[string]string{"CAIRN_APPROVAL": "ask"}))
	run := e.ask("config/config.go", 4, 9, "what are these constants?")
	evs := e.waitRun(run)
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("%+v", last(evs))
	}
	var sent strings.Builder
	for _, req := range e.provider.Received() {
		for _, m := range req.Messages {
			sent.WriteString(m.Content)
			sent.WriteString("\n")
		}
	}
	for _, secret := range []string{"AKIAZ7Q4M2KXW6PLRT5B", "Sup3rS3cretPw", "pt_live_9fQ2xV7mK4wZ8rB1"} {
		if strings.Contains(sent.String(), secret) {
			t.Errorf("%s reached the model", secret)
		}
	}
	if !strings.Contains(sent.String(), "[REDACTED:") || !strings.Contains(sent.String(), "func Port() int") {
		t.Errorf("the redacted context lost its shape:\n%s", sent.String())
	}
	report, err := e.ed.ContextReport(e.ctx, run)
	if err != nil || !strings.Contains(report, "## Redactions") {
		t.Errorf("the report does not count redactions: %v\n%s", err, report)
	}
	// Nothing secret in the state directory either (journal, audit log,
	// traces, blobs). The code indexes are exempt: like the files on disk,
	// they hold the code as it is (docs/security.md).
	filepath.Walk(e.state, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if info.IsDir() && (info.Name() == "repomap" || info.Name() == "search") {
			return filepath.SkipDir
		}
		if info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, secret := range []string{"AKIAZ7Q4M2KXW6PLRT5B", "Sup3rS3cretPw", "pt_live_9fQ2xV7mK4wZ8rB1"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s is stored in %s:\n%.600s", secret, p, b)
			}
		}
		return nil
	})
}

// A value the context engine learned from its surroundings (an apiKey
// assignment) is the run's secret: when the model later writes the bare
// value (here as a tool argument), the run's trace and journal mask it too,
// although no rule matches the bare value on its own.
func TestLearnedValueMaskedInTraceAndJournal(t *testing.T) {
	const value = "q7Hx9LmP2vR8sT4wK1zBn3Yc"
	ws := `
-- client/client.go --
package client

const apiKey = "` + value + `"

func Dial() string { return apiKey }
`
	script := `
turns:
  - toolCalls:
      - name: search_code
        arguments: {query: "` + value + `"}
  - text: "Dial returns the key."
`
	e := newEnv(t, ws, withScript(script))
	run := e.ask("client/client.go", 3, 5, "what does Dial return?")
	evs := e.waitRun(run)
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("%+v", last(evs))
	}
	for _, req := range e.provider.Received() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, value) {
				t.Fatalf("the key reached the model: %.300s", m.Content)
			}
		}
	}
	stored := 0
	filepath.Walk(e.state, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() && (info.Name() == "repomap" || info.Name() == "search") {
			return filepath.SkipDir
		}
		if info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), value) {
			t.Errorf("the learned key is stored in %s:\n%.600s", p, b)
		}
		stored++
		return nil
	})
	if stored == 0 {
		t.Fatal("no state was written: nothing was checked")
	}
}
