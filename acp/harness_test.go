package acp

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/tools"
)

// The harness drives the adapter in-process through the Go SDK's client
// side over a pipe, as an editor would over stdio, with the scripted model.

// fakeClient is the editor: it records updates, answers permission
// requests with answer, and serves fs/* from buffers over the disk.
type fakeClient struct {
	mu          sync.Mutex
	updates     []sdk.SessionNotification
	permissions []sdk.RequestPermissionRequest
	writes      []sdk.WriteTextFileRequest
	reads       []string
	buffers     map[string]string
	answer      func(sdk.RequestPermissionRequest) string
	// hangReads, when set, makes fs/read_text_file wait until it is
	// closed: a client that does not answer.
	hangReads chan struct{}
	// term, when set, serves terminal/* (terminal_test.go).
	term *termHost
}

func (c *fakeClient) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	c.reads = append(c.reads, p.Path)
	text, ok := c.buffers[p.Path]
	hang := c.hangReads
	c.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-ctx.Done():
		}
		return sdk.ReadTextFileResponse{}, errors.New("the client did not answer")
	}
	if ok {
		return sdk.ReadTextFileResponse{Content: text}, nil
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	return sdk.ReadTextFileResponse{Content: string(b)}, nil
}

func (c *fakeClient) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	c.writes = append(c.writes, p)
	delete(c.buffers, p.Path)
	c.mu.Unlock()
	return sdk.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
}

func (c *fakeClient) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.permissions = append(c.permissions, p)
	answer := c.answer
	c.mu.Unlock()
	opt := optAllowOnce
	if answer != nil {
		opt = answer(p)
	}
	if opt == "" {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(opt)}}}, nil
}

func (c *fakeClient) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	return nil
}

var errNoTerminal = errors.New("this client has no terminal")

func (c *fakeClient) CreateTerminal(ctx context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	if c.term != nil {
		return c.term.create(p)
	}
	return sdk.CreateTerminalResponse{}, errNoTerminal
}
func (c *fakeClient) KillTerminal(ctx context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	if c.term != nil {
		return c.term.kill(p)
	}
	return sdk.KillTerminalResponse{}, errNoTerminal
}
func (c *fakeClient) TerminalOutput(ctx context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	if c.term != nil {
		return c.term.output(p)
	}
	return sdk.TerminalOutputResponse{}, errNoTerminal
}
func (c *fakeClient) ReleaseTerminal(ctx context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	if c.term != nil {
		return c.term.release(p)
	}
	return sdk.ReleaseTerminalResponse{}, errNoTerminal
}
func (c *fakeClient) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	if c.term != nil {
		return c.term.wait(ctx, p)
	}
	return sdk.WaitForTerminalExitResponse{}, errNoTerminal
}

// snapshot returns copies of what the client recorded.
func (c *fakeClient) snapshot() (updates []sdk.SessionNotification, perms []sdk.RequestPermissionRequest, writes []sdk.WriteTextFileRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.SessionNotification(nil), c.updates...), append([]sdk.RequestPermissionRequest(nil), c.permissions...),
		append([]sdk.WriteTextFileRequest(nil), c.writes...)
}

type harness struct {
	t        *testing.T
	root     string
	stateDir string
	provider *model.Scripted
	client   *fakeClient
	conn     *sdk.ClientSideConnection
	session  sdk.SessionId
}

type harnessConfig struct {
	interactive bool
	policy      *tools.Policy
	maxSteps    int
	noFS        bool // the client offers no fs capabilities
	warnings    []string
	// root and stateDir, when set, reuse a workspace and state (a restart).
	root, stateDir string
	// perRootState gives each workspace root its own state directory under
	// stateDir (as cmd/cairn does); otherwise every root shares stateDir.
	perRootState bool
	rootsFile    string // Options.RootsFile
	terminal     bool   // the client offers terminal/* (terminal_test.go)
	// model, when set, wraps the scripted provider (usage_test.go) and
	// modelName names the model runs ask for.
	model     func(model.Provider) model.Provider
	modelName string
	dirs      []string // session/new's additionalDirectories (folders_test.go)
}

