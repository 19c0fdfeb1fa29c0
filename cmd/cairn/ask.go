package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/workspace"
)

const (
	askSynopsis     = "cairn ask [--root DIR] [--folder DIR]... --file PATH [--range L1-L2] [--apply] [--apply-protected PATH,...] [--zoekt URL] QUESTION"
	contextSynopsis = "cairn context [--root DIR] --file PATH [--range L1-L2] [--tokens N] [--max-output N] QUESTION"
)

// runAsk runs one question non-interactively: the real server in process,
// approval mode policy (nothing is asked; risky calls are decided by policy),
// the model from the environment. It prints the answer and the proposed
// edits as a unified diff; --apply accepts them (with checkpoints).
//
// An edit of a protected path (workspace.Protected: git directories, Cairn's
// policy, editor, CI and direnv configuration) needs its own confirmation,
// which approval mode policy never gives: such an edit is proposed only when
// --apply-protected names its path (and then applied with --apply);
// otherwise it is skipped, and the path and why it matters are printed.
func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, root := newFlags("ask", askSynopsis)
	file := fs.String("file", "", "workspace-relative file the question is about (required)")
	rng := fs.String("range", "", "selected lines, 1-based inclusive: L1-L2")
	apply := fs.Bool("apply", false, "write the proposed edits (each with a checkpoint for undo)")
	var folders folderList
	fs.Var(&folders, "folder", "another workspace folder (repeatable): a multi-root workspace whose folders' paths begin with the folder's base name")
	applyProtected := fs.String("apply-protected", "", "comma-separated workspace-relative protected paths (.vscode/settings.json, .github/workflows/ci.yml, ...) whose edits may be proposed; only these")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	question := strings.Join(fs.Args(), " ")
	if *file == "" || strings.TrimSpace(question) == "" {
		return usageLine(askSynopsis)
	}
	from, to, err := parseRange(*rng)
	if err != nil {
		return err
	}
	if err := folders.resolve(); err != nil {
		return err
	}
	if from > 0 {
		b, err := os.ReadFile(lspclient.PathIn(*root, folders, *file))
		if err != nil {
			return fmt.Errorf("reading %s: %w", *file, err)
		}
		if err := checkRange(*file, string(b), from, to); err != nil {
			return err
		}
	}
	// The in-process server's configuration warnings wait for the question
	// to be asked: when they are why it is refused, the error says it once.
	logger := slog.Default()
	warnings := newConfigWarnings(logger.Handler())
	slog.SetDefault(slog.New(warnings))
	defer slog.SetDefault(logger)
	released := false
	defer func() {
		if !released {
			warnings.release(nil)
		}
	}()
	serverEnd, clientEnd := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, serverEnd, serverEnd, server.Options{}) }()
	// The question waits for the code index as long as it takes (a cold
	// workspace is indexed first, its own files before the rest), with one
	// line on stderr saying so.
	index := map[string]any{"waitMs": -1}
	edOpts := lspclient.Options{Settings: map[string]any{"approval": map[string]any{"mode": "policy"}, "index": index}}
	named := protectedList(*applyProtected)
	if len(named) > 0 {
		// The command line is the confirmation: the editor answers the
		// question for each path it names, and denies everything else
		// the policy would have asked about.
		edOpts = lspclient.Options{Settings: map[string]any{"approval": map[string]any{"mode": "ask"}, "index": index},
			Approve: func(msg string, _ []string) string { return confirmNamed(msg, named) }}
	}
	edOpts.Folders = folders
	var waitSaid sync.Once
	edOpts.Progress = func(kind, text string) {
		if kind == "report" && strings.HasPrefix(text, "indexing the workspace") {
			waitSaid.Do(func() { fmt.Fprintf(stderr, "· %s\n", text) })
		}
	}
	ed, err := lspclient.Connect(ctx, clientEnd, *root, edOpts)
	if err != nil {
		return err
	}
	defer func() { _ = ed.Close(context.WithoutCancel(ctx)); <-done }()
	if err := ed.Open(ctx, *file); err != nil {
		return fmt.Errorf("opening %s: %w", *file, err)
	}
	runID, err := ed.Ask(ctx, *file, from, to, question)
	warnings.release(err)
	released = true
	if err != nil {
		return err
	}
	shown := 0
	var evs []protocol.RunEvent
	for {
		evs, err = ed.WaitFor(ctx, runID, func(evs []protocol.RunEvent) bool { return len(evs) > shown })
		if err != nil {
			_ = ed.Cancel(context.WithoutCancel(ctx), runID)
			return err
		}
		for _, ev := range evs[shown:] {
			switch ev.Kind {
			case protocol.EventToolCall:
				fmt.Fprintf(stderr, "· %s %s\n", ev.Tool, compact(string(ev.Input), 100))
			case protocol.EventApproval:
				fmt.Fprintf(stderr, "· approval: %s\n", ev.Decision)
			}
		}
		shown = len(evs)
		if lspclient.IsTerminal(evs[len(evs)-1].Kind) {
			break
		}
	}
	end := evs[len(evs)-1]
	if end.Kind != protocol.EventFinished {
		return fmt.Errorf("the run %s: %s (%s)", end.Kind, end.Error, end.Class)
	}
	fmt.Fprintln(stdout, strings.TrimSpace(end.Answer))
	if end.Usage != nil {
		fmt.Fprintf(stderr, "· %s\n", usageSummary(*end.Usage))
	}
	reportSkippedProtected(stderr, *root, evs)
	for _, ev := range evs {
		if ev.Kind != protocol.EventEditProposed {
			continue
		}
		view, err := ed.GetEdit(ctx, ev.EditID)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\n%s", view.Diff)
		if *apply {
			res, err := ed.Accept(ctx, ev.EditID)
			if err != nil {
				return fmt.Errorf("applying %s: %w", ev.EditID, err)
			}
			if !res.Applied {
				return fmt.Errorf("applying %s: %s", ev.EditID, res.Reason)
			}
			fmt.Fprintf(stderr, "· applied %s (checkpoint %s)\n", ev.EditID, res.CheckpointID)
		}
	}
	return nil
}

