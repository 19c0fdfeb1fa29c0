package server

import (
	"fmt"

	"github.com/cairn-dev/cairn/model"
)

// newNetworkProvider builds the openai and anthropic providers. Keys come
// only from the environment, never from settings.
func newNetworkProvider(st Settings, getenv func(string) string) (model.Provider, error) {
	switch st.Model.Provider {
	case "openai":
		return model.NewOpenAI(model.OpenAIConfig{BaseURL: st.Model.BaseURL, APIKey: getenv("OPENAI_API_KEY"), Model: st.Model.Name})
	case "anthropic":
		return model.NewAnthropic(model.AnthropicConfig{BaseURL: st.Model.BaseURL, APIKey: getenv("ANTHROPIC_API_KEY"),
			Model: st.Model.Name, MaxTokens: st.Model.MaxOutputTokens})
	}
	return nil, fmt.Errorf("model.provider %q is not one of openai, anthropic, scripted", st.Model.Provider)
}
