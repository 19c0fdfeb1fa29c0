package agent

import (
	"strings"

	"github.com/cairn-dev/cairn/redact"
)

// Nothing secret at rest: what a run stores (its journal, its thread, its
// blobs) passes the run's redactor, with two exceptions kept because undo
// and rewind need them byte for byte: the previous content of a file a
// command changed (snapshot.go: and then the tool result says so when the
// file holds secrets), and the versions of a file an edit proposes to
// change. The model's own text in a proposal is not exempt: a secret it
// writes that the file did not hold before is masked (maskNewSecrets).

// holdsSecrets reports whether a file holds secrets: by its name
// (redact.IsSecretFileName) or by its content (the run's redactor finds one).
func (r *Run) holdsSecrets(rel, text string) bool {
	return redact.IsSecretFileName(rel) || r.red().Contains(text)
}

// maskNewSecrets masks in after every secret the redactor finds that
// before does not hold: the model never sees a secret (its context is
// redacted), so one it writes into a file came from a prompt injection or a
// leak, and must neither reach the user's file nor the state directory. A
// secret the file already held is kept exactly, so an edit elsewhere in the
// file does not damage it.
func maskNewSecrets(red *redact.Redactor, before, after string) (string, int) {
	_, findings := red.Redact(after)
	if len(findings) == 0 {
		return after, 0
	}
	var b strings.Builder
	last, masked := 0, 0
	for _, f := range findings {
		if f.Start < last || f.End > len(after) {
			continue
		}
		if secret := after[f.Start:f.End]; before != "" && strings.Contains(before, secret) {
			continue
		}
		b.WriteString(after[last:f.Start])
		b.WriteString(redact.Marker(f.Kind))
		last = f.End
		masked++
	}
	if masked == 0 {
		return after, 0
	}
	b.WriteString(after[last:])
	return b.String(), masked
}
