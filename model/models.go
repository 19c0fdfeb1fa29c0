package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxModelsBody bounds the model list read from a server: lists run to a
// few hundred entries (OpenRouter), far below it.
const maxModelsBody = 4 << 20

// ListModels returns the ids the endpoint's GET {base}/models lists (OpenAI,
// Ollama, vLLM, llama.cpp server and LM Studio have it), in the server's
// order. Servers without the route answer an error; the caller bounds the
// wait with ctx and falls back to the configured model.
func (p *OpenAI) ListModels(ctx context.Context) ([]string, error) {
	url := strings.TrimSuffix(p.endpoint, "/chat/completions") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("openai: listing models: %w", err)
	}
	for k, v := range p.cfg.Header {
		req.Header[k] = v
	}
	if p.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("openai: listing models at %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if err != nil {
		return nil, fmt.Errorf("openai: reading the model list from %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("openai: listing models at %s: HTTP %d", url, resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("openai: the model list from %s is not {data: [{id}]}: %w", url, err)
	}
	seen := map[string]bool{}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" && !seen[m.ID] {
			seen[m.ID] = true
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
