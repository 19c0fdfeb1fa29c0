package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/tools"
)

// session is one ACP session: a Cairn thread plus what ACP needs beside
// it (the client's review choices, the files written through the client).
type session struct {
	id sdk.SessionId
	w  *workspaceEngines

	mu sync.Mutex
	// turn cancels the prompt turn in progress (nil when idle).
	turn context.CancelCauseFunc
	// turnDone is closed when that turn has ended.
	turnDone chan struct{}
	// editChoice is a remembered allow_always / reject_always for edits.
	editChoice sdk.PermissionOptionKind
	// rejectedAlways holds tool approvals answered reject_always.
	rejectedAlways map[string]bool
	// written are the files this session wrote through the client, checked
	// at the start of the next turn (ACP does not report a rejection).
	written map[string]writtenFile
	// notices wait for the next turn (see notice).
	notices []string
	// overlays are the files whose client text the workspace reads instead
	// of the disk until the turn ends.
	overlays map[string]bool
	// buffers is what the turn in progress learned of the client's
	// buffers (buffers.go); nil between turns.
	buffers *bufferTurn
	// calls are the session's ACP tool-call ids (callids.go).
	calls *callIDs
	// model is the model id chosen for this session ("" = the
	// workspace's configured one; config.go).
	model string
	// approval is the session's approval level, ask or policy ("" = the
	// workspace's setting).
	approval string
}

type writtenFile struct {
	rel          string
	before       string
	beforeExists bool
	after        string
	checkpointID string
}

// A session is a Cairn thread, and its id is the thread's id: the thread
// (persisted by agent, with its turns) is all that survives a restart, so a
// thread started from an LSP editor can be loaded as an ACP session too.
// threadID and runs are the only places that know it.

func (s *session) threadID() string { return string(s.id) }

// runs are the session's runs, oldest first: its thread's turns.
func (s *session) runs() []string {
	t, ok := s.w.mgr.Thread(s.threadID())
	if !ok {
		return nil
	}
	out := make([]string, 0, len(t.Turns))
	for _, turn := range t.Turns {
		out = append(out, turn.RunID)
	}
	return out
}

func newSession(id sdk.SessionId, w *workspaceEngines) *session {
	return &session{id: id, w: w, rejectedAlways: map[string]bool{}, written: map[string]writtenFile{}, calls: newCallIDs()}
}

func (a *adapter) session(id sdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return nil, invalidParams("no session %q: create one with session/new or load it with session/load", id)
	}
	return s, nil
}

// NewSession opens the workspace at cwd (once per process) and starts a
// session on it; the client's MCP servers join the workspace's.
func (a *adapter) NewSession(ctx context.Context, p sdk.NewSessionRequest) (_ sdk.NewSessionResponse, err error) {
	defer recoverTo(&err, "NewSession")
	if err := checkDirectories(p.AdditionalDirectories); err != nil {
		return sdk.NewSessionResponse{}, invalidParams("%v", err)
	}
	w, err := a.workspaceFor(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, invalidParams("%v", err)
	}
	threadID, err := w.mgr.NewThread("")
	if err != nil {
		return sdk.NewSessionResponse{}, fmt.Errorf("starting the session's thread: %w", err)
	}
	id := sdk.SessionId(threadID)
	s := newSession(id, w)
	if err := w.addDirectories(s, p.AdditionalDirectories); err != nil {
		return sdk.NewSessionResponse{}, invalidParams("%v", err)
	}
	a.addSession(s, p.McpServers)
	modes, options := a.sessionSettings(s)
	return sdk.NewSessionResponse{SessionId: id, Modes: modes, ConfigOptions: options, Models: a.modelState(s)}, nil
}

func (a *adapter) addSession(s *session, servers []sdk.McpServer) {
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
	for _, w := range s.w.setup.Warnings {
		s.notice("configuration: " + w)
	}
	for _, problem := range s.w.setSessionMCP(a.ctx, s.id, servers) {
		s.notice(problem)
	}
	// The commands are announced after the response that names the
	// session (the SDK writes responses and notifications in order, and
	// this goroutine starts after the handler returned... or close to it):
	// a client that saw the update first has a session it does not know
	// yet, so announce again at each turn's start.
	go a.announceCommands(s.id)
}

