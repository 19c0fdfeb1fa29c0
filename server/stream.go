package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"
)

// stream is an LSP base-protocol (Content-Length) framer that survives bad
// input: a frame whose body is not a JSON-RPC message is answered with a
// parse error (id null) and skipped, and a malformed header block is skipped
// up to the next blank line, instead of ending the connection as the
// library's framer does. Write is safe for concurrent use.
type stream struct {
	r   *bufio.Reader
	w   io.Writer
	c   io.Closer
	wmu sync.Mutex
}

// Limits of the framer. A header line longer than maxHeaderLine, or a body
// longer than maxFrame, is discarded as it streams in (never buffered) and
// answered with an error naming the limit; the connection goes on.
const (
	maxFrame      = 64 << 20
	maxHeaderLine = 8 << 10
)

func newStream(r io.Reader, w io.Writer, c io.Closer) *stream {
	return &stream{r: bufio.NewReaderSize(r, 64<<10), w: w, c: c}
}

func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		body, n, err := s.readFrame()
		if err != nil {
			return nil, n, err
		}
		if body == nil {
			continue // a malformed header was skipped and answered
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			slog.Warn("dropping a malformed JSON-RPC message", "err", err, "bytes", len(body))
			code := jsonrpc2.ParseError
			if jsonValid(body) {
				code = jsonrpc2.InvalidRequest
			}
			s.writeError(code, fmt.Sprintf("malformed message: %v", err))
			continue
		}
		return msg, n, nil
	}
}

func jsonValid(b []byte) bool {
	var d any
	return jsonUnmarshal(b, &d) == nil
}

// readFrame returns the next body, or nil with no error when a malformed
// frame was skipped.
func (s *stream) readFrame() ([]byte, int64, error) {
	length := int64(-1)
	var consumed int64
	bad := ""
	sawHeader := false
	for {
		line, skipped, err := s.readHeaderLine()
		consumed += int64(len(line)) + skipped
		if skipped > 0 {
			sawHeader = true
			bad = fmt.Sprintf("a header line of %d bytes exceeds the limit of %d bytes", int64(len(line))+skipped, maxHeaderLine)
			if err == nil {
				continue
			}
		}
		if err != nil {
			if err == io.EOF && line == "" && !sawHeader {
				return nil, consumed, io.EOF
			}
			if err == io.EOF {
				return nil, consumed, io.ErrUnexpectedEOF
			}
			return nil, consumed, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !sawHeader {
				continue // stray blank line between frames
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			bad = fmt.Sprintf("header line without a colon: %q", truncate(line, 60))
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n < 0 {
				bad = fmt.Sprintf("invalid Content-Length %q", truncate(strings.TrimSpace(value), 40))
				continue
			}
			length = n
		}
	}
	if bad == "" && length > maxFrame {
		// Skip the body without keeping it, so the next frame reads.
		n, err := io.CopyN(io.Discard, s.r, length)
		consumed += n
		if err != nil {
			return nil, consumed, io.ErrUnexpectedEOF
		}
		slog.Warn("discarding an oversized message", "bytes", length, "limit", maxFrame)
		s.writeError(jsonrpc2.InvalidRequest, fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes; it was discarded", length, maxFrame))
		return nil, consumed, nil
	}
	if bad == "" && length < 0 {
		bad = "missing Content-Length header"
	}
	if bad != "" {
		if length > 0 {
			// The body's length is known: skip it too, unread.
			n, err := io.CopyN(io.Discard, s.r, length)
			consumed += n
			if err != nil {
				return nil, consumed, io.ErrUnexpectedEOF
			}
		}
		slog.Warn("skipping a malformed frame header", "reason", bad)
		s.writeError(jsonrpc2.ParseError, "malformed frame: "+bad)
		return nil, consumed, nil
	}
	body := make([]byte, int(length))
	n, err := io.ReadFull(s.r, body)
	consumed += int64(n)
	if err != nil {
		return nil, consumed, io.ErrUnexpectedEOF
	}
	return body, consumed, nil
}

// readHeaderLine reads one header line of at most maxHeaderLine bytes. Of a
// longer line it keeps the first maxHeaderLine bytes, discards the rest up
// to the newline as it arrives, and reports how many bytes it skipped.
func (s *stream) readHeaderLine() (string, int64, error) {
	var line []byte
	var skipped int64
	for {
		chunk, err := s.r.ReadSlice('\n')
		switch {
		case len(line) < maxHeaderLine:
			keep := min(len(chunk), maxHeaderLine-len(line))
			line = append(line, chunk[:keep]...)
			skipped += int64(len(chunk) - keep)
		default:
			skipped += int64(len(chunk))
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return string(line), skipped, err
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	body, err := jsonrpc2.EncodeMessage(msg)
	if err != nil {
		return 0, fmt.Errorf("encoding a message: %w", err)
	}
	return s.writeBody(body)
}

func (s *stream) writeBody(body []byte) (int64, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "Content-Length: %d\r\n\r\n", len(body))
	buf.Write(body)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	n, err := s.w.Write(buf.Bytes())
	return int64(n), err
}

// writeError answers an unreadable message with an error response whose id
// is null, as JSON-RPC 2.0 prescribes.
func (s *stream) writeError(code jsonrpc2.Code, msg string) {
	body, err := jsonMarshal(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": int64(code), "message": msg},
	})
	if err == nil {
		_, _ = s.writeBody(body)
	}
}

func (s *stream) Close() error {
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}

// codec is the connection codec: go.lsp.dev/protocol's LSP-aware JSON for
// the library's types (the same as its internal codec), raw bytes verbatim.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case *jsonrpc2.RawMessage:
		if m == nil || *m == nil {
			return []byte("null"), nil
		}
		return *m, nil
	}
	return lsp.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append((*p)[:0], data...)
		return nil
	}
	return lsp.Unmarshal(data, v)
}
