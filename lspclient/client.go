// Package lspclient is a small editor written for Cairn's own use: it
// drives a Cairn server over a pipe the way an editor does — initialize,
// open documents, send edits, execute commands — and plays the editor's part
// in the server's callbacks: it applies workspace/applyEdit to its buffers
// (and saves them, like a user who accepts and saves), answers approval
// requests, and records every notification. `cairn demo`, the integration
// tests and the eval harness use it; it is the fake editor of gopls'
// integration tests, made real enough to demo with.
package lspclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// Options configure an editor.
type Options struct {
	// Settings are sent as initializationOptions.
	Settings any
	// Approve answers window/showMessageRequest; nil answers "Allow once".
	Approve func(message string, actions []string) string
	// NoDocumentChanges makes the client advertise no documentChanges
	// support, like a minimal LSP client.
	NoDocumentChanges bool
	// RejectApplyEdit makes the editor refuse workspace/applyEdit.
	RejectApplyEdit bool
	// NoSave leaves buffers that workspace/applyEdit changed unsaved (as
	// Neovim and Emacs do): the disk keeps the old text until Save.
	NoSave bool
	// Plain makes the editor a plain LSP client: it does not declare
	// experimental.cairn.runEvents, and it opens documents the server shows
	// (window/showDocument), like eglot.
	Plain bool
	// NeverAnswer lists server requests (e.g. "workspace/applyEdit") this
	// editor never answers, like a client that hangs; the server's
	// $/cancelRequest notifications are counted (Cancelled).
	NeverAnswer []string
	// NoShowDocument makes a Plain editor declare no window/showDocument
	// support (an older LSP client).
	NoShowDocument bool
	// Progress, when set, hears each $/progress message: its kind (begin,
	// report, end), and the title or message it carries.
	Progress func(kind, text string)
	// ApprovalDetail declares experimental.cairn.approvalDetail (as the VS
	// Code extension does): approvals then carry their structured detail.
	ApprovalDetail bool
	// ApprovalParams, when set, hears each window/showMessageRequest's
	// params as the server sent them.
	ApprovalParams func(params json.RawMessage)
	// Folders are more workspace folders after the root, named by their
	// base names (a multi-root workspace).
	Folders []string
}

// Editor is one editor session connected to a server.
type Editor struct {
	Root string
	opts Options
	conn jsonrpc2.Conn

	mu       sync.Mutex
	buffers  map[string]*buffer // by absolute path
	events   map[string][]protocol.RunEvent
	messages []string // showMessage / logMessage text
	prompts  []string // showMessageRequest messages
	applied  []protocol.WorkspaceEdit
	shown    []string // window/showDocument URIs
	changed  chan struct{}

	cancelled     int           // $/cancelRequest notifications received
	cancelIDs     []string      // their ids, as JSON
	unanswered    []string      // ids (JSON) of the requests left unanswered (NeverAnswer)
	stop          chan struct{} // closed by Close: releases requests never answered
	stopOnce      sync.Once
	progressTitle map[string]string // token → title of work-done progress begun
	progressDone  []string          // titles of progress ended
	nextVer       int32
}

type buffer struct {
	text    string
	version int32
}

