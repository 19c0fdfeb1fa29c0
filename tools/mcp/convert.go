package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairn-dev/cairn/tools"
)

// maxToolName is the longest tool name model APIs accept (OpenAI: 64).
const maxToolName = 64

// maxDescription caps what a server may put in front of the model per tool.
const maxDescription = 4 << 10

// ToolName is the registry name of tool on server: mcp__<server>__<tool>.
// Characters outside [A-Za-z0-9_-] (which model APIs reject) become '_';
// a name longer than 64 bytes is cut and ends in a short hash of the full
// name, so it stays unique and stable.
func ToolName(server, tool string) string {
	full := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(full) <= maxToolName {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return full[:maxToolName-len(suffix)] + suffix
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// Classify returns the risk, side effects and idempotency of an MCP tool.
//
// The rule:
//   - untrusted server (the default): every tool is risk network, has side
//     effects and is not idempotent, whatever its annotations say — the
//     annotations come from the server we do not trust. The default policy
//     asks before each call.
//   - trusted server: annotations.readOnlyHint ⇒ read (no side effects;
//     idempotent); otherwise an explicit destructiveHint: true ⇒ destructive;
//     otherwise write. A trusted tool without annotations is write (the MCP
//     spec's default of destructiveHint=true is not applied: it would make
//     every unannotated tool of a server the user trusts denied by default).
//     Idempotent follows idempotentHint.
func Classify(trust string, ann *sdk.ToolAnnotations) (risk tools.Risk, sideEffects, idempotent bool) {
	if trust != TrustTrusted {
		return tools.RiskNetwork, true, false
	}
	if ann == nil {
		return tools.RiskWrite, true, false
	}
	if ann.ReadOnlyHint {
		return tools.RiskRead, false, true
	}
	if ann.DestructiveHint != nil && *ann.DestructiveHint {
		return tools.RiskDestructive, true, ann.IdempotentHint
	}
	return tools.RiskWrite, true, ann.IdempotentHint
}

// permissiveSchema is used when a server's schema does not compile.
var permissiveSchema = json.RawMessage(`{"type":"object","additionalProperties":true}`)

// inputSchema returns the server's input schema as JSON, or an error saying
// why it cannot be used as a Cairn tool schema.
func inputSchema(t *sdk.Tool) (json.RawMessage, error) {
	if t.InputSchema == nil {
		return nil, fmt.Errorf("no inputSchema")
	}
	raw, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("inputSchema does not encode: %v", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("inputSchema is not a JSON object")
	}
	if obj["type"] != "object" {
		return nil, fmt.Errorf(`inputSchema has type %v, not "object"`, obj["type"])
	}
	return raw, nil
}

// description is the model-facing description: the server's name first (so
// the model knows where the tool comes from), capped.
func description(server, trust string, t *sdk.Tool) string {
	d := strings.TrimSpace(t.Description)
	if d == "" {
		d = strings.TrimSpace(t.Title)
	}
	if d == "" && t.Annotations != nil {
		d = strings.TrimSpace(t.Annotations.Title)
	}
	if d == "" {
		d = t.Name
	}
	prefix := "[MCP server " + server + "] "
	if trust != TrustTrusted {
		prefix = "[MCP server " + server + ", untrusted] "
	}
	return capString(prefix+d, maxDescription)
}

func capString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// convertResult turns an MCP tool result into what goes back to the model:
// text as is, embedded text resources with their URI, binary content
// (images, audio, blobs) as a note (the model cannot see it through a text
// tool result), structured content as JSON when there is nothing else.
func convertResult(label string, res *sdk.CallToolResult) tools.Result {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	out := tools.Result{Content: text, IsError: res.IsError}
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	first = capString(first, 80)
	switch {
	case res.IsError && first != "":
		out.Summary = label + " failed: " + first
	case res.IsError:
		out.Summary = label + " failed"
	case first == "":
		out.Summary = label + ": empty result"
	default:
		out.Summary = label + ": " + first
	}
	return out
}

func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes: not shown]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes: not shown]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[embedded resource: empty]"
		}
		if r.Text != "" || len(r.Blob) == 0 {
			head := "[resource " + r.URI
			if r.MIMEType != "" {
				head += " (" + r.MIMEType + ")"
			}
			return head + "]\n" + r.Text
		}
		return fmt.Sprintf("[resource %s: %s, %d bytes of binary data: not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	case *sdk.ResourceLink:
		s := "[resource link " + c.URI
		if c.Name != "" {
			s += " " + c.Name
		}
		if c.MIMEType != "" {
			s += " (" + c.MIMEType + ")"
		}
		s += "]"
		if c.Description != "" {
			s += " " + c.Description
		}
		return s
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return fmt.Sprintf("[content of type %T: not shown]", c)
		}
		return string(b)
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "of unknown type"
	}
	return s
}
