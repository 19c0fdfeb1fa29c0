package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/tools"
)

func init() {
	register(command{"audit", "the approval audit log: `audit list` prints it, `audit verify` checks its hash chain", runAudit})
}

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const synopsis = "cairn audit list|verify [--root DIR]"
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(stdout, "usage: "+synopsis)
		return flag.ErrHelp
	}
	if len(args) == 0 {
		return usageLine(synopsis)
	}
	if args[0] != "list" && args[0] != "verify" {
		return usagef("unknown audit command %q (cairn audit -h lists them)", args[0])
	}
	sub := args[0]
	fs, root := newFlags("audit "+sub, "cairn audit "+sub+" [--root DIR]")
	if err := parseFlags(fs, args[1:], stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageLine(synopsis)
	}
	state, err := stateDirFor(*root)
	if err != nil {
		return err
	}
	path := filepath.Join(state, "audit.jsonl")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no audit log for %s (looked in %s)", *root, path)
	}
	switch sub {
	case "verify":
		line, err := tools.VerifyAudit(path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if line != 0 {
			return fmt.Errorf("the audit log's hash chain breaks at line %d of %s: a record was changed or removed", line, path)
		}
		recs, _ := tools.ReadAudit(path)
		fmt.Fprintf(stdout, "ok: %d records, chain intact (%s)\n", len(recs), path)
	case "list":
		recs, err := tools.ReadAudit(path)
		if err != nil {
			return err
		}
		for _, r := range recs {
			fmt.Fprintf(stdout, "%s  %-14s %-12s %-11s %-14s %s  %s\n", r.Time.Format("2006-01-02 15:04:05"), r.RunID, r.Tool, r.Risk, r.Decision,
				strings.ReplaceAll(compact(r.Input, 80), "\n", " "), r.By)
		}
	}
	return nil
}
