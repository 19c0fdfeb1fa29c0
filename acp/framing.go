package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"
)

// maxMessage bounds one incoming line (the SDK's own reader gives up on the
// whole connection past 10 MB; this answers the line and goes on).
const maxMessage = 8 << 20

// lockedWriter serializes whole-line writes: the SDK writes each message in
// one Write, and so does guardInput, so lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// guardInput copies in to the returned reader line by line, passing on
// only lines that hold a JSON object. Anything else gets the JSON-RPC error
// a peer expects, written to out, and the connection goes on: a parse error
// (-32700) for a line that is not JSON, an invalid request (-32600) for a
// batch or a non-object, and for a line over maxMessage.
//
// Notifications are flow-controlled (see notifyGate): the SDK queues them
// in a fixed-size queue and closes the connection when it is full, so a
// flood must never reach it faster than they are handled.
func guardInput(in io.Reader, out io.Writer, gate *notifyGate) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := readLine(r)
			if len(bytes.TrimSpace(line)) > 0 || tooLong {
				if msg, ok := check(line, tooLong); ok {
					if gate.admit(line) {
						if _, werr := pw.Write(append(line, '\n')); werr != nil {
							return
						}
					}
				} else {
					slog.Warn("answered a malformed ACP message", "error", msg)
					reply(out, msg)
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// readLine reads one line without its newline; a line past maxMessage is
// consumed to its end and reported too long.
func readLine(r *bufio.Reader) ([]byte, bool, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > maxMessage {
				tooLong, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// check says whether a line may go to the SDK, or the error to answer.
func check(line []byte, tooLong bool) (string, bool) {
	if tooLong {
		return fmt.Sprintf(`{"code":-32600,"message":"message larger than %d bytes"}`, maxMessage), false
	}
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) {
		return `{"code":-32700,"message":"parse error: the line is not JSON"}`, false
	}
	if trimmed[0] != '{' {
		return `{"code":-32600,"message":"invalid request: ACP takes one JSON object per line (no batches)"}`, false
	}
	return "", true
}

func reply(out io.Writer, errObj string) {
	_, _ = out.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":` + errObj + "}\n"))
}

// maxQueuedNotifications bounds the notifications passed to the SDK and not
// yet handled: well below the SDK's queue (1024 in acp-go-sdk v0.13.0), whose
// overflow ends the connection.
const maxQueuedNotifications = 256

// notifyGate applies back-pressure on notifications. The only notification
// an agent acts on is session/cancel: a valid one is passed on once a slot
// is free (the reader waits, so the client's writes wait: the pipe is the
// queue), and its handler (adapter.Cancel) frees the slot. Every other
// notification would be answered by nothing and only logged by the SDK
// (unknown methods, malformed cancels): it is dropped here, so nothing the
// client sends can fill the SDK's queue. $/cancel_request is handled by the
// SDK on its reader, without the queue, and requests do not queue.
type notifyGate struct {
	slots   chan struct{}
	done    <-chan struct{} // closed when the connection ends
	dropped atomic.Int64
}

func newNotifyGate(done <-chan struct{}) *notifyGate {
	return &notifyGate{slots: make(chan struct{}, maxQueuedNotifications), done: done}
}

// admit says whether line goes on to the SDK, waiting for a slot when it is
// a session/cancel.
func (g *notifyGate) admit(line []byte) bool {
	if g == nil {
		return true
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return true // the SDK answers what it cannot read
	}
	isNotification := m.Method != "" && (len(m.ID) == 0 || string(m.ID) == "null")
	if !isNotification || m.Method == "$/cancel_request" {
		return true
	}
	if m.Method != string(sdk.AgentMethodSessionCancel) || !validCancel(m.Params) {
		if g.dropped.Add(1) == 1 {
			slog.Warn("ignoring ACP notifications this agent does not handle", "method", m.Method)
		}
		return false
	}
	select {
	case g.slots <- struct{}{}:
		return true
	case <-g.done:
		return false
	}
}

// handled frees the slot of one session/cancel.
func (g *notifyGate) handled() {
	if g == nil {
		return
	}
	select {
	case <-g.slots:
	default:
	}
}

// validCancel says whether the SDK will hand params to adapter.Cancel (it
// decodes and validates them exactly so).
func validCancel(params json.RawMessage) bool {
	var p sdk.CancelNotification
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return false
	}
	return p.Validate() == nil
}
