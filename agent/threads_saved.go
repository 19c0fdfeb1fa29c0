package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/protocol"
)

// SavedThreads lists the threads on disk of the workspace whose state is in
// stateDir, most recently updated first, without opening the workspace (a
// client listing every saved session). Files are read as they are: they
// hold redacted text only.
func SavedThreads(stateDir string) []protocol.ThreadSummary {
	if stateDir == "" {
		return nil
	}
	return newThreadStore(stateDir, nil).list()
}

// ErrNoThread is returned for a thread id the workspace does not have.
var ErrNoThread = errors.New("no such thread")

// DeleteSavedThread removes a thread's file from the state of a workspace
// this process has not opened. The runs' journals stay until their own
// retention removes them: a thread is the conversation, not its evidence.
func DeleteSavedThread(stateDir, id string) error {
	if !ThreadExists(stateDir, id) {
		return fmt.Errorf("deleting thread %q: %w", id, ErrNoThread)
	}
	if err := os.Remove(filepath.Join(stateDir, "threads", id+".json")); err != nil {
		return fmt.Errorf("deleting thread %q: %w", id, err)
	}
	return nil
}

// DeleteThread forgets a thread of this workspace, in memory and on disk.
// The caller makes sure no run of it is in progress.
func (m *Manager) DeleteThread(id string) error {
	ts := m.threads
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.load()
	t, ok := ts.byID[id]
	if !ok {
		return fmt.Errorf("deleting thread %q: %w", id, ErrNoThread)
	}
	if ts.dir != "" {
		if err := os.Remove(filepath.Join(ts.dir, id+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("deleting thread %q: %w", id, err)
		}
	}
	delete(ts.byID, id)
	for _, turn := range t.Turns {
		delete(ts.ofRun, turn.RunID)
	}
	return nil
}
