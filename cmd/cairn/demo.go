package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
)

//go:embed all:_sample
var sampleFS embed.FS

// runDemo copies the bundled sample workspace to a temporary folder, starts
// `cairn serve` as a child process on the scripted model, and drives it as
// an editor: open a file, ask on a selection, watch the tool calls, review
// the proposed edit as a diff, accept it, undo it.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs_ := newFlagSet("demo", "cairn demo [--keep]")
	keep := fs_.Bool("keep", false, "keep the temporary workspace and print its path")
	if err := parseFlags(fs_, args, stdout); err != nil {
		return err
	}
	if fs_.NArg() > 0 {
		return usagef("takes no arguments (got %q)", fs_.Args())
	}
	tmp, err := os.MkdirTemp("", "cairn-demo-")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(tmp)
	}
	ws := filepath.Join(tmp, "greeter")
	if err := copyEmbedded(sampleFS, "_sample/ws", ws); err != nil {
		return fmt.Errorf("copying the sample workspace: %w", err)
	}
	script := filepath.Join(tmp, "script.yaml")
	b, _ := sampleFS.ReadFile("_sample/script.yaml")
	if err := os.WriteFile(script, b, 0o644); err != nil {
		return err
	}

	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the cairn binary: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "serve", "--stdio")
	cmd.Env = append(os.Environ(), "CAIRN_STATE_DIR="+filepath.Join(tmp, "state"), "CAIRN_LOG=warn")
	cmd.Stderr = io.Discard
	if os.Getenv("CAIRN_DEMO_SERVER_LOG") != "" {
		cmd.Stderr = stderr
	}
	rwc, err := startProcess(cmd)
	if err != nil {
		return err
	}
	defer cmd.Wait()
	defer rwc.Close()

	p := func(format string, a ...any) { fmt.Fprintf(stdout, format, a...) }
	p("Cairn demo — the real server (%s serve) on the scripted model, driven over stdio as an editor would.\n", filepath.Base(exe))
	p("Workspace: a copy of the bundled sample, %s\n\n", ws)

	ed, err := lspclient.Connect(ctx, rwc, ws, lspclient.Options{Settings: map[string]any{
		"model":    map[string]any{"provider": "scripted", "name": "scripted-demo"},
		"scripted": map[string]any{"path": script},
	}})
	if err != nil {
		return fmt.Errorf("connecting to the server: %w", err)
	}
	p("→ initialize: connected\n")
	file := "greet/greet.go"
	if err := ed.Open(ctx, file); err != nil {
		return err
	}
	before, _ := ed.Text(file)
	p("→ didOpen %s\n\n", file)
	p("%s\n", indent(numberLines(before, 6, 9), "    "))
	question := "Make Greet handle an empty name."
	p("→ cairn.ask on %s lines 6-9: %q\n", file, question)
	runID, err := ed.Ask(ctx, file, 6, 9, question)
	if err != nil {
		return fmt.Errorf("cairn.ask: %w", err)
	}
	p("← runId %s\n\n", runID)

	editID, err := followRun(ctx, ed, runID, p)
	if err != nil {
		return err
	}
	if editID == "" {
		return fmt.Errorf("the run proposed no edit")
	}
	view, err := ed.GetEdit(ctx, editID)
	if err != nil {
		return fmt.Errorf("cairn.getEdit: %w", err)
	}
	p("\n→ cairn.getEdit %s — the proposed change, as the diff view shows it:\n\n%s\n", editID, indent(view.Diff, "    "))
	res, err := ed.Accept(ctx, editID)
	if err != nil {
		return fmt.Errorf("cairn.acceptEdit: %w", err)
	}
	if !res.Applied {
		return fmt.Errorf("the edit was not applied: %s", res.Reason)
	}
	after, _ := os.ReadFile(ed.Abs(file))
	p("→ cairn.acceptEdit: the server sent workspace/applyEdit; applied=%v, checkpoint %s\n", res.Applied, res.CheckpointID)
	p("  %s on disk now:\n%s\n", file, indent(numberLines(string(after), 6, 13), "    "))
	u, err := ed.Undo(ctx, res.CheckpointID)
	if err != nil {
		return fmt.Errorf("cairn.undo: %w", err)
	}
	restored, _ := os.ReadFile(ed.Abs(file))
	same := string(restored) == before
	p("→ cairn.undo %s: applied=%v, restored %s; file identical to the original: %v\n", res.CheckpointID, u.Applied, strings.Join(u.Restored, ", "), same)
	if err := ed.Close(ctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	p("→ shutdown, exit\n\nDone. Run `cairn serve` from your editor to do this on your own code (see README).\n")
	if *keep {
		p("The workspace is kept at %s\n", ws)
	}
	if !same {
		return fmt.Errorf("undo did not restore the file byte for byte")
	}
	return nil
}

// followRun prints the run's events as they arrive, as an editor's chat
// would show them, until the run ends; it returns the edit the run proposed.
func followRun(ctx context.Context, ed *lspclient.Editor, runID string, p func(string, ...any)) (string, error) {
	var editID string
	shown := 0
	textOpen := false
	for {
		evs, err := ed.WaitFor(ctx, runID, func(evs []protocol.RunEvent) bool { return len(evs) > shown })
		if err != nil {
			return "", err
		}
		for _, ev := range evs[shown:] {
			if ev.Kind != protocol.EventText && textOpen {
				p("\n")
				textOpen = false
			}
			switch ev.Kind {
			case protocol.EventStarted:
				p("  [%d] started\n", ev.Seq)
			case protocol.EventText:
				if !textOpen {
					p("  [%d] model: ", ev.Seq)
					textOpen = true
				}
				p("%s", ev.Delta)
			case protocol.EventToolCall:
				p("  [%d] tool call %s %s\n", ev.Seq, ev.Tool, compact(string(ev.Input), 100))
			case protocol.EventToolResult:
				p("  [%d] tool result: %s\n", ev.Seq, ev.Summary)
			case protocol.EventEditProposed:
				editID = ev.EditID
				p("  [%d] edit proposed: %s\n", ev.Seq, ev.EditID)
			case protocol.EventApproval:
				p("  [%d] approval of %s: %s\n", ev.Seq, ev.CallID, ev.Decision)
			case protocol.EventFinished:
				p("  [%d] finished (tokens: %d in, %d out)\n", ev.Seq, ev.Usage.InputTokens, ev.Usage.OutputTokens)
			default:
				p("  [%d] %s %s\n", ev.Seq, ev.Kind, ev.Error)
			}
		}
		shown = len(evs)
		if lspclient.IsTerminal(evs[len(evs)-1].Kind) {
			return editID, nil
		}
	}
}

func copyEmbedded(src embed.FS, dir, dst string) error {
	return fs.WalkDir(src, dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		// go.mod is stored as go.mod.sample: a directory holding a go.mod
		// would be another module, and go:embed would leave it out.
		target := filepath.Join(dst, strings.TrimSuffix(rel, ".sample"))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := src.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

func numberLines(text string, from, to int) string {
	lines := strings.Split(text, "\n")
	var b strings.Builder
	for i := from; i <= to && i <= len(lines); i++ {
		fmt.Fprintf(&b, "%3d  %s\n", i, lines[i-1])
	}
	return b.String()
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

func compact(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// procRWC joins a child's stdout (read) and stdin (write).
type procRWC struct {
	io.Reader
	io.WriteCloser
}

func startProcess(cmd *exec.Cmd) (io.ReadWriteCloser, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	return procRWC{out, in}, nil
}
