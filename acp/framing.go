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
func guardInput(in io.Reader, out io.Writer) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := readLine(r)
			if len(bytes.TrimSpace(line)) > 0 || tooLong {
				if msg, ok := check(line, tooLong); ok {
					if _, werr := pw.Write(append(line, '\n')); werr != nil {
						return
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
