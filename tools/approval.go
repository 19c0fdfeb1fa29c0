package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/tools/shell"
)

// CommandPart is one simple command (or redirection) of a command line, as
// the policy decides it and the approval prompt shows it.
type CommandPart struct {
	Text   string
	Risk   Risk
	Reason string
	// Redirection marks where the previous command's output goes; a
	// command rule never covers it.
	Redirection bool
	// Via names the wrapper that runs the command (env, xargs, find -exec).
	Via string
	// Whole stands for source not known to be one command: the line as a
	// whole when it is riskier than any of its commands, or text that does
	// not parse. No command rule covers it.
	Whole bool
}

// CommandParts returns the commands of a classified line.
func CommandParts(c shell.Classification) []CommandPart {
	out := make([]CommandPart, 0, len(c.Parts))
	for _, p := range c.Parts {
		out = append(out, CommandPart{Text: p.Command, Risk: Risk(p.Risk), Reason: p.Reason, Redirection: p.Redirection, Via: p.Via, Whole: p.Unparsed})
	}
	return out
}

// Limits of what an approval prompt shows. Whatever is cut is said to be
// cut, with how much.
const (
	promptCommandRunes = 400 // one command of a line
	promptLineRunes    = 1200
	promptCommands     = 40
	promptDetailLines  = 30
	promptReasonRunes  = 300
)

// ApprovalText is the message of an approval prompt: a first line naming
// the tool and the call's risk, then what exactly would run. Every command
// of a command line is listed on its own line with its own rating and
// why; text is shown on single lines with line breaks, control and
// invisible characters made visible, so that padding cannot push a
// command out of view; text the model wrote is quoted and labelled as the
// model's.
func ApprovalText(req ApprovalRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Cairn wants to run %s (%s risk)", OneLine(req.Tool, 80), req.Risk)
	line := func(s string) {
		b.WriteByte('\n')
		b.WriteString(s)
	}
	outside := req.Tool == "run_command" && strings.HasPrefix(req.Detail, OutsideSandbox)
	switch {
	case req.Command != "" || len(req.Commands) > 0:
		if outside {
			why := ""
			if i := strings.LastIndex(req.Detail, "\nreason: "); i >= 0 && req.ModelReason == "" {
				why = " (" + OneLine(req.Detail[i+len("\nreason: "):], 200) + ")"
			}
			line("OUTSIDE THE SANDBOX: the command runs with all of your permissions" + why)
		}
		if req.Tool == "run_command" && strings.HasPrefix(req.Detail, PartialSandbox) {
			line("SANDBOX WITHOUT ISOLATION: no namespaces here, so the command can reach host sockets (daemons that run anything) and other processes")
		}
		line("command: " + OneLine(req.Command, promptLineRunes))
		cmds := req.Commands
		if len(cmds) == 0 {
			cmds = []CommandPart{{Text: req.Command, Risk: req.Risk}}
		}
		n := 0
		for _, c := range cmds {
			if c.Redirection {
				continue
			}
			n++
		}
		if n != 1 {
			line(fmt.Sprintf("it runs %d commands:", n))
		}
		for i, c := range cmds {
			if i == promptCommands {
				rest, worst := len(cmds)-i, RiskRead
				for _, c := range cmds[i:] {
					if c.Risk.Rank() > worst.Rank() {
						worst = c.Risk
					}
				}
				line(fmt.Sprintf("… and %d more (the riskiest of them: %s)", rest, worst))
				break
			}
			line(describePart(c))
		}
		if len(req.Packages) > 0 {
			ps := make([]string, len(req.Packages))
			for i, p := range req.Packages {
				ps[i] = OneLine(p, 120)
			}
			line("packages: " + strings.Join(ps, ", "))
		}
	default:
		writeDetail(&b, req.Detail)
		if in := strings.TrimSpace(req.Input); in != "" && in != "{}" && req.Tool != "edit_file" {
			var c bytes.Buffer
			if json.Compact(&c, []byte(in)) == nil {
				in = c.String()
			}
			line("model's input (written by the model): " + OneLine(in, promptLineRunes))
		}
	}
	if req.ModelReason != "" {
		line("model's reason (written by the model, not checked): " + QuoteModel(req.ModelReason, promptReasonRunes))
	}
	if req.Rule != "" {
		line("asked because of: " + OneLine(req.Rule, 300))
	}
	return b.String()
}