// protectedList parses --apply-protected: workspace-relative paths, slash
// separated, cleaned.
func protectedList(s string) map[string]bool {
	out := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out[path.Clean(filepath.ToSlash(p))] = true
		}
	}
	return out
}

// confirmNamed answers one approval question of an --apply-protected run:
// Allow once for an edit of a protected path that the command line names,
// Deny for anything else (what approval mode policy does with a question).
// Only a question about the edit_file tool counts, and only a line that
// starts with the marker (tools.ApprovalText puts every line of a command
// or of model text after a label, so neither can forge one).
func confirmNamed(msg string, named map[string]bool) string {
	lines := strings.Split(msg, "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "run edit_file (") {
		return protocol.ActionDeny
	}
	for _, line := range lines[1:] {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), tools.ProtectedEdit)
		if !ok {
			continue
		}
		p := strings.TrimSpace(rest)
		if q, err := strconv.Unquote(p); err == nil {
			p = q
		}
		if named[path.Clean(filepath.ToSlash(p))] {
			return protocol.ActionAllowOnce
		}
		return protocol.ActionDeny
	}
	return protocol.ActionDeny
}

// reportSkippedProtected names each protected path whose edit was not
// proposed for want of a confirmation, why it matters and how to allow it.
func reportSkippedProtected(w io.Writer, root string, evs []protocol.RunEvent) {
	paths := map[string]string{}
	for _, ev := range evs {
		if ev.Kind != protocol.EventToolCall || ev.Tool != "edit_file" {
			continue
		}
		var in struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(ev.Input, &in) == nil && in.Path != "" {
			paths[ev.CallID] = in.Path
		}
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		p, ok := paths[ev.CallID]
		if ev.Kind != protocol.EventApproval || !ok || seen[p] {
			continue
		}
		if d := tools.Decision(ev.Decision); d.Allowed() {
			continue
		}
		why, protected := workspace.Protected(root, p)
		if !protected {
			continue
		}
		seen[p] = true
		fmt.Fprintf(w, "· skipped an edit of %s: it is a protected path (%s); to allow it, run again with --apply-protected %s\n", p, why, p)
	}
}

