package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/protocol"
)

// ExecuteCommand dispatches Cairn's commands. Every command takes one
// object argument; a missing or ill-typed field is an InvalidParams error
// that names it.
func (s *Server) ExecuteCommand(ctx context.Context, params *lsp.ExecuteCommandParams) (lsp.LSPAny, error) {
	s.awaitInitialized(ctx)
	mgr, err := s.ready()
	if err != nil {
		return nil, err
	}
	var arg []byte
	if len(params.Arguments) > 0 {
		arg = params.Arguments[0]
	}
	var result any
	switch params.Command {
	case protocol.CommandAsk:
		result, err = s.cmdAsk(ctx, mgr, arg)
	case protocol.CommandCancel:
		result, err = s.cmdCancel(mgr, arg)
	case protocol.CommandResume:
		result, err = s.cmdResume(mgr, arg)
	case protocol.CommandAcceptEdit:
		var p protocol.EditRef
		if err = decodeArg(arg, &p, "editId"); err == nil {
			result, err = mgr.AcceptHunks(ctx, p.EditID, p.Hunks, s)
		}
	case protocol.CommandRejectEdit:
		var p protocol.EditRef
		if err = decodeArg(arg, &p, "editId"); err == nil {
			err = mgr.RejectHunks(p.EditID, p.Hunks)
			result = struct{}{}
		}
	case protocol.CommandRedoHunks:
		result, err = s.cmdRedoHunks(ctx, mgr, arg)
	case protocol.CommandUndo:
		var p protocol.UndoParams
		if err = decodeArg(arg, &p, "checkpointId"); err == nil {
			result, err = mgr.Undo(ctx, p.CheckpointID, p.Force, s)
		}
	case protocol.CommandRewind:
		var p protocol.RewindParams
		if err = decodeArg(arg, &p, "runId", "step"); err == nil {
			result, err = mgr.Rewind(ctx, p.RunID, p.Step, p.RestoreFiles, s)
		}
	case protocol.CommandContextReport:
		result, err = s.cmdContextReport(mgr, arg)
	case protocol.CommandGetEdit:
		var p protocol.EditRef
		if err = decodeArg(arg, &p, "editId"); err == nil {
			result, err = mgr.EditView(p.EditID)
		}
	case protocol.CommandListRuns:
		result = s.listRuns(mgr)
	case protocol.CommandListThreads:
		result = mgr.Threads()
	case protocol.CommandProposeEdit:
		result, err = s.cmdProposeEdit(ctx, mgr, arg)
	case protocol.CommandModels:
		result = s.cmdModels(ctx, mgr)
	case protocol.CommandGetThread:
		var p protocol.ThreadRef
		if err = decodeArg(arg, &p, "threadId"); err == nil {
			th, ok := mgr.Thread(p.ThreadID)
			if !ok {
				err = jsonrpc2.Errorf(jsonrpc2.InvalidParams, "no thread %q", p.ThreadID)
			}
			result = th
		}
	default:
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q; Cairn's commands are %s", params.Command, strings.Join(protocol.Commands, ", "))
	}
	if err != nil {
		var je *jsonrpc2.Error
		if errors.As(err, &je) {
			return nil, err
		}
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: %v", params.Command, err)
	}
	b, err := json.Marshal(result)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: encoding the result: %v", params.Command, err)
	}
	return jsontext.Value(b), nil
}

// decodeArg decodes a command's object argument, requiring the named fields.
func decodeArg(arg []byte, dst any, required ...string) error {
	if len(bytes.TrimSpace(arg)) == 0 {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "this command takes one object argument with %s", strings.Join(required, ", "))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(arg, &fields); err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "the argument must be a JSON object: %v", err)
	}
	for _, f := range required {
		v, ok := fields[f]
		if !ok || string(v) == "null" || string(v) == `""` {
			return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "the argument is missing %q", f)
		}
	}
	// Ids name files under the state dir: check them before anything uses them.
	for _, f := range protocol.IDFields {
		var id string
		if v, ok := fields[f]; ok && json.Unmarshal(v, &id) == nil && id != "" {
			if err := protocol.ValidateID(f, id); err != nil {
				return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
			}
		}
	}
	if err := json.Unmarshal(arg, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "field %q must be a %s, not %s", te.Field, te.Type, te.Value)
		}
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid argument: %v", err)
	}
	return nil
}

func (s *Server) cmdAsk(ctx context.Context, mgr *agent.Manager, arg []byte) (any, error) {
	var p protocol.AskParams
	if err := decodeArg(arg, &p, "uri", "question"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Question) == "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "the question is empty")
	}
	abs, err := s.pathFromURI(p.URI)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "uri: %v", err)
	}
	var sel *contextengine.Selection
	if p.Range != nil {
		if p.Range.End.Line < p.Range.Start.Line {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "range ends before it starts")
		}
		end := int(p.Range.End.Line)
		// A selection ending at column 0 of a line does not include that line.
		if p.Range.End.Character == 0 && p.Range.End.Line > p.Range.Start.Line {
			end--
		}
		sel = &contextengine.Selection{StartLine: int(p.Range.Start.Line) + 1, EndLine: end + 1}
	}
	if p.ThreadID != "" && !agent.ValidThreadID(p.ThreadID) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "threadId: invalid thread id %q", p.ThreadID)
	}
	s.waitForMCP(ctx)
	emit, abort := s.runEmitter(p.Question)
	run, err := mgr.Start(s.ctx, agent.AskRequest{Abs: abs, Selection: sel, Question: p.Question, ThreadID: p.ThreadID, Range: p.Range}, emit)
	if err != nil {
		abort()
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "%v", err)
	}
	if id, ok := ctx.Value(requestIDKey{}).(jsonrpc2.ID); ok {
		s.askRequests.Store(id, run.ID)
		go func() { // a $/cancelRequest after the end has nothing to cancel
			<-run.Done()
			s.askRequests.Delete(id)
		}()
	}
	return protocol.AskResult{RunID: run.ID, ThreadID: run.ThreadID}, nil
}

