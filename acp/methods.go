package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sort"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
)

// What clients send that acp-go-sdk v0.13.0 cannot take is handled between
// guardInput and the SDK, one line (one JSON object) at a time:
//   - session/delete (in the v1 schema, not in this SDK) is answered here;
//   - an MCP server's env given as an object ({"NAME": "value"}, as
//     CodeCompanion sends it) is rewritten to the schema's [{name, value}],
//     which the SDK would otherwise refuse with the whole session/new.
//
// And sessionCapabilities.delete is added to the initialize answer, which
// the SDK's types cannot express.

const methodSessionDelete = "session/delete"

// interceptLines passes r's lines on, after the handling above; answers are
// written to out.
func (a *adapter) interceptLines(r io.Reader, out io.Writer) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if next, pass := a.intercept(line, out); pass {
					if _, werr := pw.Write(next); werr != nil {
						return
					}
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// intercept returns the line to pass on, or false when it was answered.
func (a *adapter) intercept(line []byte, out io.Writer) ([]byte, bool) {
	var m rawMessage
	if json.Unmarshal(line, &m) != nil || m.Method == "" {
		return line, true
	}
	isRequest := len(m.ID) > 0 && string(m.ID) != "null"
	switch m.Method {
	case methodSessionDelete:
		if !isRequest {
			return nil, false
		}
		go func() {
			err := a.deleteSession(m.Params)
			respond(out, m.ID, err)
		}()
		return nil, false
	case string(sdk.AgentMethodSessionNew), string(sdk.AgentMethodSessionLoad), string(sdk.AgentMethodSessionResume):
		if fixed, ok := envArrays(line); ok {
			return fixed, true
		}
	}
	return line, true
}

// respond writes the answer to request id: an empty result, or err.
func respond(out io.Writer, id json.RawMessage, err error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		var re *sdk.RequestError
		if !errors.As(err, &re) {
			re = &sdk.RequestError{Code: -32603, Message: err.Error()}
		}
		msg["error"] = map[string]any{"code": re.Code, "message": re.Message}
	} else {
		msg["result"] = map[string]any{}
	}
	b, merr := json.Marshal(msg)
	if merr != nil {
		slog.Error("encoding an ACP answer", "err", merr)
		return
	}
	_, _ = out.Write(append(b, '\n'))
}

// envArrays rewrites each mcpServers[].env object of a session request as
// the [{name, value}] array the schema has (and headers objects of http/sse
// servers alike); ok is false when there was nothing to rewrite.
func envArrays(line []byte) ([]byte, bool) {
	if !bytes.Contains(line, []byte(`"env"`)) && !bytes.Contains(line, []byte(`"headers"`)) {
		return nil, false
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return nil, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil {
		return nil, false
	}
	var servers []map[string]json.RawMessage
	if json.Unmarshal(params["mcpServers"], &servers) != nil {
		return nil, false
	}
	changed := false
	for _, s := range servers {
		for _, key := range []string{"env", "headers"} {
			var obj map[string]json.RawMessage
			if json.Unmarshal(s[key], &obj) != nil || obj == nil {
				continue // an array (the schema's shape), null or missing
			}
			names := make([]string, 0, len(obj))
			for n := range obj {
				names = append(names, n)
			}
			sort.Strings(names)
			vars := make([]sdk.EnvVariable, 0, len(obj)) // {name, value}: a header's shape too
			for _, n := range names {
				var v string
				if json.Unmarshal(obj[n], &v) != nil {
					v = string(obj[n]) // a number or a boolean, as written
				}
				vars = append(vars, sdk.EnvVariable{Name: n, Value: v})
			}
			b, err := json.Marshal(vars)
			if err != nil {
				return nil, false
			}
			s[key], changed = b, true
		}
	}
	if !changed {
		return nil, false
	}
	var err error
	if params["mcpServers"], err = json.Marshal(servers); err != nil {
		return nil, false
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil, false
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, false
	}
	return append(b, '\n'), true
}

// deleteSession forgets a session: in this process, and its thread on disk.
// A session with a prompt in progress is refused (cancel it first).
func (a *adapter) deleteSession(raw json.RawMessage) error {
	var p struct {
		SessionID *string `json:"sessionId"`
	}
	if json.Unmarshal(raw, &p) != nil || p.SessionID == nil {
		return invalidParams("session/delete takes {sessionId}")
	}
	id := *p.SessionID
	if !agent.ValidThreadID(id) {
		return invalidParams("invalid session id %q", truncateID(id))
	}
	a.mu.Lock()
	s, live := a.sessions[sdk.SessionId(id)]
	var open []*workspaceEngines
	for _, w := range a.workspaces {
		open = append(open, w)
	}
	a.mu.Unlock()
	if live {
		if s.turnActive() {
			return invalidRequest("session %s has a prompt in progress: cancel it first", id)
		}
		a.mu.Lock()
		delete(a.sessions, s.id)
		a.mu.Unlock()
		s.w.setSessionMCP(a.ctx, s.id, nil)
	}
	for _, w := range open {
		if _, ok := w.mgr.Thread(id); ok {
			if err := w.mgr.DeleteThread(id); err != nil {
				return err
			}
			slog.Info("session deleted", "session", id, "root", w.ws.Root())
			return nil
		}
	}
	for _, root := range a.knownRoots() {
		stateDir, err := a.opts.StateDir(root)
		if err != nil || !agent.ThreadExists(stateDir, id) {
			continue
		}
		if err := agent.DeleteSavedThread(stateDir, id); err != nil {
			return err
		}
		slog.Info("session deleted", "session", id, "root", root)
		return nil
	}
	return invalidParams("no session %q", id)
}

// capsWriter adds sessionCapabilities.delete to the initialize answer the
// SDK writes (one message per Write).
type capsWriter struct{ w io.Writer }

func (c *capsWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte(`"agentCapabilities"`)) {
		return c.w.Write(p)
	}
	var msg map[string]json.RawMessage
	var result map[string]json.RawMessage
	var caps map[string]json.RawMessage
	var sc map[string]json.RawMessage
	if json.Unmarshal(p, &msg) != nil || json.Unmarshal(msg["result"], &result) != nil ||
		json.Unmarshal(result["agentCapabilities"], &caps) != nil {
		return c.w.Write(p)
	}
	if json.Unmarshal(caps["sessionCapabilities"], &sc) != nil || sc == nil {
		sc = map[string]json.RawMessage{}
	}
	sc["delete"] = json.RawMessage(`{}`)
	var err error
	if caps["sessionCapabilities"], err = json.Marshal(sc); err != nil {
		return c.w.Write(p)
	}
	if result["agentCapabilities"], err = json.Marshal(caps); err != nil {
		return c.w.Write(p)
	}
	if msg["result"], err = json.Marshal(result); err != nil {
		return c.w.Write(p)
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return c.w.Write(p)
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return 0, err
	}
	return len(p), nil
}
