package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/cairn-dev/cairn/trace"
)

func init() {
	register(command{"trace", "the local traces of runs: list | show RUN [--json] | delete RUN...", runTrace})
}

var traceSynopsis = map[string]string{
	"list":   "cairn trace list [--root DIR] [--json]",
	"show":   "cairn trace show [--root DIR] [--json] RUN",
	"delete": "cairn trace delete [--root DIR] RUN...",
}

const traceUsage = `usage: cairn trace list [--root DIR] [--json]
       cairn trace show [--root DIR] [--json] RUN
       cairn trace delete [--root DIR] RUN...
RUN is a run id or an unambiguous prefix of one.`

// runTrace lists, shows and deletes the traces in the workspace's state
// directory (found as the server finds it).
func runTrace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{traceUsage}
	}
	sub := args[0]
	switch sub {
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, traceUsage)
		return flag.ErrHelp
	case "list", "show", "delete":
	default:
		return usagef("unknown trace command %q (cairn trace -h lists them)", sub)
	}
	fs, root := newFlags("trace "+sub, traceSynopsis[sub])
	asJSON := new(bool)
	if sub != "delete" {
		asJSON = fs.Bool("json", false, "print one JSON document")
	}
	pos, err := parseInterleaved(fs, args[1:], stdout)
	if err != nil {
		return err
	}
	stateDir, err := stateDirFor(*root)
	if err != nil {
		return err
	}
	store, err := trace.OpenStore(stateDir)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		if len(pos) != 0 {
			return usageLine(traceSynopsis[sub])
		}
		return traceList(store, *asJSON, stdout)
	case "show":
		if len(pos) != 1 {
			return usageLine(traceSynopsis[sub])
		}
		return traceShow(store, pos[0], *asJSON, stdout)
	default:
		if len(pos) == 0 {
			return usageLine(traceSynopsis[sub])
		}
		for _, id := range pos {
			full, err := store.Resolve(id)
			if err != nil {
				return err
			}
			if err := store.Delete(full); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "deleted %s\n", full)
		}
		return nil
	}
}

func traceList(store *trace.Store, asJSON bool, stdout io.Writer) error {
	list, err := store.List()
	if err != nil {
		return err
	}
	if asJSON {
		if list == nil {
			list = []trace.Summary{}
		}
		return traceWriteJSON(stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintf(stdout, "no traces in %s\n", store.Dir())
		return nil
	}
	return trace.WriteSummaries(stdout, list, nil)
}

func traceShow(store *trace.Store, id string, asJSON bool, stdout io.Writer) error {
	full, err := store.Resolve(id)
	if err != nil {
		return err
	}
	t, err := store.Load(full)
	if err != nil {
		return err
	}
	if asJSON {
		return traceWriteJSON(stdout, t)
	}
	s := t.Summarize()
	if err := trace.WriteSummaries(stdout, []trace.Summary{s}, nil); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trace id %s\n\n", s.TraceID)
	return trace.WriteTree(stdout, t)
}

func traceWriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
