package server

import (
	"testing"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/trace"
)

// model.prices reaches the runs' configuration, nested or as a flat
// dotted key, and a bad value is a warning that keeps the other settings.
func TestModelPricesSetting(t *testing.T) {
	want := trace.Price{Input: 0.2, CachedInput: 0.05, CacheWrite: 0.25, Output: 0.8}
	for _, raw := range []string{
		`{"model": {"name": "my-model", "prices": {"my-model": {"input": 0.2, "cachedInput": 0.05, "cacheWrite": 0.25, "output": 0.8}}}}`,
		`{"cairn": {"model.name": "my-model", "model.prices": {"my-model": {"input": 0.2, "cachedInput": 0.05, "cacheWrite": 0.25, "output": 0.8}}}}`,
	} {
		s, warnings := ReadSettings([]byte(raw), func(string) string { return "" })
		cfg := s.RunConfig(agent.Config{}, nil)
		if got := cfg.Prices["my-model"]; got != want || cfg.ModelName != "my-model" {
			t.Errorf("%s: prices %+v model %q (warnings %v)", raw, cfg.Prices, cfg.ModelName, warnings)
		}
	}
	s, warnings := ReadSettings([]byte(`{"model": {"name": "m", "prices": {"m": {"input": "cheap"}}}}`), func(string) string { return "" })
	if len(warnings) == 0 || s.Model.Name != "m" {
		t.Errorf("a bad price: warnings %v, model %q", warnings, s.Model.Name)
	}
}
