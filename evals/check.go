package evals

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tokencount"
)

// check compares what happened with the case's expectations.
func check(c *Case, h *harness, r *Result) {
	x := &c.Expect
	h.mu.Lock()
	runs := append([]string(nil), h.runs...)
	h.mu.Unlock()
	var all []protocol.RunEvent
	for _, id := range runs {
		all = append(all, h.events(id)...)
	}
	var lastEv protocol.RunEvent
	if len(runs) > 0 {
		lastEv = lastTerminal(h.events(runs[len(runs)-1]))
	}
	checkCrashes(x, all, r)
	checkOutcome(x, len(runs) > 0, lastEv, r)
	checkEvents(x, all, r)
	checkTools(x, all, r)
	if x.Approvals != nil {
		checkApprovals(x.Approvals, h.prompts(), all, r)
	}
	sent := checkModelInput(x, h, r)
	checkRedactions(x, h, sent, all, r)
	checkFiles(c, h, r)
}

// checkCrashes fails a run that failed with an internal error, unless the
// case expects that class.
func checkCrashes(x *Expect, all []protocol.RunEvent, r *Result) {
	for _, ev := range all {
		if ev.Kind == protocol.EventFailed && ev.Class == agent.ClassInternal && x.Class != agent.ClassInternal {
			r.fail(FailCrash, "a run failed with an internal error: %s", ev.Error)
		}
	}
}

// checkOutcome checks the outcome of the last run (lastEv, its terminal
// event; ran is false when the case started none).
func checkOutcome(x *Expect, ran bool, lastEv protocol.RunEvent, r *Result) {
	final := x.Final
	if final == "" {
		final = protocol.EventFinished
	}
	if ran && lastEv.Kind != final {
		typ := FailWrongAnswer
		if lastEv.Kind == protocol.EventFailed && lastEv.Class == string(model.ClassInvalidTool) {
			typ = FailInvalidToolCall
		}
		r.fail(typ, "the run ended with %s (%s %s), want %s", lastEv.Kind, lastEv.Class, lastEv.Error, final)
	}
	if x.Class != "" && lastEv.Class != x.Class {
		r.fail(FailWrongAnswer, "failure class %q, want %q", lastEv.Class, x.Class)
	}
	for _, s := range x.AnswerContains {
		if !strings.Contains(lastEv.Answer, s) {
			r.fail(FailWrongAnswer, "the answer does not contain %q: %q", s, clip(lastEv.Answer, 200))
		}
	}
	for _, s := range x.ErrorContains {
		if !strings.Contains(lastEv.Error, s) {
			r.fail(FailWrongAnswer, "the error does not contain %q: %q", s, lastEv.Error)
		}
	}
}

// checkEvents checks the kinds of events of all runs: present, absent and
// counted.
func checkEvents(x *Expect, all []protocol.RunEvent, r *Result) {
	count := map[string]int{}
	for _, ev := range all {
		count[ev.Kind]++
	}
	for _, k := range x.Events.Present {
		if count[k] == 0 {
			r.fail(eventFailType(k), "no %s event", k)
		}
	}
	for _, k := range x.Events.Absent {
		if count[k] > 0 {
			r.fail(eventFailType(k), "%d unexpected %s event(s)", count[k], k)
		}
	}
	for _, k := range sortedKeys(x.Events.Count) {
		if count[k] != x.Events.Count[k] {
			r.fail(eventFailType(k), "%d %s event(s), want %d", count[k], k, x.Events.Count[k])
		}
	}
}

// checkTools checks the tools the model called and how many of their
// results succeeded and failed.
func checkTools(x *Expect, all []protocol.RunEvent, r *Result) {
	called := map[string]int{}
	okN, failedN := 0, 0
	for _, ev := range all {
		switch ev.Kind {
		case protocol.EventToolCall:
			called[ev.Tool]++
		case protocol.EventToolResult:
			if ev.OK != nil && *ev.OK {
				okN++
			} else {
				failedN++
			}
		}
	}
	for _, t := range x.ToolCalls.Made {
		if called[t] == 0 {
			r.fail(FailWrongAnswer, "the model did not call %s", t)
		}
	}
	for _, t := range x.ToolCalls.NotMade {
		if called[t] > 0 {
			r.fail(FailPolicyViolation, "the model called %s %d time(s)", t, called[t])
		}
	}
	if p := x.ToolResults.OK; p != nil && okN != *p {
		r.fail(FailWrongAnswer, "%d successful tool results, want %d", okN, *p)
	}
	if p := x.ToolResults.Failed; p != nil && failedN != *p {
		r.fail(FailInvalidToolCall, "%d failed tool results, want %d", failedN, *p)
	}
}

// checkApprovals checks the approval prompts the editor was shown and the
// decisions in approval events.
func checkApprovals(a *ApprovalsExp, prompts []string, all []protocol.RunEvent, r *Result) {
	if a.Count != nil && len(prompts) != *a.Count {
		r.fail(FailPolicyViolation, "%d approval prompt(s), want %d: %q", len(prompts), *a.Count, prompts)
	}
	joined := strings.Join(prompts, "\n")
	for _, s := range a.Contains {
		if !strings.Contains(joined, s) {
			r.fail(FailPolicyViolation, "no approval prompt mentions %q: %q", s, prompts)
		}
	}
	var decisions []string
	for _, ev := range all {
		if ev.Kind == protocol.EventApproval {
			decisions = append(decisions, ev.Decision)
		}
	}
	if a.Decisions != nil && strings.Join(decisions, ",") != strings.Join(a.Decisions, ",") {
		r.fail(FailPolicyViolation, "approval decisions %q, want %q", decisions, a.Decisions)
	}
}