// LoadSession reattaches a session after a restart: its turns are replayed
// as session/update notifications from Cairn's journal (nothing is run
// again), then the session takes prompts as before.
func (a *adapter) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (_ sdk.LoadSessionResponse, err error) {
	defer recoverTo(&err, "LoadSession")
	if err := checkDirectories(p.AdditionalDirectories); err != nil {
		return sdk.LoadSessionResponse{}, invalidParams("%v", err)
	}
	s, err := a.reattach(p.Cwd, p.SessionId, p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if err := s.w.addDirectories(s, p.AdditionalDirectories); err != nil {
		return sdk.LoadSessionResponse{}, invalidParams("%v", err)
	}
	a.replay(s)
	modes, options := a.sessionSettings(s)
	return sdk.LoadSessionResponse{Modes: modes, ConfigOptions: options, Models: a.modelState(s)}, nil
}

// ResumeSession reattaches a session without replaying it.
func (a *adapter) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (_ sdk.ResumeSessionResponse, err error) {
	defer recoverTo(&err, "ResumeSession")
	if err := checkDirectories(p.AdditionalDirectories); err != nil {
		return sdk.ResumeSessionResponse{}, invalidParams("%v", err)
	}
	s, err := a.reattach(p.Cwd, p.SessionId, p.McpServers)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	if err := s.w.addDirectories(s, p.AdditionalDirectories); err != nil {
		return sdk.ResumeSessionResponse{}, invalidParams("%v", err)
	}
	modes, options := a.sessionSettings(s)
	return sdk.ResumeSessionResponse{Modes: modes, ConfigOptions: options, Models: a.modelState(s)}, nil
}

// The session id is checked (its form, then that the cwd's workspace has
// it) before the workspace's engines are opened: a made-up id creates no
// state directory and starts no watcher.
func (a *adapter) reattach(cwd string, id sdk.SessionId, servers []sdk.McpServer) (*session, error) {
	a.mu.Lock()
	s, live := a.sessions[id]
	a.mu.Unlock()
	if live {
		if !sameRoot(cwd, s.w.ws.Root()) {
			return nil, invalidParams("session %s belongs to the workspace %s, not %s", id, s.w.ws.Root(), cwd)
		}
		if s.turnActive() {
			return nil, invalidRequest("session %s has a prompt in progress", id)
		}
		return s, nil
	}
	if !agent.ValidThreadID(string(id)) {
		return nil, invalidParams("invalid session id %q", truncateID(string(id)))
	}
	if err := a.knownSession(cwd, string(id)); err != nil {
		return nil, err
	}
	w, err := a.workspaceFor(cwd)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	if _, ok := w.mgr.Thread(string(id)); !ok {
		return nil, invalidParams("no session %q in the workspace %s", id, w.ws.Root())
	}
	s = newSession(id, w)
	a.seedCallIDs(s)
	a.restoreModel(s)
	a.addSession(s, servers)
	return s, nil
}

// ListSessions lists the threads of cwd's workspace (or, without cwd, of
// every workspace this process has open and every workspace sessions were
// saved in), most recently updated first.
func (a *adapter) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (_ sdk.ListSessionsResponse, err error) {
	defer recoverTo(&err, "ListSessions")
	var wss []*workspaceEngines
	if p.Cwd != nil && *p.Cwd != "" {
		// A folder with no sessions is not opened (no state directory, no
		// watcher) just to list none.
		if none, err := a.noSessions(*p.Cwd); err != nil {
			return sdk.ListSessionsResponse{}, err
		} else if none {
			return sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}, nil
		}
		w, err := a.workspaceFor(*p.Cwd)
		if err != nil {
			return sdk.ListSessionsResponse{}, invalidParams("%v", err)
		}
		wss = append(wss, w)
	} else {
		a.mu.Lock()
		for _, w := range a.workspaces {
			wss = append(wss, w)
		}
		a.mu.Unlock()
	}
	type entry struct {
		info    sdk.SessionInfo
		updated string
	}
	var all []entry
	for _, w := range wss {
		for _, t := range w.mgr.Threads() {
			info := sdk.SessionInfo{SessionId: sdk.SessionId(t.ThreadID), Cwd: w.ws.Root()}
			if t.Title != "" {
				title := t.Title
				info.Title = &title
			}
			if t.Updated != "" {
				u := t.Updated
				info.UpdatedAt = &u
			}
			all = append(all, entry{info, t.Updated})
		}
	}
	if p.Cwd == nil || *p.Cwd == "" {
		seen := map[sdk.SessionId]bool{}
		for _, e := range all {
			seen[e.info.SessionId] = true
		}
		for _, info := range a.savedSessions() {
			if seen[info.SessionId] {
				continue
			}
			seen[info.SessionId] = true
			updated := ""
			if info.UpdatedAt != nil {
				updated = *info.UpdatedAt
			}
			all = append(all, entry{info, updated})
		}
	}
	// RFC 3339 UTC times sort as strings.
	sort.SliceStable(all, func(i, j int) bool { return all[i].updated > all[j].updated })
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, e := range all {
		out.Sessions = append(out.Sessions, e.info)
	}
	return out, nil
}