// rootStateDir is the state directory of root under perRootState.
func rootStateDir(stateDir, root string) string {
	return filepath.Join(stateDir, strings.ReplaceAll(strings.Trim(root, "/"), "/", "_"))
}

// newHarness starts the adapter on a workspace holding files, with the
// scripted model turns, initializes and opens a session.
func newHarness(t *testing.T, files map[string]string, script string, cfg harnessConfig) *harness {
	t.Helper()
	root, stateDir := cfg.root, cfg.stateDir
	if root == "" {
		root, _ = filepath.EvalSymlinks(t.TempDir())
	}
	if stateDir == "" {
		stateDir = t.TempDir()
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := model.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, stateDir: stateDir, provider: model.NewScripted(s), client: &fakeClient{buffers: map[string]string{}}}
	policy := tools.DefaultPolicy()
	if cfg.policy != nil {
		policy = *cfg.policy
	}
	opts := Options{
		Version: "test",
		StateDir: func(root string) (string, error) {
			if cfg.perRootState {
				return rootStateDir(h.stateDir, root), nil
			}
			return h.stateDir, nil
		},
		Configure: func(root, stateDir string) Setup {
			var p model.Provider = h.provider
			if cfg.model != nil {
				p = cfg.model(p)
			}
			return Setup{Run: agent.Config{Provider: p, ModelName: cfg.modelName, MaxSteps: cfg.maxSteps}, Interactive: cfg.interactive, Policy: policy, Warnings: cfg.warnings}
		},
		Environ:   []string{"PATH=" + os.Getenv("PATH")},
		RootsFile: cfg.rootsFile,
	}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, agentIn, agentOut, opts) }()
	t.Cleanup(func() {
		_ = clientOut.Close()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Serve did not return after the client went away")
		}
	})
	h.conn = sdk.NewClientSideConnection(h.client, clientOut, clientIn)
	caps := sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: !cfg.noFS, WriteTextFile: !cfg.noFS}, Terminal: cfg.terminal}
	if cfg.terminal {
		h.client.term = newTermHost()
	}
	if _, err := h.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	resp, err := h.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}, AdditionalDirectories: cfg.dirs})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	h.session = resp.SessionId
	return h
}

func (h *harness) abs(rel string) string { return filepath.Join(h.root, filepath.FromSlash(rel)) }

func (h *harness) read(rel string) string {
	b, err := os.ReadFile(h.abs(rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

// prompt sends a text prompt and waits for its answer.
func (h *harness) prompt(blocks ...sdk.ContentBlock) (sdk.PromptResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.conn.Prompt(ctx, sdk.PromptRequest{SessionId: h.session, Prompt: blocks})
}

func (h *harness) mustPrompt(blocks ...sdk.ContentBlock) sdk.PromptResponse {
	h.t.Helper()
	resp, err := h.prompt(blocks...)
	if err != nil {
		h.t.Fatalf("session/prompt: %v", err)
	}
	return resp
}

// toolUpdates returns the tool_call_update notifications of one call.
func toolUpdates(updates []sdk.SessionNotification, callID string) []*sdk.SessionToolCallUpdate {
	var out []*sdk.SessionToolCallUpdate
	for _, u := range updates {
		if tu := u.Update.ToolCallUpdate; tu != nil && string(tu.ToolCallId) == callID {
			out = append(out, tu)
		}
	}
	return out
}

func lastStatus(updates []sdk.SessionNotification, callID string) sdk.ToolCallStatus {
	var st sdk.ToolCallStatus
	for _, tu := range toolUpdates(updates, callID) {
		if tu.Status != nil {
			st = *tu.Status
		}
	}
	return st
}

func agentText(updates []sdk.SessionNotification) string {
	var b strings.Builder
	for _, u := range updates {
		if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}