// Connect starts the session over rwc (the server's stdin/stdout or a pipe)
// and performs initialize/initialized with root as the workspace.
func Connect(ctx context.Context, rwc io.ReadWriteCloser, root string, opts Options) (*Editor, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	// The root is named as given, symlinks and all, as VS Code and Neovim
	// do (the server resolves it).
	e := &Editor{Root: abs, opts: opts, buffers: map[string]*buffer{}, events: map[string][]protocol.RunEvent{}, changed: make(chan struct{}), stop: make(chan struct{}),
		progressTitle: map[string]string{}}
	e.conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(rwc))
	e.conn.Go(ctx, e.handle)
	docChanges := !opts.NoDocumentChanges
	folders := []any{map[string]any{"uri": workspace.FileURI(abs), "name": filepath.Base(abs)}}
	for _, f := range opts.Folders {
		folders = append(folders, map[string]any{"uri": workspace.FileURI(f), "name": filepath.Base(f)})
	}
	init := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]any{"name": "cairn-lspclient"},
		"rootUri":          workspace.FileURI(abs),
		"workspaceFolders": folders,
		"capabilities": map[string]any{
			"workspace": map[string]any{
				"applyEdit":     true,
				"workspaceEdit": map[string]any{"documentChanges": docChanges, "resourceOperations": []string{"create", "rename", "delete"}},
			},
			"window": map[string]any{"workDoneProgress": true, "showMessage": map[string]any{}},
		},
		"initializationOptions": opts.Settings,
	}
	caps := init["capabilities"].(map[string]any)
	if opts.Plain {
		caps["window"].(map[string]any)["showDocument"] = map[string]any{"support": !opts.NoShowDocument}
	} else {
		cairn := map[string]any{protocol.ExperimentalRunEvents: true}
		if opts.ApprovalDetail {
			cairn[protocol.ExperimentalApprovalDetail] = true
		}
		caps["experimental"] = map[string]any{protocol.ExperimentalKey: cairn}
	}
	var res json.RawMessage
	if _, err := e.conn.Call(ctx, "initialize", init, &res); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := e.conn.Notify(ctx, "initialized", map[string]any{}); err != nil {
		return nil, err
	}
	return e, nil
}

// handle answers the server's requests and records its notifications.
func (e *Editor) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	params := append([]byte(nil), req.Params()...)
	if slices.Contains(e.opts.NeverAnswer, req.Method()) {
		jsonrpc2.Async(ctx)
		e.mu.Lock()
		e.unanswered = append(e.unanswered, idJSON(req.ID()))
		e.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-e.stop:
		}
		return nil, errors.New("never answered")
	}
	switch req.Method() {
	case "$/cancelRequest":
		var c struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(params, &c)
		e.mu.Lock()
		e.cancelled++
		e.cancelIDs = append(e.cancelIDs, string(c.ID))
		e.mu.Unlock()
		e.signal()
		return nil, nil
	case protocol.MethodRunEvent:
		var ev protocol.RunEvent
		if err := json.Unmarshal(params, &ev); err == nil {
			e.mu.Lock()
			e.events[ev.RunID] = append(e.events[ev.RunID], ev)
			e.mu.Unlock()
			e.signal()
		}
		return nil, nil
	case "window/showMessage", "window/logMessage":
		var m struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(params, &m)
		e.mu.Lock()
		e.messages = append(e.messages, m.Message)
		e.mu.Unlock()
		e.signal()
		return nil, nil
	case "window/showMessageRequest":
		jsonrpc2.Async(ctx)
		if e.opts.ApprovalParams != nil {
			e.opts.ApprovalParams(json.RawMessage(params))
		}
		var m struct {
			Message string `json:"message"`
			Actions []struct {
				Title string `json:"title"`
			} `json:"actions"`
		}
		_ = json.Unmarshal(params, &m)
		var titles []string
		for _, a := range m.Actions {
			titles = append(titles, a.Title)
		}
		e.mu.Lock()
		e.prompts = append(e.prompts, m.Message)
		e.mu.Unlock()
		choice := protocol.ActionAllowOnce
		if e.opts.Approve != nil {
			choice = e.opts.Approve(m.Message, titles)
		}
		if choice == "" {
			return nil, nil
		}
		return map[string]string{"title": choice}, nil
	case "workspace/applyEdit":
		jsonrpc2.Async(ctx)
		var p struct {
			Edit json.RawMessage `json:"edit"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if e.opts.RejectApplyEdit {
			return protocol.ApplyWorkspaceEditResult{Applied: false, FailureReason: "the user declined"}, nil
		}
		if err := e.applyEdit(ctx, p.Edit); err != nil {
			return protocol.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}, nil
		}
		return protocol.ApplyWorkspaceEditResult{Applied: true}, nil
	case "window/showDocument":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(params, &p)
		e.mu.Lock()
		e.shown = append(e.shown, p.URI)
		e.mu.Unlock()
		e.signal()
		return map[string]bool{"success": true}, nil
	case "window/workDoneProgress/create", "client/registerCapability":
		return nil, nil
	case "$/progress":
		var p struct {
			Token any `json:"token"`
			Value struct {
				Kind    string `json:"kind"`
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"value"`
		}
		if json.Unmarshal(params, &p) == nil {
			if e.opts.Progress != nil {
				text := p.Value.Message
				if p.Value.Kind == "begin" {
					text = p.Value.Title
				}
				e.opts.Progress(p.Value.Kind, text)
			}
			tok := fmt.Sprint(p.Token)
			e.mu.Lock()
			switch p.Value.Kind {
			case "begin":
				e.progressTitle[tok] = p.Value.Title
			case "end":
				e.progressDone = append(e.progressDone, e.progressTitle[tok])
			}
			e.mu.Unlock()
			e.signal()
		}
		return nil, nil
	}
	if req.IsCall() {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "%s", req.Method())
	}
	return nil, nil
}

