package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/tools"
)

// session is one ACP session: a Cairn thread plus what ACP needs beside
// it (the client's review choices, the files written through the client).
type session struct {
	id sdk.SessionId
	w  *workspaceEngines

	mu  sync.Mutex
	rec sessionRecord
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
}

type writtenFile struct {
	rel          string
	before       string
	beforeExists bool
	after        string
	checkpointID string
}

// sessionRecord is what survives a restart, one JSON file per session under
// <state>/acp/sessions/. It maps the session to its Cairn thread: this is
// the one place that knows how sessions and threads relate.
type sessionRecord struct {
	SessionID string    `json:"sessionId"`
	Cwd       string    `json:"cwd"`
	Title     string    `json:"title,omitempty"`
	ThreadID  string    `json:"threadId,omitempty"`
	Runs      []string  `json:"runs"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}

var sessionIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$`)

func sessionPath(stateDir string, id sdk.SessionId) string {
	return filepath.Join(stateDir, "acp", "sessions", string(id)+".json")
}

func (s *session) save() error {
	s.mu.Lock()
	b, err := json.MarshalIndent(s.rec, "", "  ")
	s.mu.Unlock()
	if err != nil {
		return err
	}
	path := sessionPath(s.w.stateDir, s.id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving session %s: %w", s.id, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("saving session %s: %w", s.id, err)
	}
	return os.Rename(tmp, path)
}

func loadSessionRecord(stateDir string, id sdk.SessionId) (sessionRecord, error) {
	var rec sessionRecord
	if !sessionIDRE.MatchString(string(id)) {
		return rec, fmt.Errorf("invalid session id %q", id)
	}
	b, err := os.ReadFile(sessionPath(stateDir, id))
	if errors.Is(err, os.ErrNotExist) {
		return rec, fmt.Errorf("no session %q in this workspace", id)
	}
	if err != nil {
		return rec, fmt.Errorf("reading session %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("session %s is unreadable: %w", id, err)
	}
	return rec, nil
}

// addRun records a turn's run and the thread it belongs to.
func (s *session) addRun(run *agent.Run, question string) {
	s.mu.Lock()
	s.rec.Runs = append(s.rec.Runs, run.ID)
	if s.rec.ThreadID == "" {
		s.rec.ThreadID = run.ThreadID
	}
	if s.rec.Title == "" {
		s.rec.Title = title(question)
	}
	s.rec.Updated = time.Now().UTC()
	s.mu.Unlock()
	_ = s.save()
}

// runs are the session's runs, oldest first: its thread's turns (the
// thread is the truth), else those the session recorded.
func (s *session) runs() []string {
	s.mu.Lock()
	threadID := s.rec.ThreadID
	recorded := append([]string(nil), s.rec.Runs...)
	s.mu.Unlock()
	if threadID != "" {
		if t, ok := s.w.mgr.Thread(threadID); ok {
			out := make([]string, 0, len(t.Turns))
			for _, turn := range t.Turns {
				out = append(out, turn.RunID)
			}
			return out
		}
	}
	return recorded
}

func title(question string) string {
	q := strings.Join(strings.Fields(question), " ")
	if r := []rune(q); len(r) > 80 {
		q = string(r[:79]) + "…"
	}
	return q
}

func newSession(id sdk.SessionId, w *workspaceEngines, rec sessionRecord) *session {
	return &session{id: id, w: w, rec: rec, rejectedAlways: map[string]bool{}, written: map[string]writtenFile{}}
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
	w, err := a.workspaceFor(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, invalidParams("%v", err)
	}
	id := sdk.SessionId(checkpoint.NewID("session"))
	now := time.Now().UTC()
	s := newSession(id, w, sessionRecord{SessionID: string(id), Cwd: w.ws.Root(), Runs: []string{}, Created: now, Updated: now})
	if err := s.save(); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	a.addSession(s, p.McpServers)
	modes, options := a.sessionSettings(s)
	return sdk.NewSessionResponse{SessionId: id, Modes: modes, ConfigOptions: options}, nil
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
	s, err := a.reattach(p.Cwd, p.SessionId, p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	a.replay(s)
	modes, options := a.sessionSettings(s)
	return sdk.LoadSessionResponse{Modes: modes, ConfigOptions: options}, nil
}

// ResumeSession reattaches a session without replaying it.
func (a *adapter) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (_ sdk.ResumeSessionResponse, err error) {
	defer recoverTo(&err, "ResumeSession")
	s, err := a.reattach(p.Cwd, p.SessionId, p.McpServers)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	modes, options := a.sessionSettings(s)
	return sdk.ResumeSessionResponse{Modes: modes, ConfigOptions: options}, nil
}

func (a *adapter) reattach(cwd string, id sdk.SessionId, servers []sdk.McpServer) (*session, error) {
	w, err := a.workspaceFor(cwd)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	a.mu.Lock()
	s, live := a.sessions[id]
	a.mu.Unlock()
	if live {
		if s.turnActive() {
			return nil, invalidRequest("session %s has a prompt in progress", id)
		}
		return s, nil
	}
	rec, err := loadSessionRecord(w.stateDir, id)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	s = newSession(id, w, rec)
	a.addSession(s, servers)
	return s, nil
}

// ListSessions lists the sessions of cwd's workspace (or, without cwd, of
// every workspace this process has open), most recently updated first.
func (a *adapter) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (_ sdk.ListSessionsResponse, err error) {
	defer recoverTo(&err, "ListSessions")
	var dirs []string
	if p.Cwd != nil && *p.Cwd != "" {
		w, err := a.workspaceFor(*p.Cwd)
		if err != nil {
			return sdk.ListSessionsResponse{}, invalidParams("%v", err)
		}
		dirs = append(dirs, w.stateDir)
	} else {
		a.mu.Lock()
		for _, w := range a.workspaces {
			dirs = append(dirs, w.stateDir)
		}
		a.mu.Unlock()
	}
	var recs []sessionRecord
	for _, dir := range dirs {
		entries, _ := os.ReadDir(filepath.Join(dir, "acp", "sessions"))
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".json")
			if !ok {
				continue
			}
			if rec, err := loadSessionRecord(dir, sdk.SessionId(name)); err == nil {
				recs = append(recs, rec)
			}
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Updated.After(recs[j].Updated) })
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, r := range recs {
		info := sdk.SessionInfo{SessionId: sdk.SessionId(r.SessionID), Cwd: r.Cwd}
		if r.Title != "" {
			t := r.Title
			info.Title = &t
		}
		u := r.Updated.Format(time.RFC3339)
		info.UpdatedAt = &u
		out.Sessions = append(out.Sessions, info)
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
	if s.w.interactive() {
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
	options := []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
		Id: configApproval, Name: "Approval", Description: &desc, CurrentValue: sdk.SessionConfigValueId(current), Type: "select",
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
	default:
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("unknown config option %q; Cairn has %q and %q", p.ValueId.ConfigId, configApproval, configSandbox)
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
	s.w.setInteractive(level == modeAsk)
	a.notifySettings(s, true)
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