// cmdRedoHunks recomputes conflicting hunks against the current text and,
// for those it cannot merge, starts a run in the edit's thread that asks
// the model to propose them again; the hunks that run replaces are then
// rejected as superseded.
func (s *Server) cmdRedoHunks(ctx context.Context, mgr *agent.Manager, arg []byte) (any, error) {
	var p protocol.EditRef
	if err := decodeArg(arg, &p, "editId"); err != nil {
		return nil, err
	}
	res, req, err := mgr.RedoHunks(p.EditID, p.Hunks)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
	}
	if req == nil {
		return res, nil
	}
	s.waitForMCP(ctx)
	emit, abort := s.runEmitter(req.Question)
	run, err := mgr.Start(s.ctx, *req, emit)
	if err != nil {
		abort()
		res.Reason = fmt.Sprintf("the model could not be asked to redo the rest: %v", err)
		return res, nil
	}
	mgr.SupersedeHunks(p.EditID, res.Conflicting)
	res.RunID, res.ThreadID = run.ID, run.ThreadID
	return res, nil
}

// mcpStartWait bounds how long a question waits for MCP servers that are
// still starting, so their tools are offered from the first question.
const mcpStartWait = 20 * time.Second

func (s *Server) waitForMCP(ctx context.Context) {
	s.mu.Lock()
	ready := s.mcpReady
	s.mu.Unlock()
	if ready == nil {
		return
	}
	select {
	case <-ready:
	case <-time.After(mcpStartWait):
		s.logToClient(slog.LevelWarn, "MCP servers are still starting; asking without their tools")
	case <-ctx.Done():
	}
}

// runArg decodes a {runId} argument and finds the run in this session.
func runArg(mgr *agent.Manager, arg []byte) (*agent.Run, error) {
	var p protocol.RunRef
	if err := decodeArg(arg, &p, "runId"); err != nil {
		return nil, err
	}
	run, ok := mgr.Run(p.RunID)
	if !ok {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "no run %q", p.RunID)
	}
	return run, nil
}

func (s *Server) cmdCancel(mgr *agent.Manager, arg []byte) (any, error) {
	run, err := runArg(mgr, arg)
	if err != nil {
		return nil, err
	}
	run.Cancel()
	return struct{}{}, nil
}

func (s *Server) cmdResume(mgr *agent.Manager, arg []byte) (any, error) {
	var p protocol.RunRef
	if err := decodeArg(arg, &p, "runId"); err != nil {
		return nil, err
	}
	s.announceMu.Lock()
	if s.resumed == nil {
		s.resumed = map[string]bool{}
	}
	s.resumed[p.RunID] = true
	s.announceMu.Unlock()
	emit, abort := s.runEmitter("")
	run, err := mgr.Resume(s.ctx, p.RunID, emit)
	if err != nil {
		abort()
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "cannot resume %s: %v", p.RunID, err)
	}
	if w := run.Warnings(); len(w) > 0 {
		s.showMessage(lsp.MessageTypeWarning, "Cairn: "+strings.Join(w, " "))
	}
	return protocol.RunRef{RunID: run.ID}, nil
}

func (s *Server) cmdContextReport(mgr *agent.Manager, arg []byte) (any, error) {
	var p protocol.RunRef
	if err := decodeArg(arg, &p, "runId"); err != nil {
		return nil, err
	}
	md, err := mgr.ContextReport(p.RunID)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
	}
	return protocol.ContextReportResult{Markdown: md}, nil
}

type runSummary struct {
	RunID    string `json:"runId"`
	Question string `json:"question"`
	State    string `json:"state"`
}

func (s *Server) listRuns(mgr *agent.Manager) []runSummary {
	out := []runSummary{}
	for _, r := range mgr.Runs() {
		out = append(out, runSummary{RunID: r.ID, Question: r.Question, State: string(r.State())})
	}
	return out
}

// requestIDKey carries the JSON-RPC id of the request being handled, so a
// later $/cancelRequest for a cairn.ask can cancel the run it started.
type requestIDKey struct{}

// askRequestMap maps cairn.ask request ids to run ids.
type askRequestMap = sync.Map

// Request handles Cairn's non-standard methods (requests and notifications).
func (s *Server) Request(ctx context.Context, method string, params any) (any, error) {
	raw, _ := params.(lsp.LSPAny)
	switch method {
	case protocol.MethodDidChangeDiagnostics:
		if s.ws == nil {
			return nil, nil
		}
		var p protocol.DiagnosticsParams
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		abs, err := s.pathFromURI(p.URI)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		return nil, s.diags.set(abs, s.ws.Rel(abs), p.Diagnostics)
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method %q is not supported", method)
}