func (e *Editor) signal() {
	e.mu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// wait blocks until changed (taken under e.mu together with the state the
// caller looked at) is closed by the next recorded change, or ctx ends.
func (e *Editor) wait(ctx context.Context, changed <-chan struct{}) error {
	select {
	case <-changed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitProgressEnd waits until a work-done progress whose title contains
// substr has ended (e.g. "repo map", "search index").
func (e *Editor) WaitProgressEnd(ctx context.Context, substr string) error {
	for {
		e.mu.Lock()
		for _, t := range e.progressDone {
			if strings.Contains(t, substr) {
				e.mu.Unlock()
				return nil
			}
		}
		changed := e.changed
		e.mu.Unlock()
		if err := e.wait(ctx, changed); err != nil {
			return fmt.Errorf("waiting for %q progress to end: %w", substr, err)
		}
	}
}

// Close shuts the session down cleanly (shutdown, exit).
func (e *Editor) Close(ctx context.Context) error {
	e.stopOnce.Do(func() { close(e.stop) })
	_, err := e.conn.Call(ctx, "shutdown", nil, nil)
	_ = e.conn.Notify(ctx, "exit", nil)
	cerr := e.conn.Close()
	return errors.Join(err, cerr)
}

// Conn exposes the connection for tests that send raw messages.
func (e *Editor) Conn() jsonrpc2.Conn { return e.conn }

// Abs returns the absolute path of a workspace-relative path (PathIn).
func (e *Editor) Abs(rel string) string { return PathIn(e.Root, e.opts.Folders, rel) }

// PathIn is the file of workspace path rel in a workspace of root and
// folders (Options.Folders): in the folder its first segment names, as the
// server names a folder's files, else under root.
func PathIn(root string, folders []string, rel string) string {
	if first, rest, ok := strings.Cut(rel, "/"); ok {
		for _, f := range folders {
			if filepath.Base(f) == first {
				return filepath.Join(f, filepath.FromSlash(rest))
			}
		}
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}

// URI returns the file URI of a workspace-relative path.
func (e *Editor) URI(rel string) string { return workspace.FileURI(e.Abs(rel)) }

// Open opens a file from disk in a buffer (didOpen).
func (e *Editor) Open(ctx context.Context, rel string) error {
	abs := e.Abs(rel)
	b, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.nextVer++
	v := e.nextVer
	e.buffers[abs] = &buffer{text: string(b), version: v}
	e.mu.Unlock()
	return e.conn.Notify(ctx, "textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": workspace.FileURI(abs), "languageId": languageID(rel), "version": v, "text": string(b)},
	})
}

func languageID(rel string) string {
	switch filepath.Ext(rel) {
	case ".go":
		return "go"
	case ".py":
		return "python"
	case ".ts":
		return "typescript"
	case ".js":
		return "javascript"
	}
	return "plaintext"
}

// Text returns a buffer's text (or the file on disk when not open).
func (e *Editor) Text(rel string) (string, error) {
	abs := e.Abs(rel)
	e.mu.Lock()
	b, ok := e.buffers[abs]
	e.mu.Unlock()
	if ok {
		return b.text, nil
	}
	data, err := os.ReadFile(abs)
	return string(data), err
}

// Type replaces the whole buffer text as the user typing would (didChange,
// full sync), without saving.
func (e *Editor) Type(ctx context.Context, rel, text string) error {
	abs := e.Abs(rel)
	e.mu.Lock()
	b, ok := e.buffers[abs]
	if !ok {
		e.mu.Unlock()
		return fmt.Errorf("%s is not open", rel)
	}
	e.nextVer++
	b.text, b.version = text, e.nextVer
	v := b.version
	e.mu.Unlock()
	return e.conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": workspace.FileURI(abs), "version": v},
		"contentChanges": []any{map[string]any{"text": text}},
	})
}

