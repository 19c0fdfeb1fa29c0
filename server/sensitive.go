package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/protocol"
)

// Settings that start processes or decide where code and keys are sent
// (mcpServers, model.baseURL, search.zoekt, scripted.path), and those that loosen the
// sandbox or the policy, are the user's to choose. The
// editor clients declare them user/machine-scoped, so a workspace's own
// settings file cannot set them; a client that forwards workspace settings
// anyway (or a settings file the agent was allowed to write) must not start
// a process or redirect the API key without the user's word. So a value
// that arrives after startup through workspace/didChangeConfiguration, and
// differs from the one in effect, is held back (the one in effect stays)
// until the user allows it with window/showMessageRequest. An allowed value
// is remembered for the workspace (in its state directory) and never asked
// about again; a denied one is not asked about again in this session.
// Values given at startup (initializationOptions) and the environment's
// fallbacks are the user's launch configuration and are not asked about.

// sensitiveSetting is one such setting: its name as the user knows it, why
// it matters, and how to read and put back its value.
type sensitiveSetting struct {
	key string
	why string
	get func(*Settings) string // "" when unset
	set func(dst *Settings, from Settings)
}

var sensitiveSettings = []sensitiveSetting{
	{
		key: "mcpServers",
		why: "each entry is a program Cairn starts, outside the command sandbox",
		get: func(s *Settings) string {
			if len(s.MCPServers) == 0 {
				return ""
			}
			b, _ := json.Marshal(s.MCPServers) // map keys sorted: a stable text
			return string(b)
		},
		set: func(dst *Settings, from Settings) { dst.MCPServers = from.MCPServers },
	},
	{
		key: "model.baseURL",
		why: "your API key and your code are sent to this address",
		get: func(s *Settings) string { return strings.TrimSpace(s.Model.BaseURL) },
		set: func(dst *Settings, from Settings) { dst.Model.BaseURL = from.Model.BaseURL },
	},
	{
		key: "search.zoekt",
		why: "the agent's code searches (words of your code and questions) are sent to this address",
		get: func(s *Settings) string { return strings.TrimSpace(s.Search.Zoekt) },
		set: func(dst *Settings, from Settings) { dst.Search.Zoekt = from.Search.Zoekt },
	},
	{
		key: "scripted.path",
		why: "the script decides every answer and tool call of the model",
		get: func(s *Settings) string { return strings.TrimSpace(s.Scripted.Path) },
		set: func(dst *Settings, from Settings) { dst.Scripted.Path = from.Scripted.Path },
	},
	// Settings that take the agent's walls down are held the same way when
	// they loosen (a tighter value applies at once).
	{
		key: "sandbox.mode",
		why: "with \"off\", commands run with no sandbox at all",
		get: func(s *Settings) string {
			if strings.TrimSpace(s.Sandbox.Mode) == "off" {
				return "off"
			}
			return ""
		},
		set: func(dst *Settings, from Settings) { dst.Sandbox.Mode = from.Sandbox.Mode },
	},
	{
		key: "sandbox.network",
		why: "sandboxed commands can then reach the network",
		get: func(s *Settings) string {
			if s.Sandbox.Network {
				return "true"
			}
			return ""
		},
		set: func(dst *Settings, from Settings) { dst.Sandbox.Network = from.Sandbox.Network },
	},
	{
		key: "sandbox.writableRoots",
		why: "sandboxed commands can write these directories",
		get: func(s *Settings) string {
			return jsonOrEmpty(len(s.Sandbox.WritableRoots) > 0, s.Sandbox.WritableRoots)
		},
		set: func(dst *Settings, from Settings) { dst.Sandbox.WritableRoots = from.Sandbox.WritableRoots },
	},
	{
		key: "sandbox.readableRoots",
		why: "sandboxed commands can read these directories",
		get: func(s *Settings) string {
			return jsonOrEmpty(len(s.Sandbox.ReadableRoots) > 0, s.Sandbox.ReadableRoots)
		},
		set: func(dst *Settings, from Settings) { dst.Sandbox.ReadableRoots = from.Sandbox.ReadableRoots },
	},
	{
		key: "policy",
		why: "its rules decide which calls run without asking",
		get: func(s *Settings) string { return jsonOrEmpty(s.Policy != nil, s.Policy) },
		set: func(dst *Settings, from Settings) { dst.Policy = from.Policy },
	},
}

