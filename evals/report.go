package evals

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// Report is the outcome of a run of the suite.
type Report struct {
	Total       int                 `json:"total"`
	Passed      int                 `json:"passed"`
	Failed      int                 `json:"failed"`
	Skipped     int                 `json:"skipped"`
	SuccessRate float64             `json:"successRate"` // passed / (total - skipped)
	ByType      map[string][]string `json:"failuresByType,omitempty"`
	Tokens      Stats               `json:"tokens"`
	Latency     Stats               `json:"latencyMs"`
	Steps       Stats               `json:"steps"`
	// ScriptedTokens are the token stats of the scripted cases alone (the
	// baseline gate compares them).
	ScriptedTokens Stats    `json:"scriptedTokens"`
	DurationMS     float64  `json:"durationMs"`
	Results        []Result `json:"results"`
}

// Stats are the average and 95th percentile of a metric over the cases
// that ran.
type Stats struct {
	Avg float64 `json:"avg"`
	P95 float64 `json:"p95"`
}

// NewReport summarizes results.
func NewReport(results []Result, d time.Duration) *Report {
	r := &Report{Total: len(results), ByType: map[string][]string{}, Results: results, DurationMS: ms(d)}
	var tokens, lat, steps, stok []float64
	for _, res := range results {
		switch res.Status {
		case StatusPass:
			r.Passed++
		case StatusFail:
			r.Failed++
			r.ByType[res.Type] = append(r.ByType[res.Type], res.Name)
		case StatusSkip:
			r.Skipped++
			continue
		}
		tokens = append(tokens, float64(res.Tokens()))
		lat = append(lat, res.LatencyMS)
		steps = append(steps, float64(res.Steps))
		if res.Scripted {
			stok = append(stok, float64(res.Tokens()))
		}
	}
	if ran := r.Total - r.Skipped; ran > 0 {
		r.SuccessRate = float64(r.Passed) / float64(ran)
	}
	r.Tokens, r.Latency, r.Steps, r.ScriptedTokens = stats(tokens), stats(lat), stats(steps), stats(stok)
	return r
}

func stats(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	// Nearest-rank percentile.
	i := int(math.Ceil(0.95*float64(len(s)))) - 1
	return Stats{Avg: round1(sum / float64(len(s))), P95: round1(s[max(i, 0)])}
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// OK reports whether no case failed.
func (r *Report) OK() bool { return r.Failed == 0 }

// failureOrder is the order of the failure groups in the text report.
var failureOrder = []string{FailWrongAnswer, FailWrongEdit, FailMissingContext, FailPolicyViolation, FailCrash, FailTimeout, FailInvalidToolCall, FailBadCase}

// WriteText prints the report for a person.
func (r *Report) WriteText(w io.Writer, verbose bool) {
	ran := r.Total - r.Skipped
	fmt.Fprintf(w, "cairn eval: %d/%d passed (%.1f%%), %d failed, %d skipped, in %.1fs\n",
		r.Passed, ran, 100*r.SuccessRate, r.Failed, r.Skipped, r.DurationMS/1000)
	if r.Failed > 0 {
		fmt.Fprintf(w, "\nfailures by type:\n")
		for _, t := range failureOrder {
			names := r.ByType[t]
			if len(names) == 0 {
				continue
			}
			fmt.Fprintf(w, "  %s (%d): %s\n", t, len(names), strings.Join(names, ", "))
		}
		fmt.Fprintf(w, "\n")
		for _, res := range r.Results {
			if res.Status != StatusFail {
				continue
			}
			fmt.Fprintf(w, "FAIL %s [%s]\n", res.Name, res.Type)
			for _, f := range res.Failures {
				fmt.Fprintf(w, "    %s: %s\n", f.Type, indent(f.Message))
			}
		}
	}
	if verbose {
		for _, res := range r.Results {
			switch res.Status {
			case StatusPass:
				fmt.Fprintf(w, "ok   %-36s tokens %6d  steps %2d  %7.1fms\n", res.Name, res.Tokens(), res.Steps, res.LatencyMS)
			case StatusSkip:
				fmt.Fprintf(w, "skip %-36s %s\n", res.Name, res.SkipReason)
			}
		}
	}
	fmt.Fprintf(w, "\ntokens:  avg %.1f  p95 %.0f   (scripted cases: avg %.1f)\n", r.Tokens.Avg, r.Tokens.P95, r.ScriptedTokens.Avg)
	fmt.Fprintf(w, "latency: avg %.1fms  p95 %.1fms\n", r.Latency.Avg, r.Latency.P95)
	fmt.Fprintf(w, "steps:   avg %.1f  p95 %.0f\n", r.Steps.Avg, r.Steps.P95)
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n      ") }

// Baseline is the committed record of the suite's metrics that the gate
// compares against.
type Baseline struct {
	Cases          int            `json:"cases"`
	SuccessRate    float64        `json:"successRate"`
	ScriptedTokens Stats          `json:"scriptedTokens"`
	Steps          Stats          `json:"steps"`
	CaseTokens     map[string]int `json:"caseTokens"` // scripted cases that passed
}

// MaxTokenRise is the allowed rise of the scripted cases' average tokens.
const MaxTokenRise = 0.20

// Baseline returns the report's baseline.
func (r *Report) Baseline() *Baseline {
	b := &Baseline{Cases: r.Total - r.Skipped, SuccessRate: r.SuccessRate, ScriptedTokens: r.ScriptedTokens, Steps: r.Steps, CaseTokens: map[string]int{}}
	for _, res := range r.Results {
		if res.Status == StatusPass && res.Scripted {
			b.CaseTokens[res.Name] = res.Tokens()
		}
	}
	return b
}

// LoadBaseline reads a baseline file.
func LoadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &b, nil
}

// WriteBaseline writes b as indented JSON.
func WriteBaseline(path string, b *Baseline) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Compare returns the regressions of r against the baseline: a lower
// success rate, or average tokens of the scripted cases more than 20%
// above the baseline's. Tokens are compared over the scripted cases present
// in both (so adding a case is not a regression); without per-case figures,
// over the suite averages.
func (r *Report) Compare(b *Baseline) []string {
	var out []string
	if r.SuccessRate+1e-9 < b.SuccessRate {
		out = append(out, fmt.Sprintf("success rate %.1f%% is below the baseline's %.1f%%", 100*r.SuccessRate, 100*b.SuccessRate))
	}
	var now, then float64
	n := 0
	for _, res := range r.Results {
		if !res.Scripted || res.Status == StatusSkip {
			continue
		}
		if bt, ok := b.CaseTokens[res.Name]; ok {
			now += float64(res.Tokens())
			then += float64(bt)
			n++
		}
	}
	if n == 0 {
		now, then = r.ScriptedTokens.Avg, b.ScriptedTokens.Avg
	} else {
		now, then = now/float64(n), then/float64(n)
	}
	if then > 0 && now > then*(1+MaxTokenRise) {
		out = append(out, fmt.Sprintf("average tokens of the scripted cases rose %.0f%% (%.1f → %.1f; the limit is %.0f%%)",
			100*(now/then-1), then, now, 100*MaxTokenRise))
	}
	return out
}
