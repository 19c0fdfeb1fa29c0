package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/evals"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/workspace"
)

func init() {
	register(command{"eval", "run eval cases: success rate, failures by type, tokens, latency, steps (eval record RUN drafts a case)", runEval})
}

// runEval runs the eval cases of a directory (or single .txtar files) and
// prints the report; it exits 1 when a case fails or, with --baseline, when
// the metrics regressed.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "record" {
		return runEvalRecord(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "mcp-echo" {
		// The small MCP server eval cases can configure (evalServer: echo).
		return evals.ServeEchoMCP(ctx)
	}
	fs := newFlagSet("eval", "cairn eval [flags] [DIR | CASE.txtar]...\n       "+evalRecordSynopsis)
	jsonOut := fs.Bool("json", false, "print the report as one JSON document")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "cases run at once")
	timeout := fs.Duration("timeout", 60*time.Second, "time limit of one case (a case's own timeout wins)")
	provider := fs.String("provider", "", "model provider of the real-provider cases (openai, anthropic); default $CAIRN_PROVIDER; without one they are skipped")
	modelName := fs.String("model", "", "model name for the real-provider cases (default $CAIRN_MODEL)")
	baseURL := fs.String("base-url", "", "endpoint of the real provider (default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL)")
	baseline := fs.String("baseline", "", "compare with this baseline: fail on a lower success rate or >20% more tokens in scripted cases")
	update := fs.Bool("update-baseline", false, "write the baseline (--baseline, default evals/baseline.json) from this run")
	run := fs.String("run", "", "only cases whose name matches this regular expression")
	verbose := fs.Bool("v", false, "list every case")
	paths, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return err
	}
	if os.Getenv("CAIRN_LOG") != "debug" {
		// The servers' logs would drown the report; failures are in it.
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	if len(paths) == 0 {
		paths = []string{"evals/cases"}
	}
	var cases []*evals.Case
	for _, p := range paths {
		var cs []*evals.Case
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			c, err := evals.LoadFile(p)
			if err != nil {
				return err
			}
			cs = []*evals.Case{c}
		} else {
			var err error
			if cs, err = evals.LoadDir(p); err != nil {
				return err
			}
		}
		cases = append(cases, cs...)
	}
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			return usagef("--run: %v", err)
		}
		var keep []*evals.Case
		for _, c := range cases {
			if re.MatchString(c.Name) {
				keep = append(keep, c)
			}
		}
		cases = keep
	}
	if len(cases) == 0 {
		return fmt.Errorf("no cases to run")
	}
	opts := evals.Options{Parallel: *parallel, Timeout: *timeout,
		Real: evals.RealProvider{Provider: *provider, Model: *modelName, BaseURL: *baseURL}}
	// Cases that kill the server run it as a process: this binary's serve.
	if exe, err := os.Executable(); err == nil {
		opts.ServerCommand = []string{exe, "serve"}
		opts.EchoMCP = &evals.MCPCommand{Command: exe, Args: []string{"eval", "mcp-echo"}}
	}
	rep := evals.RunCases(ctx, cases, opts)

	var regressions []string
	if *baseline != "" && !*update {
		b, err := evals.LoadBaseline(*baseline)
		if err != nil {
			return fmt.Errorf("reading the baseline: %w", err)
		}
		regressions = rep.Compare(b)
	}
	if *jsonOut {
		doc := struct {
			*evals.Report
			Regressions []string `json:"regressions,omitempty"`
		}{rep, regressions}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	} else {
		rep.WriteText(stdout, *verbose)
		if *baseline != "" && !*update {
			if len(regressions) == 0 {
				fmt.Fprintf(stdout, "baseline %s: no regression\n", *baseline)
			}
			for _, r := range regressions {
				fmt.Fprintf(stdout, "REGRESSION against %s: %s\n", *baseline, r)
			}
		}
	}
	if *update {
		path := *baseline
		if path == "" {
			path = "evals/baseline.json"
		}
		if err := evals.WriteBaseline(path, rep.Baseline()); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", path)
	}
	if !rep.OK() || len(regressions) > 0 {
		return exitError(1)
	}
	return nil
}

// runEvalRecord turns a run's journal into a draft case.
// resolveRun returns the run that id names among the journals in runsDir:
// the id itself, or the one run whose id starts with it (as trace show
// takes them).
func resolveRun(runsDir, id string) (string, error) {
	if id == "" {
		return "", usagef("no run id given")
	}
	ents, err := os.ReadDir(runsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no run %q: %s holds no run journals", id, runsDir)
	}
	if err != nil {
		return "", fmt.Errorf("listing the runs in %s: %w", runsDir, err)
	}
	var match []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if e.Name() == id {
			return id, nil
		}
		if strings.HasPrefix(e.Name(), id) {
			match = append(match, e.Name())
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("no run %q in %s", id, runsDir)
	case 1:
		return match[0], nil
	}
	sort.Strings(match)
	return "", fmt.Errorf("run %q is ambiguous: %s", id, strings.Join(match, ", "))
}

const evalRecordSynopsis = "cairn eval record [--root DIR] [--state DIR] [-o FILE] RUN"

func runEvalRecord(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, root := newFlags("eval record", evalRecordSynopsis)
	state := fs.String("state", "", "the server's state directory (default: $CAIRN_STATE_DIR, else the cache directory of --root)")
	out := fs.String("o", "", "write the case to this file instead of stdout")
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageLine(evalRecordSynopsis + " (RUN: a run id or an unambiguous prefix of one)")
	}
	runID := strings.TrimSpace(pos[0])
	dir := *state
	if dir == "" {
		ws, err := workspace.Open(*root)
		if err != nil {
			return err
		}
		if dir, err = server.StateDir(ws.Root(), os.Getenv); err != nil {
			return err
		}
	}
	if runID, err = resolveRun(filepath.Join(dir, "runs"), runID); err != nil {
		return err
	}
	data, notes, err := evals.Record(evals.RecordOptions{StateDir: dir, Root: *root, RunID: runID})
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	if *out == "" {
		_, err = stdout.Write(data)
		return err
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s\n", *out)
	return nil
}
