package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/workspace"
)

// ask is a prompt turned into what a Cairn run takes.
type ask struct {
	question string
	abs      string // the file asked from ("" for none)
	sel      *contextengine.Selection
	// bufferText is the text the client sent for abs (an embedded
	// resource holding the whole file): its unsaved buffer.
	bufferText *string
}

// maxAttachment bounds the text of one attached resource put into the
// question; the model can read the rest with read_file.
const maxAttachment = 20000

// parsePrompt reads the prompt's blocks. Text blocks are the question. The
// first resource or resource_link naming a file in the workspace is the
// file asked from; its range (an embedded resource's _meta.range, a
// #L10-L20 / #L10:20 fragment, or, for an embedded text without either,
// where that text sits in the file) is Cairn's selection. Further
// resources are attached to the question; images and audio are refused
// (the capabilities do not offer them).
func parsePrompt(ws *workspace.Workspace, readFile func(abs string) (string, bool), blocks []sdk.ContentBlock) (ask, error) {
	var q ask
	var text []string
	var attached []string
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			text = append(text, b.Text.Text)
		case b.ResourceLink != nil:
			abs, sel, ok := fileRef(ws, b.ResourceLink.Uri)
			if !ok {
				attached = append(attached, fmt.Sprintf("(the user referred to %s)", b.ResourceLink.Uri))
				continue
			}
			if q.abs == "" {
				q.abs, q.sel = abs, sel
				continue
			}
			attached = append(attached, fmt.Sprintf("(the user also referred to %s%s)", ws.Rel(abs), lines(sel)))
		case b.Resource != nil:
			res := b.Resource.Resource.TextResourceContents
			if res == nil {
				return q, invalidParams("prompt block %d: a binary resource; Cairn takes text resources", i)
			}
			abs, sel, ok := fileRef(ws, res.Uri)
			if sel == nil {
				sel = metaRange(res.Meta)
			}
			if sel == nil {
				sel = metaRange(b.Resource.Meta)
			}
			if ok && q.abs == "" {
				if sel == nil {
					if whole, exists := readFile(abs); exists && whole != res.Text {
						sel = locate(whole, res.Text)
					}
				}
				q.abs, q.sel = abs, sel
				if sel == nil {
					t := res.Text
					q.bufferText = &t
				}
				continue
			}
			name := res.Uri
			if ok {
				name = ws.Rel(abs) + lines(sel)
			}
			body := res.Text
			if len(body) > maxAttachment {
				body = body[:maxAttachment] + "\n… (cut; read the file for the rest)"
			}
			attached = append(attached, fmt.Sprintf("Attached %s:\n```\n%s\n```", name, body))
		case b.Image != nil, b.Audio != nil:
			return q, invalidParams("prompt block %d: Cairn takes text, resource and resource_link blocks, not images or audio", i)
		default:
			return q, invalidParams("prompt block %d: unknown content block", i)
		}
	}
	q.question = strings.TrimSpace(strings.Join(text, "\n"))
	if len(attached) > 0 {
		q.question = strings.TrimSpace(q.question + "\n\n" + strings.Join(attached, "\n\n"))
	}
	if q.question == "" {
		return q, invalidParams("the prompt has no text")
	}
	return q, nil
}

// fileRef resolves a file:// URI (or an absolute path) to its real path
// inside the workspace, with the line range of its fragment. A path that
// leaves the workspace, lexically or through a symlink, is not a file ref:
// Cairn never reads it.
func fileRef(ws *workspace.Workspace, uri string) (abs string, sel *contextengine.Selection, ok bool) {
	path, frag := uri, ""
	if p, f, err := workspace.URIPathFragment(uri); err == nil {
		path, frag = p, f
	} else if i := strings.IndexByte(uri, '#'); i >= 0 && filepath.IsAbs(uri) {
		path, frag = uri[:i], uri[i+1:]
	}
	if !filepath.IsAbs(path) {
		return "", nil, false
	}
	real, err := ws.Resolve(filepath.Clean(filepath.FromSlash(path)))
	if err != nil {
		return "", nil, false
	}
	return real, fragmentRange(frag), true
}

