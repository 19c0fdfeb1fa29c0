package redact

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/benchlat"
)

// hostileInputs are 1 MB texts built to hurt a redactor: keyword storms, a
// PEM header with no end, one enormous line, assignment-heavy config.
func hostileInputs(size int) map[string]string {
	rep := func(s string) string { return strings.Repeat(s, size/len(s)+1)[:size] }
	aws := "AKIA" + randFrom(upperDigits, 16)
	return map[string]string{
		"keyword-storm":    rep("key=token secret auth api ey "),
		"assignments":      rep("api_key=" + randFrom(alnum, 20) + "\n"),
		"pem-no-end":       "-----BEGIN RSA PRIVATE KEY-----\n" + rep("ABCDabcd0123+/==\n"),
		"pem-headers-only": rep("-----BEGIN PRIVATE KEY-----\n"),
		"one-line":         rep(randFrom(alnum+" =:/@", 997)),
		"url-storm":        rep("http://a:b@c http:// x://:@ "),
		"mixed":            rep("// a comment with a key\nfunc f() { return \"" + aws + "\" }\n"),
		"ey":               rep("ey"),
		// Keywords and operators in random order, no two stretches alike.
		"keyword-storm-random": randomStorm(size),
		// Config-like text with a distinct secret on every line.
		"assignments-distinct": distinctAssignments(size),
	}
}

func distinctAssignments(size int) string {
	var b strings.Builder
	names := []string{"api_key", "password", "client_secret", "auth_token", "db.password"}
	for i := 0; b.Len() < size; i++ {
		b.WriteString(names[i%len(names)] + "=" + randFrom(alnum, 24) + "\n")
	}
	return b.String()[:size]
}

// BenchmarkRedactLearned: a run that learned a thousand secret values pays
// one pass for all of them.
func BenchmarkRedactLearned(b *testing.B) {
	r := newTest(b)
	for i := 0; i < 1000; i++ {
		r.AddValues("learned", randFrom(alnum, 20))
	}
	r.String("build the automaton before timing")
	benchRedact(b, r, strings.Repeat("an ordinary line of tool output, nothing to hide\n", 1<<20/50))
}

func BenchmarkRedactHostile(b *testing.B) {
	r := newTest(b)
	for name, in := range hostileInputs(1 << 20) {
		b.Run(name, func(b *testing.B) {
			benchRedact(b, r, in)
		})
	}
}

// benchRedact measures Redact on s, reporting MB per CPU-second (robust to
// a loaded machine) besides testing's MB/s of wall time.
func benchRedact(b *testing.B, r *Redactor, s string) {
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	cpu0 := benchlat.ProcessCPU()
	n := 0
	for b.Loop() {
		r.Redact(s)
		n++
	}
	if cpu := benchlat.ProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(s))*float64(n)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
}

func randomStorm(size int) string {
	words := []string{"key", "token", "secret", "auth", "api", "password", "=", ":", "=>", ",", " ", "ey", "credential"}
	var b strings.Builder
	for b.Len() < size {
		switch rng.IntN(3) {
		case 0:
			b.WriteString(words[rng.IntN(len(words))])
		case 1:
			b.WriteString(randFrom(alnum+"_.-", 1+rng.IntN(14)))
		default:
			b.WriteString(" ")
		}
	}
	return b.String()[:size]
}
