package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/trace"
)

// Settings are the `cairn` configuration section (see CONTRACT.md). Fields
// not given by the client fall back to environment variables.
type Settings struct {
	Model struct {
		Provider        string `json:"provider"`
		Name            string `json:"name"`
		BaseURL         string `json:"baseURL"`
		ContextWindow   int    `json:"contextWindow"`
		MaxOutputTokens int    `json:"maxOutputTokens"`
		// Prices overrides or extends the price table (docs/settings.md).
		Prices trace.Prices `json:"prices"`
	} `json:"model"`
	Scripted struct {
		Path string `json:"path"`
	} `json:"scripted"`
	Approval struct {
		Mode string `json:"mode"`
	} `json:"approval"`
	MCPServers map[string]MCPServer `json:"mcpServers"`
	Trace      struct {
		OTLPEndpoint string `json:"otlpEndpoint"`
	} `json:"trace"`
	// Policy adjusts the permission defaults (see docs/security.md).
	Policy *tools.Policy `json:"policy"`
	Replay struct {
		Run string `json:"run"`
	} `json:"replay"`
	// Sandbox confines run_command (see docs/security.md).
	Sandbox tools.SandboxSettings `json:"sandbox"`
	Agent   struct {
		MaxSteps       int     `json:"maxSteps"`
		MaxTokens      int     `json:"maxTokens"`      // input+output tokens per run
		MaxCostUSD     float64 `json:"maxCostUSD"`     // per run, at the price table's rates (model.prices)
		MaxDurationSec int     `json:"maxDurationSec"` // wall-clock per run
	} `json:"agent"`
	Index struct {
		// WaitMs bounds how long a question waits for the code index's
		// first build (nil: DefaultIndexWaitMs; negative: as long as it
		// takes; 0: not at all). The question's own files are indexed
		// first either way.
		WaitMs *int `json:"waitMs"`
		// Include and Exclude narrow what is indexed (workspace.Scope).
		Include []string `json:"include"`
		Exclude []string `json:"exclude"`
	} `json:"index"`
	Search struct {
		// Zoekt is the URL of a zoekt-webserver -rpc that serves code
		// search (CAIRN_ZOEKT, `cairn serve --zoekt`); see docs/scale.md.
		Zoekt string `json:"zoekt"`
	} `json:"search"`
}

// DefaultIndexWaitMs is index.waitMs when unset.
const DefaultIndexWaitMs = 5000

// MCPServer is one entry of mcpServers.
type MCPServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Trust   string            `json:"trust"`
}

// parseSettings reads settings from initializationOptions or
// didChangeConfiguration. It accepts the section itself, an object wrapping
// it under "cairn", and flat dotted keys ("model.provider"). Problems are
// returned as warnings; what could be read is kept.
func parseSettings(raw []byte) (Settings, []string) {
	return parseSettingsOnto(raw, Settings{})
}

// parseSettingsOnto is parseSettings with base's values for what raw
// leaves out: didChangeConfiguration carries the editor's settings on top
// of the launch configuration (initializationOptions), so an editor that
// sends only some sections does not unset the others.
func parseSettingsOnto(raw []byte, base Settings) (Settings, []string) {
	var s Settings
	// A deep copy: decoding below writes through base's maps and pointers.
	if b, err := json.Marshal(base); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	var warnings []string
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return s, []string{fmt.Sprintf("settings are not a JSON object: %v", err)}
	}
	if inner, ok := top["cairn"]; ok {
		if err := json.Unmarshal(inner, &top); err != nil {
			return s, []string{fmt.Sprintf("settings.cairn is not a JSON object: %v", err)}
		}
	}
	// Expand dotted keys into nested objects.
	nested := map[string]any{}
	for k, v := range top {
		var val any
		if err := json.Unmarshal(v, &val); err != nil {
			continue
		}
		parts := strings.Split(k, ".")
		cur := nested
		for i, p := range parts {
			if i == len(parts)-1 {
				if m, ok := val.(map[string]any); ok {
					if existing, ok := cur[p].(map[string]any); ok {
						for mk, mv := range m {
							existing[mk] = mv
						}
						continue
					}
				}
				cur[p] = val
				continue
			}
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
	}
	b, _ := json.Marshal(nested)
	// Decode field by field so one bad value does not lose the rest.
	var sections map[string]json.RawMessage
	_ = json.Unmarshal(b, &sections)
	decode := func(key string, dst any) {
		if v, ok := sections[key]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				warnings = append(warnings, fmt.Sprintf("setting %q is invalid: %v", key, err))
			}
		}
	}
	decode("model", &s.Model)
	decode("scripted", &s.Scripted)
	decode("approval", &s.Approval)
	decode("mcpServers", &s.MCPServers)
	decode("trace", &s.Trace)
	decode("agent", &s.Agent)
	decode("replay", &s.Replay)
	decode("policy", &s.Policy)
	decode("sandbox", &s.Sandbox)
	decode("index", &s.Index)
	decode("search", &s.Search)
	return s, warnings
}

