package redact

import "strings"

// KindPEMBody is the kind of a run of PEM body lines found without their
// BEGIN and END lines (a window of a key file: `sed -n 2,9p key.pem`,
// `tail -n +2`, a search snippet). A whole block is the private-key rule's.
const KindPEMBody = "pem-body"

// Lengths of a full PEM body line: 64 base64 characters (OpenSSL, Go's
// encoding/pem, PKCS#8, PGP armor, PuTTY), 70 (OpenSSH).
const (
	pemLine     = 64
	pemLineSSH  = 70
	pemMinLines = 2 // a run shorter than this is left alone
)

// pemBodies appends a span for every run of at least pemMinLines PEM body
// lines: full lines of base64 (64 or 70 characters, upper and lower case
// and digits mixed, so hex digests never qualify), optionally ended by the
// block's shorter last line. A line may carry a line-number prefix
// (`cat -n`, `grep -n`, read_file) and quotes or a string's `\n` around its
// base64, as in a key pasted into code. Certificates' bodies look the same
// and are masked too; nothing tells a key's middle from a certificate's.
func pemBodies(s string, spans []span) []span {
	if len(s) < 32 { // a last line and an END line at the shortest
		return spans
	}
	start, end, lines := 0, 0, 0
	anchored := false // the run began at a BEGIN … PRIVATE KEY line
	weak := false     // the run is one line shaped like a block's last: only an END line confirms it
	flush := func() {
		if !weak && (lines >= pemMinLines || anchored && lines > 0) {
			spans = append(spans, span{start, end, KindPEMBody, prioRule})
		}
		lines, anchored, weak = 0, false, false
	}
	for i := 0; i <= len(s); {
		j := strings.IndexByte(s[i:], '\n')
		lineEnd := len(s)
		if j >= 0 {
			lineEnd = i + j
		}
		line := s[i:lineEnd]
		switch {
		case lines == 0 && len(line) < 4 && !anchored:
			// fast path: no run, and too short to start one
		case strings.Contains(line, "-----END ") && strings.Contains(line, "PRIVATE KEY"):
			// A key's last lines and its END line: however few.
			if lines > 0 {
				end, anchored, weak = i+len(line), true, false
			}
			flush()
		case strings.Contains(line, "-----BEGIN ") && strings.Contains(line, "PRIVATE KEY"):
			// A key's first lines without its END line: however few.
			flush()
			start, end, anchored = i+strings.Index(line, "-----BEGIN "), i+len(line), true
		default:
			cs, ce, full, last := pemBodyLine(line)
			switch {
			case full:
				if weak {
					flush()
				}
				if lines == 0 && !anchored {
					start = i + cs
				}
				end = i + ce
				lines++
			case last && (lines > 0 && !weak || anchored):
				end = i + ce
				lines++
				flush()
			case last:
				// Perhaps a key's last line: kept only if its END line follows.
				flush()
				start, end, lines, weak = i+cs, i+ce, 1, true
			default:
				flush()
			}
		}
		if j < 0 {
			break
		}
		i = lineEnd + 1
	}
	flush()
	return spans
}

// pemBodyLine finds the base64 of one line (its offsets in line) and says
// whether it is a full PEM body line or could be a block's last line.
func pemBodyLine(line string) (cs, ce int, full, last bool) {
	p := 0
	skip := func(set string) {
		for p < len(line) && strings.IndexByte(set, line[p]) >= 0 {
			p++
		}
	}
	skip(" \t")
	if d := p; d < len(line) && line[d] >= '0' && line[d] <= '9' { // a line number
		for d < len(line) && line[d] >= '0' && line[d] <= '9' {
			d++
		}
		if d < len(line) && (line[d] == '\t' || line[d] == ':' || line[d] == '-') {
			p = d + 1
		}
	}
	skip(" \t\"'`")
	cs = p
	var upper, lower, digit bool
	for p < len(line) {
		c := line[p]
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		case c == '+' || c == '/':
		default:
			goto done
		}
		p++
	}
done:
	n := p - cs
	pad := 0
	for p < len(line) && line[p] == '=' && pad < 2 {
		p++
		pad++
	}
	ce = p
	skip(" \t\r\"'`,;+)\\n")
	if p != len(line) || !upper || !lower {
		return cs, ce, false, false
	}
	full = pad == 0 && digit && (n == pemLine || n == pemLineSSH)
	last = !full && n >= 4 && n < pemLineSSH && (n+pad)%4 == 0
	return cs, ce, full, last
}