// fragmentRE matches line fragments as clients write them: L10, L10-20,
// L10-L20, L10:20 (Zed), 10-20; columns after a comma or colon are dropped.
var fragmentRE = regexp.MustCompile(`^L?(\d+)(?:[.,:]\d+)??(?:(?:-|:)L?(\d+)(?:[.,]\d+)?)?$`)

func fragmentRange(frag string) *contextengine.Selection {
	m := fragmentRE.FindStringSubmatch(frag)
	if m == nil {
		return nil
	}
	start, _ := strconv.Atoi(m[1])
	end := start
	if m[2] != "" {
		end, _ = strconv.Atoi(m[2])
	}
	if start < 1 || end < start {
		return nil
	}
	return &contextengine.Selection{StartLine: start, EndLine: end}
}

// metaRange reads an LSP-style 0-based range from _meta.range (the form
// Cairn's own clients send).
func metaRange(meta map[string]any) *contextengine.Selection {
	r, ok := meta["range"].(map[string]any)
	if !ok {
		return nil
	}
	line := func(key string) (int, bool) {
		p, ok := r[key].(map[string]any)
		if !ok {
			return 0, false
		}
		l, ok := p["line"].(float64)
		c, _ := p["character"].(float64)
		if key == "end" && c == 0 {
			l-- // a range ending at column 0 does not include that line
		}
		return int(l), ok
	}
	s, ok1 := line("start")
	e, ok2 := line("end")
	if !ok1 || !ok2 || s < 0 {
		return nil
	}
	if e < s {
		e = s
	}
	return &contextengine.Selection{StartLine: s + 1, EndLine: e + 1}
}

// locate finds the lines of part when it occurs exactly once in whole.
func locate(whole, part string) *contextengine.Selection {
	if strings.TrimSpace(part) == "" || strings.Count(whole, part) != 1 {
		return nil
	}
	i := strings.Index(whole, part)
	start := strings.Count(whole[:i], "\n") + 1
	end := start + strings.Count(strings.TrimSuffix(part, "\n"), "\n")
	return &contextengine.Selection{StartLine: start, EndLine: end}
}

func lines(sel *contextengine.Selection) string {
	if sel == nil {
		return ""
	}
	return fmt.Sprintf(" lines %d-%d", sel.StartLine, sel.EndLine)
}