// withEnv fills unset fields from the environment and validates values.
func (s Settings) withEnv(getenv func(string) string) (Settings, []string) {
	var warnings []string
	if s.Model.Provider == "" {
		s.Model.Provider = getenv("CAIRN_PROVIDER")
	}
	if s.Model.Name == "" {
		s.Model.Name = getenv("CAIRN_MODEL")
	}
	if s.Model.BaseURL == "" {
		switch s.Model.Provider {
		case "anthropic":
			s.Model.BaseURL = getenv("ANTHROPIC_BASE_URL")
		default:
			s.Model.BaseURL = getenv("OPENAI_BASE_URL")
		}
	}
	if s.Model.ContextWindow == 0 {
		if v := getenv("CAIRN_CONTEXT_WINDOW"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				warnings = append(warnings, fmt.Sprintf("CAIRN_CONTEXT_WINDOW=%q is not a positive number; using the default", v))
			} else {
				s.Model.ContextWindow = n
			}
		}
	}
	if s.Scripted.Path == "" {
		s.Scripted.Path = getenv("CAIRN_SCRIPT")
	}
	if s.Approval.Mode == "" {
		s.Approval.Mode = getenv("CAIRN_APPROVAL")
	}
	if s.Replay.Run == "" {
		s.Replay.Run = getenv("CAIRN_REPLAY_RUN")
	}
	if s.Sandbox.Mode == "" {
		s.Sandbox.Mode = getenv("CAIRN_SANDBOX")
	}
	if s.Search.Zoekt == "" {
		s.Search.Zoekt = getenv("CAIRN_ZOEKT")
	}
	if s.Trace.OTLPEndpoint == "" {
		s.Trace.OTLPEndpoint = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	switch s.Approval.Mode {
	case "":
		s.Approval.Mode = "ask"
	case "ask", "policy":
	default:
		warnings = append(warnings, fmt.Sprintf("approval.mode %q is not ask or policy; using ask", s.Approval.Mode))
		s.Approval.Mode = "ask"
	}
	switch s.Model.Provider {
	case "", "openai", "anthropic", "scripted", "replay":
	default:
		warnings = append(warnings, fmt.Sprintf("model.provider %q is not one of openai, anthropic, scripted", s.Model.Provider))
	}
	if s.Model.ContextWindow < 0 || s.Model.MaxOutputTokens < 0 {
		warnings = append(warnings, "model.contextWindow and model.maxOutputTokens must be positive; using defaults")
		s.Model.ContextWindow, s.Model.MaxOutputTokens = 0, 0
	}
	if s.Model.ContextWindow == 0 {
		s.Model.ContextWindow = 32000
	}
	if s.Model.MaxOutputTokens == 0 {
		s.Model.MaxOutputTokens = 4096
	}
	if s.Model.MaxOutputTokens >= s.Model.ContextWindow {
		warnings = append(warnings, fmt.Sprintf("model.maxOutputTokens (%d) must be smaller than model.contextWindow (%d); using a quarter of the window",
			s.Model.MaxOutputTokens, s.Model.ContextWindow))
		s.Model.MaxOutputTokens = s.Model.ContextWindow / 4
	}
	return s, warnings
}

// StateDir is where the server keeps state for a workspace:
// $CAIRN_STATE_DIR, else $XDG_CACHE_HOME/cairn/<hash>, else ~/.cache/cairn/<hash>.
func StateDir(root string, getenv func(string) string) (string, error) {
	if d := getenv("CAIRN_STATE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	base := getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the cache directory: %w", err)
		}
		base = filepath.Join(home, ".cache")
	}
	h := sha256.Sum256([]byte(root))
	return filepath.Join(base, "cairn", hex.EncodeToString(h[:8])), nil
}

// ReadSettings reads settings as initializationOptions carry them (raw may
// be empty) and fills what is unset from the environment. `cairn acp`, which
// has no initializationOptions, reads its settings file through it.
func ReadSettings(raw []byte, getenv func(string) string) (Settings, []string) {
	s, warnings := parseSettings(raw)
	s, more := s.withEnv(getenv)
	return s, append(warnings, more...)
}

// RunConfig returns cfg with the settings' model and limits applied.
func (s Settings) RunConfig(cfg agent.Config, provider model.Provider) agent.Config {
	cfg.Provider = provider
	cfg.ModelName = s.Model.Name
	cfg.ContextWindow = s.Model.ContextWindow
	cfg.MaxOutputTokens = s.Model.MaxOutputTokens
	cfg.MaxSteps = s.Agent.MaxSteps
	cfg.MaxTotalTokens = s.Agent.MaxTokens
	cfg.MaxCostUSD = s.Agent.MaxCostUSD
	cfg.Prices = s.Model.Prices
	cfg.MaxDuration = time.Duration(s.Agent.MaxDurationSec) * time.Second
	waitMs := DefaultIndexWaitMs
	if s.Index.WaitMs != nil {
		waitMs = *s.Index.WaitMs
	}
	switch {
	case waitMs < 0:
		cfg.IndexWait = -1
	case waitMs == 0:
		cfg.IndexWait = time.Nanosecond // goes ahead at once
	default:
		cfg.IndexWait = time.Duration(waitMs) * time.Millisecond
	}
	return cfg
}