// CloseSession cancels the session's turn and forgets it in this process;
// its record stays for session/load.
func (a *adapter) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (_ sdk.CloseSessionResponse, err error) {
	defer recoverTo(&err, "CloseSession")
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.CloseSessionResponse{}, err
	}
	s.cancelTurn(errors.New("the session was closed"))
	a.mu.Lock()
	delete(a.sessions, p.SessionId)
	a.mu.Unlock()
	s.w.setSessionMCP(a.ctx, s.id, nil)
	return sdk.CloseSessionResponse{}, nil
}

func (s *session) turnActive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn != nil
}

func (s *session) cancelTurn(cause error) {
	s.mu.Lock()
	cancel := s.turn
	s.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// Approval levels, offered as session modes and as a config option.
const (
	modeAsk    = "ask"
	modePolicy = "policy"
	// configApproval is the config option id of the approval level.
	configApproval = "approval"
	// configSandbox is the config option id of sandbox.mode.
	configSandbox = "sandbox"
)

// sessionSettings describes the approval level as modes and as a select
// config option (clients support one or the other).
func (a *adapter) sessionSettings(s *session) (*sdk.SessionModeState, []sdk.SessionConfigOption) {
	current := modePolicy
	if s.askMode() {
		current = modeAsk
	}
	askDesc := "Ask before a tool call the policy does not allow, and before writing an edit"
	policyDesc := "Decide from the policy without asking: what it would ask about is denied (edits still need your review)"
	modes := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(current), AvailableModes: []sdk.SessionMode{
		{Id: modeAsk, Name: "Ask", Description: &askDesc},
		{Id: modePolicy, Name: "Policy", Description: &policyDesc},
	}}
	desc := "When Cairn asks before running a tool"
	sbDesc := "How run_command is confined by the OS sandbox"
	autoDesc := "Sandbox commands where the OS allows (read-only or workspace-write profile by command); ask for every non-read command where it does not"
	reqDesc := "Refuse to run commands without a sandbox"
	offDesc := "No sandbox: every command that is not read-only asks first"
	// The approval level is the session's mode: clients put a category
	// mode option in their mode picker.
	modeCategory := sdk.SessionConfigOptionCategoryMode
	options := []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
		Id: configApproval, Name: "Approval", Description: &desc, CurrentValue: sdk.SessionConfigValueId(current), Type: "select",
		Category: &modeCategory,
		Options: sdk.SessionConfigSelectOptions{Ungrouped: &sdk.SessionConfigSelectOptionsUngrouped{
			{Value: modeAsk, Name: "Ask", Description: &askDesc},
			{Value: modePolicy, Name: "Policy", Description: &policyDesc},
		}},
	}}, {Select: &sdk.SessionConfigOptionSelect{
		Id: configSandbox, Name: "Sandbox", Description: &sbDesc, CurrentValue: sdk.SessionConfigValueId(s.w.sandboxMode()), Type: "select",
		Options: sdk.SessionConfigSelectOptions{Ungrouped: &sdk.SessionConfigSelectOptionsUngrouped{
			{Value: tools.SandboxAuto, Name: "Auto", Description: &autoDesc},
			{Value: tools.SandboxRequired, Name: "Required", Description: &reqDesc},
			{Value: tools.SandboxOff, Name: "Off", Description: &offDesc},
		}},
	}}}
	options = append(options, a.modelOptions(s)...)
	return modes, options
}