func jsonOrEmpty(set bool, v any) string {
	if !set {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// settingsGuard is the server's state for held-back settings.
type settingsGuard struct {
	mu        sync.Mutex
	requested *Settings       // the latest settings the client sent
	asking    map[string]bool // key+value questions in flight
	declined  map[string]bool // key+value the user denied in this session
	askMu     sync.Mutex      // one question at a time
}

func sensitiveID(key, value string) string {
	sum := sha256.Sum256([]byte(key + "\x00" + value))
	return hex.EncodeToString(sum[:])
}

// confirmedFile is where allowed values are remembered (hashes only).
func confirmedFile(stateDir string) string { return filepath.Join(stateDir, "confirmed-settings.json") }

func loadConfirmed(stateDir string) []string {
	if stateDir == "" {
		return nil
	}
	b, err := os.ReadFile(confirmedFile(stateDir))
	if err != nil {
		return nil
	}
	var ids []string
	if json.Unmarshal(b, &ids) != nil {
		return nil
	}
	return ids
}

func saveConfirmed(stateDir, id string) error {
	if stateDir == "" {
		return errors.New("no state directory")
	}
	ids := loadConfirmed(stateDir)
	if slices.Contains(ids, id) {
		return nil
	}
	b, _ := json.Marshal(append(ids, id))
	tmp := confirmedFile(stateDir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("remembering a confirmed setting: %w", err)
	}
	if err := os.Rename(tmp, confirmedFile(stateDir)); err != nil {
		return fmt.Errorf("remembering a confirmed setting: %w", err)
	}
	return nil
}

type heldSetting struct {
	setting sensitiveSetting
	value   string
}

// holdSensitive returns next with every sensitive value that needs the
// user's word replaced by the one in effect, and asks for those in the
// background; an allowed value is then applied with the client's latest
// settings. Called for workspace/didChangeConfiguration, in wire order: it
// never waits for the client.
func (s *Server) holdSensitive(next Settings) Settings {
	s.mu.Lock()
	current, stateDir := s.settings, s.stateDir
	s.mu.Unlock()
	g := &s.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	req := next
	g.requested = &req
	confirmed := loadConfirmed(stateDir)
	var held []heldSetting
	for _, st := range sensitiveSettings {
		v := st.get(&next)
		if v == "" || v == st.get(&current) || slices.Contains(confirmed, sensitiveID(st.key, v)) {
			continue
		}
		st.set(&next, current)
		id := sensitiveID(st.key, v)
		if g.declined[id] || g.asking[id] {
			continue
		}
		if g.asking == nil {
			g.asking = map[string]bool{}
		}
		g.asking[id] = true
		held = append(held, heldSetting{st, v})
	}
	if len(held) > 0 {
		go s.askSensitive(held)
	}
	return next
}

// askSensitive asks about each held value, one question at a time, and
// applies the client's latest settings once one is allowed.
func (s *Server) askSensitive(held []heldSetting) {
	g := &s.guard
	g.askMu.Lock()
	defer g.askMu.Unlock()
	allowed := false
	for _, h := range held {
		id := sensitiveID(h.setting.key, h.value)
		ok, err := s.askSetting(h)
		g.mu.Lock()
		delete(g.asking, id)
		if !ok {
			if g.declined == nil {
				g.declined = map[string]bool{}
			}
			g.declined[id] = true
		}
		g.mu.Unlock()
		if err != nil {
			slog.Warn("a setting that starts processes or receives keys was not confirmed", "setting", h.setting.key, "err", err)
		}
		if !ok {
			s.logToClient(slog.LevelWarn, fmt.Sprintf("configuration: %s was not changed: the new value was not confirmed", h.setting.key))
			continue
		}
		s.mu.Lock()
		stateDir := s.stateDir
		s.mu.Unlock()
		if err := saveConfirmed(stateDir, id); err != nil {
			s.logToClient(slog.LevelWarn, "configuration: "+err.Error())
		}
		allowed = true
	}
	if !allowed {
		return
	}
	g.mu.Lock()
	latest := g.requested
	g.mu.Unlock()
	if latest != nil {
		s.applySettings(s.holdSensitive(*latest), nil)
	}
}

// askSetting asks the user about one value.
func (s *Server) askSetting(h heldSetting) (bool, error) {
	s.mu.Lock()
	canAsk := s.caps.showMessageReq
	s.mu.Unlock()
	if !canAsk {
		return false, errors.New("the editor cannot be asked (no window.showMessage capability)")
	}
	shown := h.value
	if len(shown) > 400 {
		shown = shown[:400] + "…"
	}
	shown = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, shown)
	msg := fmt.Sprintf("Cairn: the editor's settings now set %s = %s\n"+
		"This matters because %s. Workspace settings can come with a repository; use this value only if you set it.\n"+
		"Allow to use it (remembered for this workspace), Deny to keep the current value.", h.setting.key, shown, h.setting.why)
	params := &lsp.ShowMessageRequestParams{
		Type:    lsp.MessageTypeWarning,
		Message: msg,
		Actions: []lsp.MessageActionItem{{Title: protocol.ActionAllowOnce}, {Title: protocol.ActionDeny}},
	}
	var raw jsonrpc2.RawMessage
	if err := s.callClient(s.ctx, s.approvalTimeout(), "window/showMessageRequest", params, &raw); err != nil {
		return false, fmt.Errorf("asking about %s: %w", h.setting.key, err)
	}
	var item *lsp.MessageActionItem
	if err := json.Unmarshal(raw, &item); err != nil || item == nil {
		return false, nil
	}
	switch strings.TrimSpace(item.Title) {
	case protocol.ActionAllowOnce, protocol.ActionAllowSession:
		return true, nil
	}
	return false, nil
}