// Prompt runs one turn: slash commands are answered directly; anything else
// is a Cairn run on the session's thread, streamed as session/update until
// it ends, mapped to a stop reason.
func (a *adapter) Prompt(ctx context.Context, p sdk.PromptRequest) (_ sdk.PromptResponse, err error) {
	defer recoverTo(&err, "Prompt")
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	// One turn at a time: a prompt sent while another runs (the SDK has
	// already cancelled the older one's context) waits for it to wind down.
	turnCtx, cancel := context.WithCancelCause(a.ctx)
	defer cancel(nil)
	if err := s.beginTurn(ctx, cancel); err != nil {
		return sdk.PromptResponse{}, err
	}
	defer s.endTurn()
	// The SDK cancels ctx on session/cancel; so does the client going away.
	stop := context.AfterFunc(ctx, func() { cancel(errCancelled) })
	defer stop()

	a.announceCommands(s.id)
	a.flushNotices(s)
	// The turn's reads of workspace files see the client's buffers.
	s.w.activate(s)
	defer func() {
		a.closeBuffers(s)
		s.w.deactivate(s)
	}()
	if cmd, ok := slashCommand(p.Prompt); ok {
		return a.runCommand(turnCtx, s, cmd)
	}
	q, err := parsePrompt(s.w.ws, func(abs string) (string, bool) {
		text, ok, _ := a.readText(turnCtx, s, abs)
		return text, ok
	}, p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	a.openBuffers(turnCtx, s, q)
	notes := a.reconcile(turnCtx, s)
	question := q.question
	if len(notes) > 0 {
		question = "[Cairn] Since the last turn: " + strings.Join(notes, " ") + "\n\n" + question
	}
	s.w.waitForMCP(turnCtx)
	// An MCP server that failed to start meanwhile is said before the answer.
	a.flushNotices(s)
	if turnCtx.Err() != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	t := &turn{a: a, s: s, ctx: turnCtx, calls: map[string]*callState{}}
	runCtx := turnCtx
	if a.clientCaps().Terminal {
		// Commands run in the client's terminal, shown on their cards.
		runCtx = tools.WithTerminal(turnCtx, clientTerminal{t: t})
	}
	run, err := s.w.mgr.Start(runCtx, s.askRequest(agent.AskRequest{Abs: q.abs, Selection: q.sel, Question: question}), t.emit)
	if err != nil {
		return sdk.PromptResponse{}, invalidRequest("%v", err)
	}
	a.sendInfo(s)
	a.wait(turnCtx, run)
	return t.response(run)
}

// wait waits for the run to end (cancelling it when the turn is
// cancelled) and forgets its session mapping.
func (a *adapter) wait(ctx context.Context, run *agent.Run) {
	select {
	case <-run.Done():
	case <-ctx.Done():
		run.Cancel()
		<-run.Done()
	}
	a.mu.Lock()
	delete(a.runs, run.ID)
	a.mu.Unlock()
}

// turnWait bounds how long a prompt waits for the session's previous turn
// to end after cancelling it.
const turnWait = 30 * time.Second

// beginTurn makes cancel the session's turn, first cancelling and waiting
// for a turn still in progress.
func (s *session) beginTurn(ctx context.Context, cancel context.CancelCauseFunc) error {
	deadline := time.NewTimer(turnWait)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if s.turn == nil {
			s.turn, s.turnDone = cancel, make(chan struct{})
			s.mu.Unlock()
			return nil
		}
		prev, done := s.turn, s.turnDone
		s.mu.Unlock()
		prev(errors.New("a new prompt replaced this one"))
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return invalidRequest("session %s: the previous prompt did not end", s.id)
		}
	}
}

func (s *session) endTurn() {
	s.mu.Lock()
	s.turn = nil
	close(s.turnDone)
	s.mu.Unlock()
}

// errCancelled is the cause of a turn ended by session/cancel.
var errCancelled = errors.New("cancelled by the client (session/cancel)")

// Cancel ends the session's turn; the prompt then answers with stop reason
// cancelled. (The SDK has already cancelled the prompt's context.)
func (a *adapter) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	defer a.gate.handled()
	if s, err := a.session(p.SessionId); err == nil {
		s.cancelTurn(errCancelled)
	}
	return nil
}

// askRequest puts a run on the session's thread.
func (s *session) askRequest(req agent.AskRequest) agent.AskRequest {
	req.ThreadID = s.threadID()
	req.Model = s.currentModel()
	return req
}

// stopReason maps how a run ended to ACP's stop reasons.
func stopReason(ev protocol.RunEvent) (sdk.StopReason, bool) {
	switch ev.Kind {
	case protocol.EventFinished:
		if ev.Truncated {
			// The model stopped at its output limit: the answer may be cut.
			return sdk.StopReasonMaxTokens, true
		}
		return sdk.StopReasonEndTurn, true
	case protocol.EventCancelled:
		return sdk.StopReasonCancelled, true
	case protocol.EventFailed:
		switch ev.Class {
		case agent.ClassStepLimit:
			return sdk.StopReasonMaxTurnRequests, true
		case agent.ClassTokenBudget, "max_tokens":
			return sdk.StopReasonMaxTokens, true
		case "refusal":
			return sdk.StopReasonRefusal, true
		}
	}
	return "", false
}
