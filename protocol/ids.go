package protocol

import (
	"fmt"
	"regexp"
)

// idRE is what a run, edit, checkpoint or thread id may look like. Ids name
// files under the state directory, so nothing that could move a path (a
// separator, "..", a leading dot, NUL) gets through.
var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$`)

// IDFields are the argument fields of Cairn's commands that carry ids.
var IDFields = []string{"runId", "editId", "checkpointId", "threadId"}

var idNames = map[string]string{"runId": "run id", "editId": "edit id", "checkpointId": "checkpoint id", "threadId": "thread id"}

// ValidateID checks an id from a client before it is used; the error names
// the field and the accepted form.
func ValidateID(field, id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("%s: invalid %s %q: an id is 1 to 80 letters, digits, '-' or '_', starting with a letter or digit", field, idNames[field], truncateID(id))
	}
	return nil
}

func truncateID(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
