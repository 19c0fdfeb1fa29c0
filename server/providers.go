package server

import (
	"fmt"

	"github.com/cairn-dev/cairn/agent"

	"github.com/cairn-dev/cairn/model"
)

// newProvider builds the configured model provider. An unusable
// configuration is an error that names the setting to fix.
func (s *Server) newProvider(st Settings) (model.Provider, error) {
	if s.opts.Provider != nil {
		return s.opts.Provider, nil
	}
	return NewProvider(st, s.stateDir, s.opts.Getenv)
}

// NewProvider builds the provider that settings name; stateDir holds the
// runs a replay provider reads. `cairn acp` builds its provider through it.
func NewProvider(st Settings, stateDir string, getenv func(string) string) (model.Provider, error) {
	switch st.Model.Provider {
	case "":
		return nil, fmt.Errorf("no model provider is set: set model.provider (or CAIRN_PROVIDER) to openai, anthropic or scripted")
	case "scripted":
		if st.Scripted.Path == "" {
			return nil, fmt.Errorf("model.provider is scripted but scripted.path (or CAIRN_SCRIPT) is not set")
		}
		script, err := model.LoadScript(st.Scripted.Path)
		if err != nil {
			return nil, fmt.Errorf("scripted.path: %w", err)
		}
		return model.NewScripted(script), nil
	case "replay":
		if st.Replay.Run == "" {
			return nil, fmt.Errorf("model.provider is replay but replay.run (or CAIRN_REPLAY_RUN) names no run")
		}
		resps, err := agent.RecordedResponses(stateDir, st.Replay.Run)
		if err != nil {
			return nil, fmt.Errorf("replay.run: %w", err)
		}
		return model.NewReplay(resps), nil
	default:
		return newNetworkProvider(st, getenv)
	}
}
