package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
)

func TestRewindForgetsLaterStepsAndRestoresFiles(t *testing.T) {
	script := `
turns:
  - toolCalls: [{name: read_file, arguments: {path: greet/greet.go}}]
  - toolCalls:
      - name: run_command
        arguments: {command: "echo side-effect >> greet/log.txt"}
      - name: edit_file
        arguments: {path: greet/greet.go, oldText: "Hello", newText: "Howdy"}
  - text: "first answer"
  - text: "second try"
`
	e := newEnv(t, greetWS, withScript(script))
	orig := e.read("greet/greet.go")
	run := e.ask("greet/greet.go", 0, 0, "greet differently")
	evs := e.waitRun(run)
	res, err := e.ed.Accept(e.ctx, ofKind(evs, protocol.EventEditProposed)[0].EditID)
	if err != nil || !res.Applied {
		t.Fatalf("accept: %+v %v", res, err)
	}
	if err := e.ed.Execute(e.ctx, protocol.CommandRewind, protocol.RewindParams{RunID: run, Step: 5}, nil); err == nil {
		t.Error("rewinding past the last step succeeded")
	}
	var rw protocol.RewindResult
	if err := e.ed.Execute(e.ctx, protocol.CommandRewind, protocol.RewindParams{RunID: run, Step: 1, RestoreFiles: true}, &rw); err != nil {
		t.Fatalf("rewind: %v", err)
	}
	if got := e.read("greet/greet.go"); got != orig {
		t.Errorf("restoreFiles did not restore the file:\n%s", got)
	}
	if len(rw.Irreversible) != 1 || !strings.Contains(rw.Irreversible[0], "side-effect") {
		t.Errorf("irreversible side effects = %q", rw.Irreversible)
	}
	// The file the command created is gone again (the agent created it).
	if len(rw.Restored) != 1 || rw.Restored[0] != "greet/log.txt" {
		t.Errorf("restored from the command snapshot: %q", rw.Restored)
	}
	if _, err := os.Stat(filepath.Join(e.root, "greet", "log.txt")); !os.IsNotExist(err) {
		t.Errorf("greet/log.txt should be removed by the rewind: %v", err)
	}
	var ref protocol.RunRef
	if err := e.ed.Execute(e.ctx, protocol.CommandResume, protocol.RunRef{RunID: run}, &ref); err != nil {
		t.Fatalf("resume after rewind: %v", err)
	}
	evs, err = e.ed.WaitFor(e.ctx, run, func(evs []protocol.RunEvent) bool {
		return last(evs).Kind == protocol.EventFinished && last(evs).Answer == "second try"
	})
	if err != nil {
		t.Fatalf("the rewound run did not continue: %v (%s)", err, kinds(evs))
	}
	reqs := e.provider.Received()
	lastReq := reqs[len(reqs)-1]
	for _, m := range lastReq.Messages {
		if strings.Contains(m.Content, "side-effect") || strings.Contains(m.Content, "first answer") {
			t.Errorf("a forgotten step is still in the conversation: %q", m.Content)
		}
	}
	if err := e.ed.Execute(e.ctx, protocol.CommandRewind, protocol.RewindParams{RunID: "run-nope", Step: 0}, nil); err == nil {
		t.Error("rewinding an unknown run succeeded")
	}
}

func TestRewindRestoresFilesChangedByCommands(t *testing.T) {
	script := `
turns:
  - toolCalls: [{name: read_file, arguments: {path: greet/greet.go}}]
  - toolCalls:
      - name: run_command
        arguments: {command: "sed -i 's/Hello/Bye/' greet/greet.go && rm notes/ünï.txt && echo new > greet/made.txt"}
  - text: done
`
	e := newEnv(t, greetWS, withScript(script))
	orig := e.read("greet/greet.go")
	notes := e.read("notes/ünï.txt")
	run := e.ask("greet/greet.go", 0, 0, "change things")
	e.waitRun(run)
	if !strings.Contains(e.read("greet/greet.go"), "Bye") {
		t.Fatal("the command did not run")
	}
	// The user then creates a file of their own: a rewind must never delete it.
	os.WriteFile(filepath.Join(e.root, "mine.txt"), []byte("user's"), 0o644)
	var rw protocol.RewindResult
	if err := e.ed.Execute(e.ctx, protocol.CommandRewind, protocol.RewindParams{RunID: run, Step: 1, RestoreFiles: true}, &rw); err != nil {
		t.Fatal(err)
	}
	if e.read("greet/greet.go") != orig || e.read("notes/ünï.txt") != notes {
		t.Errorf("files not restored: %q", rw)
	}
	if _, err := os.Stat(filepath.Join(e.root, "greet", "made.txt")); !os.IsNotExist(err) {
		t.Error("a file the command created survived the rewind")
	}
	if e.read("mine.txt") != "user's" {
		t.Error("the rewind touched a file the user created")
	}
	if len(rw.Restored) != 3 {
		t.Errorf("restored %q", rw.Restored)
	}
}
