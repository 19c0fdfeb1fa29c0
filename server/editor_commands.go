package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// Commands an editor's chat needs beside asking: Apply of a code block as a
// proposal, and the model list for its picker.

// cmdProposeEdit turns an editor-supplied text into a proposal. The edit
// goes through a run like any other (its one step an edit_file call,
// replayed without asking the model): it is journaled, shown in the diff
// editor, accepted or rejected hunk by hunk and undone, never written
// straight to disk.
func (s *Server) cmdProposeEdit(ctx context.Context, mgr *agent.Manager, arg []byte) (any, error) {
	var p protocol.ProposeEditParams
	if err := decodeArg(arg, &p, "uri", "newText"); err != nil {
		return nil, err
	}
	abs, err := s.pathFromURI(p.URI)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "uri: %v", err)
	}
	if p.ThreadID != "" && !agent.ValidThreadID(p.ThreadID) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "threadId: invalid thread id %q", p.ThreadID)
	}
	ws := mgr.Workspace()
	text, exists, err := ws.ReadFile(abs)
	if err != nil || !exists {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "reading %s to propose the edit: %v", p.URI, orMissing(err))
	}
	start, end := 0, len(text)
	if p.Range != nil {
		m := workspace.NewMapper(text)
		if start, err = m.Offset(p.Range.Start); err == nil {
			end, err = m.Offset(p.Range.End)
		}
		if err != nil || end < start {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "range: not within %s: %v", p.URI, orMissing(err))
		}
	}
	oldText, newText := uniqueReplacement(text, start, end, p.NewText)
	if oldText == newText {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "the code block is already what %s has there: nothing to propose", ws.Rel(abs))
	}
	rel := ws.Rel(abs)
	where := rel
	if p.Range != nil {
		where = fmt.Sprintf("%s:%d-%d", rel, p.Range.Start.Line+1, p.Range.End.Line+1)
	}
	question := "Apply the code block to " + where
	script := &model.Script{Turns: []model.ScriptTurn{
		{ToolCalls: []model.ScriptToolCall{{Name: "edit_file", Arguments: map[string]any{"path": rel, "oldText": oldText, "newText": newText}}}},
		{Text: "The code block is proposed as an edit of " + where + ": review it hunk by hunk."},
	}}
	emit, abort := s.runEmitter(question)
	run, err := mgr.Start(s.ctx, agent.AskRequest{Abs: abs, Question: question, ThreadID: p.ThreadID, Range: p.Range, Provider: model.NewScripted(script)}, emit)
	if err != nil {
		abort()
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "proposing the code block: %v", err)
	}
	return protocol.AskResult{RunID: run.ID, ThreadID: run.ThreadID}, nil
}

func orMissing(err error) error {
	if err == nil {
		return os.ErrNotExist
	}
	return err
}

// uniqueReplacement widens text[start:end] by whole lines until it occurs
// once in text (edit_file replaces a text that occurs exactly once), and
// returns it with its replacement: the same widening around newText.
func uniqueReplacement(text string, start, end int, newText string) (string, string) {
	a, b := start, end
	for {
		old := text[a:b]
		if old != "" && strings.Count(text, old) == 1 {
			return old, text[a:start] + newText + text[end:b]
		}
		if a == 0 && b == len(text) {
			return text, text[:start] + newText + text[end:]
		}
		// One more line on each side.
		if a > 0 {
			a = strings.LastIndexByte(text[:a-1], '\n') + 1
		}
		if b < len(text) {
			if i := strings.IndexByte(text[b+1:], '\n'); i >= 0 {
				b = b + 1 + i + 1
			} else {
				b = len(text)
			}
		}
	}
}

// modelListWait bounds how long cairn.models waits for the endpoint's list:
// a server without the route costs the picker its choices, not the chat.
const modelListWait = 3 * time.Second

type modelLister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// cmdModels is the model picker's list: the configured model first, then
// what the endpoint lists (GET /models); the configured one alone when it
// lists none.
func (s *Server) cmdModels(ctx context.Context, mgr *agent.Manager) protocol.ModelsResult {
	cfg := mgr.Config()
	res := protocol.ModelsResult{Current: cfg.ModelName, Available: []string{}}
	if cfg.ModelName != "" {
		res.Available = append(res.Available, cfg.ModelName)
	}
	lister, ok := cfg.Provider.(modelLister)
	if !ok {
		return res
	}
	lctx, cancel := context.WithTimeout(ctx, modelListWait)
	defer cancel()
	ids, err := lister.ListModels(lctx)
	if err != nil {
		slog.Info("the endpoint lists no models; offering the configured one", "err", err)
	}
	for _, id := range ids {
		if id != cfg.ModelName {
			res.Available = append(res.Available, id)
		}
	}
	return res
}