func describePart(c CommandPart) string {
	what := OneLine(c.Text, promptCommandRunes)
	switch {
	case c.Redirection:
		what = "  redirection " + what
	case c.Via != "":
		what = "  run by " + OneLine(c.Via, 60) + ": " + what
	case c.Whole && c.Text == "":
		what = "the whole line"
	}
	s := fmt.Sprintf("• [%s] %s", c.Risk, what)
	if c.Reason != "" {
		s += " — " + OneLine(c.Reason, 200)
	}
	return s
}

// writeDetail shows a tool's free-form detail: each line made visible,
// runs of blank lines collapsed, at most promptDetailLines lines.
func writeDetail(b *strings.Builder, detail string) {
	detail = strings.TrimSpace(detail)
	if detail == "" {
		return
	}
	lines := strings.Split(detail, "\n")
	shown, blank := 0, 0
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			blank++
			continue
		}
		if blank > 0 {
			if blank > 1 {
				fmt.Fprintf(b, "\n(%d blank lines)", blank)
			} else {
				b.WriteString("\n(blank line)")
			}
			blank = 0
		}
		if shown == promptDetailLines {
			fmt.Fprintf(b, "\n… and %d more lines", len(lines)-i)
			return
		}
		b.WriteByte('\n')
		b.WriteString(OneLine(l, promptLineRunes))
		shown++
	}
}

// OneLine renders s on one line with nothing hidden: a line break becomes
// ⏎ (a run of them ⏎×N), a tab \t, a carriage return \r, other control,
// invisible and direction-changing characters an escape (\x1b, \u202e),
// a run of more than three spaces ␣×N. Of a text longer than max runes the
// head and the tail are shown, with how much is left out between them, so
// that padding cannot push the end of a command out of view.
func OneLine(s string, max int) string {
	if n := utf8.RuneCountInString(s); max > 0 && n > max {
		rs := []rune(s)
		head, tail := max*2/3, max-max*2/3
		return visible(string(rs[:head])) + fmt.Sprintf(" … (%d characters not shown) … ", n-head-tail) + visible(string(rs[n-tail:]))
	}
	return visible(s)
}

func visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n':
			n := 0
			for i < len(s) && (s[i] == '\n' || s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
				if s[i] == '\n' {
					n++
				}
				i++
			}
			if n == 1 {
				b.WriteString(" ⏎ ")
			} else {
				fmt.Fprintf(&b, " ⏎×%d ", n)
			}
			continue
		case r == ' ':
			n := 0
			for i < len(s) && s[i] == ' ' {
				n++
				i++
			}
			if n > 3 {
				fmt.Fprintf(&b, " ␣×%d ", n)
			} else {
				b.WriteString(strings.Repeat(" ", n))
			}
			continue
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case hidden(r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// hidden reports characters a prompt must not show as themselves:
// controls, format characters (zero-width, direction overrides), other
// spaces and separators, private use and unassigned code points.
func hidden(r rune) bool {
	if r == ' ' {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) || unicode.Is(unicode.Zl, r) ||
		unicode.Is(unicode.Zp, r) || unicode.Is(unicode.Co, r) || !unicode.IsPrint(r) && !unicode.IsGraphic(r)
}

// QuoteModel quotes text the model wrote for a prompt: on one line, in
// double quotes, with line breaks, quotes and hidden characters escaped,
// so that it cannot pass for Cairn's own lines.
func QuoteModel(s string, max int) string {
	more := 0
	if n := utf8.RuneCountInString(s); max > 0 && n > max {
		more = n - max
		s = string([]rune(s)[:max])
	}
	q := strconv.QuoteToGraphic(s)
	var b strings.Builder
	for _, r := range q {
		if r != ' ' && hidden(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	if more > 0 {
		fmt.Fprintf(&b, " … (%d more characters)", more)
	}
	return b.String()
}