// runContext prints the context report for a question without calling a
// model, with the real indexes (warm from the state directory's caches).
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, root := newFlags("context", contextSynopsis)
	file := fs.String("file", "", "workspace-relative file the question is about (required)")
	rng := fs.String("range", "", "selected lines, 1-based inclusive: L1-L2")
	tokens := fs.Int("tokens", 32000, "context window to budget against")
	maxOut := fs.Int("max-output", 4096, "tokens reserved for the answer")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	question := strings.Join(fs.Args(), " ")
	if *file == "" {
		return usageLine(contextSynopsis)
	}
	from, to, err := parseRange(*rng)
	if err != nil {
		return err
	}
	ws, ix, err := openIndex(*root, codeindex.Options{})
	if err != nil {
		return err
	}
	defer ix.Close()
	abs, err := ws.Resolve(*file)
	if err != nil {
		return err
	}
	text, ok, err := ws.ReadFile(abs)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s does not exist", *file)
	}
	if err := checkRange(*file, text, from, to); err != nil {
		return err
	}
	if err := ix.Reconcile(ctx); err != nil {
		fmt.Fprintf(stderr, "cairn: updating the code index: %v\n", err)
	}
	req := contextengine.Request{Question: question, File: ws.Rel(abs), FileText: text, WS: ws, ContextWindow: *tokens, MaxOutput: *maxOut,
		Index: ix}
	if from > 0 {
		req.Selection = &contextengine.Selection{StartLine: from, EndLine: to}
	}
	b, err := contextengine.Build(req)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, b.Report.Markdown())
	return nil
}

// usageSummary is the one line `cairn ask` prints about what the answer
// used and cost. An unpriced model gets no figure, only how to give it one.
func usageSummary(u protocol.Usage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %d input tokens", u.InputTokens)
	switch {
	case u.CachedInputTokens > 0 && u.CacheWriteTokens > 0:
		fmt.Fprintf(&b, " (%d cached, %d written to the cache)", u.CachedInputTokens, u.CacheWriteTokens)
	case u.CachedInputTokens > 0:
		fmt.Fprintf(&b, " (%d cached)", u.CachedInputTokens)
	case u.CacheWriteTokens > 0:
		fmt.Fprintf(&b, " (%d written to the cache)", u.CacheWriteTokens)
	}
	fmt.Fprintf(&b, ", %d output", u.OutputTokens)
	if u.Estimated {
		b.WriteString(" (estimated)")
	}
	if u.CostUnknown {
		b.WriteString("; cost unknown: the model has no price (set model.prices)")
	} else {
		fmt.Fprintf(&b, "; cost $%.4f", u.CostUSD)
	}
	return b.String()
}

// folderList is the repeatable --folder flag: workspace folders after the
// root, each named by its base name as a multi-root editor names them.
type folderList []string

func (l *folderList) String() string { return strings.Join(*l, ",") }

func (l *folderList) Set(dir string) error {
	*l = append(*l, dir)
	return nil
}

// resolve makes every folder absolute and checks that it is a directory
// and that no two share a name.
func (l folderList) resolve() error {
	names := map[string]string{}
	for i, dir := range l {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("--folder %s: %w", dir, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fmt.Errorf("--folder %s: not a directory", dir)
		}
		name := filepath.Base(abs)
		if other, ok := names[name]; ok {
			return fmt.Errorf("--folder %s: its name %q is %s's too; paths could not tell them apart", dir, name, other)
		}
		names[name] = dir
		l[i] = abs
	}
	return nil
}