// EditRange changes a range of a buffer (incremental didChange).
func (e *Editor) EditRange(ctx context.Context, rel string, r protocol.Range, newText string) error {
	abs := e.Abs(rel)
	e.mu.Lock()
	b, ok := e.buffers[abs]
	if !ok {
		e.mu.Unlock()
		return fmt.Errorf("%s is not open", rel)
	}
	m := workspace.NewMapper(b.text)
	start, err1 := m.Offset(r.Start)
	end, err2 := m.Offset(r.End)
	if err := errors.Join(err1, err2); err != nil {
		e.mu.Unlock()
		return err
	}
	b.text = b.text[:start] + newText + b.text[end:]
	e.nextVer++
	b.version = e.nextVer
	v := b.version
	e.mu.Unlock()
	return e.conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": workspace.FileURI(abs), "version": v},
		"contentChanges": []any{map[string]any{"range": r, "text": newText}},
	})
}

// Save writes a buffer to disk (didSave).
func (e *Editor) Save(ctx context.Context, rel string) error {
	return e.save(ctx, e.Abs(rel))
}

func (e *Editor) save(ctx context.Context, abs string) error {
	e.mu.Lock()
	b, ok := e.buffers[abs]
	e.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s is not open", abs)
	}
	if err := os.WriteFile(abs, []byte(b.text), 0o644); err != nil {
		return err
	}
	return e.conn.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": workspace.FileURI(abs)}, "text": b.text})
}

// Cancelled returns how many requests the server cancelled ($/cancelRequest).
func (e *Editor) Cancelled() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cancelled
}

// CancelledIDs returns the ids (as JSON) named by the server's
// $/cancelRequest notifications, in the order received.
func (e *Editor) CancelledIDs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.cancelIDs)
}

// Unanswered returns the ids (as JSON) of the server requests this editor
// left unanswered (Options.NeverAnswer), in the order received.
func (e *Editor) Unanswered() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.unanswered)
}

// idJSON writes a request id as it appears on the wire.
func idJSON(id jsonrpc2.ID) string {
	if n, ok := id.Number(); ok {
		return strconv.FormatInt(n, 10)
	}
	if s, ok := id.StringValue(); ok {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return "null"
}

// Messages returns the showMessage/logMessage texts received.
func (e *Editor) Messages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.messages...)
}

// ShownDocuments returns the URIs the server asked to show (window/showDocument).
func (e *Editor) ShownDocuments() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.shown...)
}

// WaitUntil waits until cond holds, re-checking after every message from
// the server.
// cond must not take the editor's lock (use the accessor methods).
func (e *Editor) WaitUntil(ctx context.Context, cond func() bool) error {
	for {
		e.mu.Lock()
		changed := e.changed
		e.mu.Unlock()
		// Checked after taking the channel: a change in between closes it.
		if cond() {
			return nil
		}
		if err := e.wait(ctx, changed); err != nil {
			return err
		}
	}
}

// Prompts returns the approval prompts shown.
func (e *Editor) Prompts() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.prompts...)
}