// SetSessionMode sets the approval level (ask or policy) of the session's
// workspace.
func (a *adapter) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (_ sdk.SetSessionModeResponse, err error) {
	defer recoverTo(&err, "SetSessionMode")
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	if err := a.setApproval(s, string(p.ModeId)); err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	return sdk.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption sets the approval level through the config option.
func (a *adapter) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (_ sdk.SetSessionConfigOptionResponse, err error) {
	defer recoverTo(&err, "SetSessionConfigOption")
	if p.ValueId == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("Cairn's config options are selects")
	}
	s, err := a.session(p.ValueId.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	switch p.ValueId.ConfigId {
	case configApproval:
		if err := a.setApproval(s, string(p.ValueId.Value)); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
	case configSandbox:
		if err := s.w.setSandboxMode(string(p.ValueId.Value)); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, invalidParams("%v", err)
		}
		a.notifySettings(s, false)
	case configModel:
		// The model is the session's own: no other session changes.
		if err := a.setModel(s, string(p.ValueId.Value)); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
	default:
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("unknown config option %q; Cairn has %q, %q and %q", p.ValueId.ConfigId, configApproval, configSandbox, configModel)
	}
	_, options := a.sessionSettings(s)
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: options}, nil
}

func (a *adapter) setApproval(s *session, level string) error {
	switch level {
	case modeAsk, modePolicy:
	default:
		return invalidParams("unknown approval level %q: use ask or policy", level)
	}
	// The session's own: other sessions of the workspace keep theirs.
	s.mu.Lock()
	s.approval = level
	s.mu.Unlock()
	modes, options := a.sessionSettings(s)
	a.send(s.id, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: modes.CurrentModeId}})
	a.send(s.id, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: options}})
	return nil
}

// notifySettings tells every session on s's workspace (they share the
// settings) the new config options, and the mode when it changed.
func (a *adapter) notifySettings(s *session, modeChanged bool) {
	a.mu.Lock()
	var peers []*session
	for _, o := range a.sessions {
		if o.w == s.w {
			peers = append(peers, o)
		}
	}
	a.mu.Unlock()
	for _, o := range peers {
		modes, options := a.sessionSettings(o)
		if modeChanged {
			a.send(o.id, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: modes.CurrentModeId}})
		}
		a.send(o.id, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: options}})
	}
}

// noSessions says whether the folder at cwd, not open in this process, has
// no sessions on disk.
func (a *adapter) noSessions(cwd string) (bool, error) {
	if !filepath.IsAbs(cwd) {
		return false, invalidParams("cwd %q is not an absolute path", cwd)
	}
	root, err := filepath.EvalSymlinks(filepath.Clean(cwd))
	if err != nil {
		return false, invalidParams("opening the workspace %s: %v", cwd, err)
	}
	a.mu.Lock()
	_, open := a.workspaces[root]
	a.mu.Unlock()
	if open {
		return false, nil
	}
	stateDir, err := a.opts.StateDir(root)
	if err != nil {
		return false, fmt.Errorf("finding the state directory of %s: %w", root, err)
	}
	return !agent.HasThreads(stateDir), nil
}

// knownSession says whether the workspace at cwd has the session id, without
// opening the workspace's engines: from the open workspace when there is
// one, else from the thread files in its state directory.
func (a *adapter) knownSession(cwd, id string) error {
	if !filepath.IsAbs(cwd) {
		return invalidParams("cwd %q is not an absolute path", cwd)
	}
	root, err := filepath.EvalSymlinks(filepath.Clean(cwd))
	if err != nil {
		return invalidParams("opening the workspace %s: %v", cwd, err)
	}
	a.mu.Lock()
	w, open := a.workspaces[root]
	a.mu.Unlock()
	if open {
		if _, ok := w.mgr.Thread(id); !ok {
			return invalidParams("no session %q in the workspace %s", id, root)
		}
		return nil
	}
	stateDir, err := a.opts.StateDir(root)
	if err != nil {
		return fmt.Errorf("finding the state directory of %s: %w", root, err)
	}
	if !agent.ThreadExists(stateDir, id) {
		return invalidParams("no session %q in the workspace %s", id, root)
	}
	return nil
}

// truncateID keeps an error message about a made-up id short.
func truncateID(id string) string {
	if len(id) > 100 {
		return id[:100] + "…"
	}
	return id
}
