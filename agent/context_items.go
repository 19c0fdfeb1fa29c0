package agent

import (
	"os"
	"regexp"
	"strconv"

	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// contextLocation is a report item's location: "path:a-b", "path:n",
// "path around a-b", each maybe followed by a symbol name, or a bare path.
var contextLocation = regexp.MustCompile(`^(\S+?)(?::(\d+)(?:-(\d+))?| around (\d+)-(\d+))?(?:\s.*)?$`)

// contextItems are the workspace files of a prompt, with their lines: what
// an editor lists under the answer (the `context` event). Items that are
// not a file of the workspace (the question, the repo map, history) are
// left out.
func contextItems(ws *workspace.Workspace, rep *contextengine.Report) []protocol.ContextItem {
	if rep == nil || ws == nil {
		return nil
	}
	var out []protocol.ContextItem
	for _, it := range rep.Items {
		if !it.Included {
			continue
		}
		switch it.Source {
		case contextengine.SourceInstructions, contextengine.SourceQuestion, contextengine.SourceHistory, contextengine.SourceRepoMap, contextengine.SourceToolResult:
			continue
		}
		m := contextLocation.FindStringSubmatch(it.Location)
		if m == nil {
			continue
		}
		abs, err := ws.Resolve(m[1])
		if err != nil {
			continue
		}
		if st, err := os.Stat(abs); err != nil || st.IsDir() {
			continue
		}
		ci := protocol.ContextItem{Path: ws.Rel(abs), Tokens: it.Tokens, Source: string(it.Source)}
		first, last := m[2], m[3]
		if m[4] != "" {
			first, last = m[4], m[5]
		}
		ci.StartLine, _ = strconv.Atoi(first)
		ci.EndLine, _ = strconv.Atoi(last)
		if ci.EndLine == 0 {
			ci.EndLine = ci.StartLine
		}
		out = append(out, ci)
	}
	return out
}