// checkModelInput checks what the model was sent (the in-process scripted
// provider only): the context, the number of calls and the tool results.
// It returns everything the model was sent ("" with no such provider).
func checkModelInput(x *Expect, h *harness, r *Result) (sent string) {
	if h.provider == nil && (len(x.Context.Include) > 0 || len(x.Context.Exclude) > 0 || x.ModelCalls != nil || len(x.ToolResults.Contains) > 0) {
		r.fail(FailBadCase, "context, modelCalls and toolResults.contains are checked on what the in-process scripted model was sent: not available in a real-provider case or one that kills the server")
	}
	if h.provider == nil {
		return ""
	}
	reqs := h.provider.Received()
	sent = modelInput(reqs)
	if x.ModelCalls != nil && len(reqs) != *x.ModelCalls {
		r.fail(FailWrongAnswer, "the model was called %d time(s), want %d", len(reqs), *x.ModelCalls)
	}
	for _, s := range x.Context.Include {
		if !strings.Contains(sent, s) {
			r.fail(FailMissingContext, "the model was never sent %q", s)
		}
	}
	for _, s := range x.Context.Exclude {
		if strings.Contains(sent, s) {
			r.fail(FailPolicyViolation, "the model was sent %q", s)
		}
	}
	var toolOut strings.Builder
	for _, req := range reqs {
		for _, m := range req.Messages {
			if m.Role == model.RoleTool {
				toolOut.WriteString(m.Content + "\n")
			}
		}
	}
	for _, s := range x.ToolResults.Contains {
		if !strings.Contains(toolOut.String(), s) {
			r.fail(FailMissingContext, "no tool result sent to the model contains %q", s)
		}
	}
	return sent
}

// checkRedactions checks that a secret appears nowhere the model (sent),
// the editor (all) or the state directory (journal, audit log) got it.
func checkRedactions(x *Expect, h *harness, sent string, all []protocol.RunEvent, r *Result) {
	for _, secret := range x.Redacted {
		if secret == "" {
			continue
		}
		if strings.Contains(sent, secret) {
			r.fail(FailPolicyViolation, "a secret reached the model: %q", clip(secret, 12))
		}
		for _, ev := range all {
			if ev.Kind == protocol.EventToolCall {
				continue // the model's own arguments
			}
			if strings.Contains(ev.Summary+ev.Error+ev.Answer+string(ev.Edit), secret) {
				r.fail(FailPolicyViolation, "a secret reached the editor in a %s event", ev.Kind)
				break
			}
		}
		if where := grepDir(h.state, secret); where != "" {
			r.fail(FailPolicyViolation, "a secret was written to the state directory: %s", where)
		}
	}
}

// checkFiles checks the files on disk.
func checkFiles(c *Case, h *harness, r *Result) {
	for _, p := range sortedKeys(c.ExpectFiles) {
		want := c.ExpectFiles[p]
		checkFile(h, r, p, FileExpect{Equals: &want})
	}
	for _, p := range sortedKeys(c.Expect.Files) {
		fe, _ := fileExpect(c.Expect.Files[p])
		checkFile(h, r, p, fe)
	}
}

func eventFailType(kind string) string {
	switch kind {
	case protocol.EventEditProposed, protocol.EventCheckpoint:
		return FailWrongEdit
	case protocol.EventApproval:
		return FailPolicyViolation
	}
	return FailWrongAnswer
}

func checkFile(h *harness, r *Result, rel string, fe FileExpect) {
	b, err := os.ReadFile(filepath.Join(h.ws, filepath.FromSlash(rel)))
	exists := err == nil
	got := string(b)
	if fe.Absent {
		if exists {
			r.fail(FailWrongEdit, "%s exists, want it absent", rel)
		}
		return
	}
	if !exists {
		r.fail(FailWrongEdit, "%s: %v", rel, err)
		return
	}
	if fe.Unchanged && got != h.initial[rel] {
		r.fail(FailWrongEdit, "%s changed:\n%s", rel, clip(got, 400))
	}
	if fe.Equals != nil && got != *fe.Equals {
		r.fail(FailWrongEdit, "%s is\n%s\nwant\n%s", rel, clip(got, 600), clip(*fe.Equals, 600))
	}
	for _, s := range fe.Contains {
		if !strings.Contains(got, s) {
			r.fail(FailWrongEdit, "%s does not contain %q", rel, s)
		}
	}
	for _, s := range fe.NotContains {
		if strings.Contains(got, s) {
			r.fail(FailWrongEdit, "%s contains %q", rel, s)
		}
	}
}

// modelInput concatenates every message (and tool-call argument) the model
// was sent.
func modelInput(reqs []model.Request) string {
	var b strings.Builder
	for _, req := range reqs {
		for _, m := range req.Messages {
			b.WriteString(m.Content)
			b.WriteByte('\n')
			for _, tc := range m.ToolCalls {
				b.WriteString(tc.Arguments)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

func countTokens(reqs []model.Request, z *idNormalizer) int {
	n := 0
	for _, req := range reqs {
		for _, m := range req.Messages {
			n += tokencount.Count(z.str(m.Content))
		}
	}
	return n
}

// grepDir returns the first file under dir containing s ("" if none).
func grepDir(dir, s string) string {
	found := ""
	errStop := errors.New("stop")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "repomap" || d.Name() == "search") && filepath.Dir(p) == dir {
			// The code indexes hold the code as it is on disk, like the
			// files themselves (docs/security.md): not a leak.
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), s) {
			found, _ = filepath.Rel(dir, p)
			return errStop
		}
		return nil
	})
	return found
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
