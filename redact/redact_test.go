package redact

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Fake secrets are generated from a fixed seed so every run sees the same
// ones; none is a real credential.
var rng = rand.New(rand.NewPCG(7, 11))

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	urlsafe     = alnum + "-_"
	lowerHex    = "0123456789abcdef"
	digits      = "0123456789"
)

func randFrom(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[rng.IntN(len(set))]
	}
	return string(b)
}

func fakeJWT() string {
	enc := base64.RawURLEncoding
	h := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	p := enc.EncodeToString([]byte(fmt.Sprintf(`{"sub":"%s","name":"Test User","iat":%d}`, randFrom(digits, 10), 1700000000+rng.IntN(1e6))))
	return h + "." + p + "." + randFrom(alnum, 43)
}

func pemBlock(typ string, body []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: body}))
}

func fakeEd25519PEM(t testing.TB) string {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("PRIVATE KEY", der)
}

type tcase struct {
	name   string
	text   string // containing secret
	secret string // must not survive
	kind   string // expected marker kind
}

func positiveCases(t testing.TB) []tcase {
	aws := "AKIA" + randFrom(upperDigits, 16)
	ghp := "ghp_" + randFrom(alnum, 36)
	ghpat := "github_pat_" + randFrom(alnum, 22) + "_" + randFrom(alnum, 59)
	openaiProj := "sk-proj-" + randFrom(urlsafe, 74) + "T3BlbkFJ" + randFrom(urlsafe, 74)
	openaiLegacy := "sk-" + randFrom(alnum, 20) + "T3BlbkFJ" + randFrom(alnum, 20)
	openaiShort := "sk-" + randFrom(alnum, 48)
	anthropic := "sk-ant-api03-" + randFrom(urlsafe, 93) + "AA"
	slackBot := "xoxb-" + randFrom(digits, 12) + "-" + randFrom(digits, 13) + "-" + randFrom(alnum, 24)
	slackUser := "xoxp-" + randFrom(digits, 12) + "-" + randFrom(digits, 12) + "-" + randFrom(digits, 13) + "-" + randFrom(lowerHex, 32)
	slackHook := "https://hooks.slack.com/services/T" + randFrom(upperDigits, 8) + "/B" + randFrom(upperDigits, 8) + "/" + randFrom(alnum, 24)
	stripe := "sk_live_" + randFrom(alnum, 24)
	stripeTest := "rk_test_" + randFrom(alnum, 24)
	google := "AIza" + randFrom(urlsafe, 35)
	jwt := fakeJWT()
	ed := fakeEd25519PEM(t)
	rsaBody := make([]byte, 1190)
	for i := range rsaBody {
		rsaBody[i] = byte(rng.IntN(256))
	}
	rsa := pemBlock("RSA PRIVATE KEY", rsaBody)
	sshBody := randFrom(alnum+"+/", 380)
	ssh := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + sshBody[:70] + "\n" + sshBody[70:140] + "\n" + sshBody[140:] + "\n-----END OPENSSH PRIVATE KEY-----\n"
	truncated := rsa[:len(rsa)/2]
	pw := "Xk9mQ2vL7pR4wZ8tB3" // fixed: its entropy must clear generic-api-key's 3.5 bits
	apiKey := randFrom(alnum, 32)
	secret := "9f3b2c7d1e8a4f6b0c5d2e9a7b3c1d8e4f6a0b2c" // fixed: random hex may hold a gitleaks stopword
	dbpw := randFrom(alnum, 14)
	bearer := randFrom(urlsafe, 40)

	return []tcase{
		{"aws", "aws_access_key_id = " + aws + "\n", aws, "aws-access-token"},
		{"aws-in-json", `{"AccessKeyId":"` + aws + `"}`, aws, "aws-access-token"},
		{"github-pat", "export GITHUB_TOKEN=" + ghp, ghp, "github-pat"},
		{"github-fine-grained", "token: " + ghpat + "\n", ghpat, "github-fine-grained-pat"},
		{"openai-project", `client = OpenAI(api_key="` + openaiProj + `")`, openaiProj, "openai-api-key"},
		{"openai-legacy", "OPENAI_API_KEY=" + openaiLegacy + "\n", openaiLegacy, "openai-api-key"},
		{"openai-compatible", "Using key " + openaiShort + " for requests", openaiShort, "llm-api-key"},
		{"anthropic", "x-api-key: " + anthropic + "\n", anthropic, "anthropic-api-key"},
		{"slack-bot", "SLACK_BOT=" + slackBot + "\n", slackBot, "slack-bot-token"},
		{"slack-user", "tok " + slackUser + " end", slackUser, "slack-user-token"},
		{"slack-webhook", "curl -X POST " + slackHook, slackHook, "slack-webhook-url"},
		{"stripe-live", "stripe.Key = \"" + stripe + "\"", stripe, "stripe-access-token"},
		{"stripe-restricted", "key=" + stripeTest + "\n", stripeTest, "stripe-access-token"},
		{"google-api-key", "const k = '" + google + "';", google, "gcp-api-key"},
		{"jwt", "Cookie: session=" + jwt + "; Path=/", jwt, "jwt"},
		{"pem-pkcs8", "key:\n" + ed + "done\n", ed[40:70], "private-key"},
		{"pem-rsa-multiline", "config:\n" + rsa, rsa[100:160], "private-key"},
		{"pem-openssh", ssh, sshBody[100:150], "private-key"},
		{"pem-truncated", "$ cat id_rsa | head\n" + truncated, truncated[60:100], "private-key"},
		{"password-assign", "password=" + pw + "\n", pw, "generic-api-key"},
		{"api-key-yaml", "api_key: " + apiKey + "\n", apiKey, "generic-api-key"},
		{"client-secret-json", `{"client_secret": "` + secret + `"}`, secret, "generic-api-key"},
		{"postgres-url", "DATABASE_URL=postgres://app:" + dbpw + "@db.internal:5432/app?sslmode=require", dbpw, "url-password"},
		{"mysql-url", "dsn := \"mysql://root:" + dbpw + "@tcp(localhost:3306)/x\"", dbpw, "url-password"},
		{"mongodb-srv", "mongodb+srv://admin:" + dbpw + "@cluster0.ab1cd.mongodb.net/test", dbpw, "url-password"},
		{"redis-no-user", "REDIS=redis://:" + dbpw + "@cache:6379/0", dbpw, "url-password"},
		{"amqp", "amqp://guest:" + dbpw + "@rabbit:5672/", dbpw, "url-password"},
		{"https-basic", "git clone https://deploy:" + dbpw + "@git.example.com/r.git", dbpw, "url-password"},
		{"authorization-bearer", "Authorization: Bearer " + bearer + "\r\n", bearer, "authorization-header"},
	}
}

func newTest(t testing.TB) *Redactor {
	t.Helper()
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRulesPerKind(t *testing.T) {
	r := newTest(t)
	for _, tc := range positiveCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			out, fs := r.Redact(tc.text)
			if strings.Contains(out, tc.secret) {
				t.Fatalf("secret survived:\n%s", out)
			}
			if !strings.Contains(out, Marker(tc.kind)) {
				t.Errorf("want %s in\n%s\nfindings %v", Marker(tc.kind), out, fs)
			}
			if len(fs) == 0 {
				t.Fatal("no findings")
			}
			for _, f := range fs {
				if f.Start < 0 || f.End > len(tc.text) || f.Start >= f.End {
					t.Errorf("bad finding %+v", f)
				}
			}
			again, fs2 := r.Redact(out)
			if again != out || len(fs2) != 0 {
				t.Errorf("not idempotent:\n%s\n%s\n%v", out, again, fs2)
			}
		})
	}
}

func TestNegatives(t *testing.T) {
	r := newTest(t)
	for _, s := range []string{
		`func (k *Key) Token() string { return k.token }`,
		`password := os.Getenv("DB_PASSWORD")`,
		`if err := auth.Verify(tokenString, secretKey); err != nil {`,
		`api_key: ${OPENAI_API_KEY}`,
		`password: "{{ .Values.password }}"`,
		`postgres://localhost:5432/app?sslmode=disable`,
		`postgres://app:${PGPASSWORD}@db:5432/app`,
		`https://user@example.com/path@v1`,
		`git@github.com:cairn-dev/cairn.git`,
		`const keySize = 32 // bytes`,
		`Authorization: Bearer <token>`,
		`The task-runner uses a sk-learn model.`,
		`-----BEGIN PUBLIC KEY-----`,
		`accessToken = getAccessTokenFromCache(ctx)`,
		"ey ey they obey keyed monkey",
		"[REDACTED:aws-access-token] and [REDACTED:private-key]",
	} {
		if out, fs := r.Redact(s); out != s || len(fs) != 0 {
			t.Errorf("false positive:\n in: %s\nout: %s\n%v", s, out, fs)
		}
	}
}

func TestMergeOverlapsAndIdempotence(t *testing.T) {
	tok := "ghp_" + randFrom(alnum, 36)
	r, err := New(Options{Values: map[string][]string{"env:GITHUB_TOKEN": {tok}}})
	if err != nil {
		t.Fatal(err)
	}
	// The rule, generic-api-key and the exact value all cover the token:
	// one marker, of the exact value's kind.
	in := "GITHUB_TOKEN=" + tok + "\n"
	out, fs := r.Redact(in)
	if out != "GITHUB_TOKEN=[REDACTED:env:GITHUB_TOKEN]\n" || len(fs) != 1 {
		t.Fatalf("got %q %v", out, fs)
	}
	// A value that straddles an existing marker absorbs it.
	r.AddValues("test", "abc12345[REDACTED:x]tail9999")
	if out, _ := r.Redact("abc12345[REDACTED:x]tail9999"); out != "abc12345[REDACTED:x]tail9999" {
		t.Errorf("values containing markers must be ignored, got %q", out)
	}
	// Redacting the concatenation of every positive case twice.
	var all strings.Builder
	for _, tc := range positiveCases(t) {
		all.WriteString(tc.text)
		all.WriteString("\n")
	}
	once, _ := r.Redact(all.String())
	twice, fs2 := r.Redact(once)
	if once != twice || len(fs2) != 0 {
		t.Fatalf("not idempotent: %v", fs2)
	}
}

func TestFakeMarkerDoesNotShield(t *testing.T) {
	r := newTest(t)
	aws := "AKIA" + randFrom(upperDigits, 16)
	out, _ := r.Redact("[REDACTED:" + aws + "]")
	if strings.Contains(out, aws) {
		t.Fatalf("secret shielded by a fake marker: %q", out)
	}
	if again, _ := r.Redact(out); again != out {
		t.Errorf("not idempotent: %q -> %q", out, again)
	}
}

func TestCounts(t *testing.T) {
	r := newTest(t)
	aws := "AKIA" + randFrom(upperDigits, 16)
	r.Redact(aws + " " + "AKIA" + randFrom(upperDigits, 16))
	r.Redact(aws)
	if got := r.Count("aws-access-token"); got != 3 {
		t.Errorf("Count = %d, want 3", got)
	}
	if c := r.Counts(); c["aws-access-token"] != 3 || len(c) != 1 {
		t.Errorf("Counts = %v", c)
	}
}

func TestIsSecretEnvName(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "GITHUB_TOKEN": true, "AWS_SECRET_ACCESS_KEY": true,
		"PGPASSWORD": true, "MYSQL_PWD": false, "DB_PASSWD": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"npm_config__authToken": true, "SSH_PRIVATE_KEY": true, "HOME": false, "PATH": false,
		"GOFLAGS": false, "EDITOR": false, "KEYBOARD": true, // KEY inside a word still counts: err on hiding
		"GIT_AUTHOR_NAME": false, "XAUTHORITY": false, "PROXY_AUTHORIZATION": true, "SSH_AUTH_SOCK": true,
		"GIT_AUTHOR_TOKEN": true, "AUTHOR_AUTH": true,
	} {
		if got := IsSecretEnvName(name); got != want {
			t.Errorf("IsSecretEnvName(%q) = %v", name, got)
		}
	}
}

func TestFromEnv(t *testing.T) {
	key := randFrom(alnum, 40)
	short := "abc123"
	dbpw := randFrom(alnum, 12)
	home := "/home/someone/projects"
	r := newTest(t)
	n := r.FromEnv([]string{
		"ACME_API_KEY=" + key,
		"SHORT_TOKEN=" + short,
		"HOME=" + home,
		"DATABASE_URL=postgres://u:" + dbpw + "@h/db",
		"EMPTY_SECRET=",
		"malformed",
	})
	if n != 2 {
		t.Errorf("added %d values, want 2", n)
	}
	in := "key is " + key + ", pw " + dbpw + ", home " + home + ", short " + short
	out, _ := r.Redact(in)
	want := "key is [REDACTED:env:ACME_API_KEY], pw [REDACTED:env:DATABASE_URL], home " + home + ", short " + short
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestLoadDotEnv(t *testing.T) {
	dir := t.TempDir()
	key := randFrom(alnum, 32)
	tok := randFrom(alnum, 24) + "9"
	quoted := randFrom(alnum, 20)
	single := randFrom(alnum, 20)
	dbpw := randFrom(alnum, 12)
	pemKey := fakeEd25519PEM(t)
	escaped := strings.ReplaceAll(strings.TrimSpace(pemKey), "\n", `\n`)
	files := map[string]string{
		".env": "# comment\nexport STRIPE_SECRET=" + key + "\n" +
			"NODE_ENV=production\n" +
			"SESSION_SIGNING=" + tok + " # signs cookies\n" +
			`QUOTED_TOKEN="` + quoted + `"` + "\n" +
			"SINGLE_PASSWORD='" + single + "'\n" +
			"DATABASE_URL=postgres://app:" + dbpw + "@db/app\n" +
			"PRIVATE_KEY=\"" + pemKey + "\"\n",
		".env.local": "PEM_ESCAPED_KEY=\"" + escaped + "\"\n",
		"env.txt":    "NOT_LOADED_TOKEN=" + randFrom(alnum, 30) + "\n",
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := New(Options{NoRules: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.LoadDotEnv(dir); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{key, tok, quoted, single, dbpw, escaped, strings.TrimSpace(pemKey)} {
		if out, _ := r.Redact("x " + s + " y"); strings.Contains(out, s) {
			t.Errorf("value not loaded: %q", s)
		}
	}
	if out, _ := r.Redact("mode production"); out != "mode production" {
		t.Errorf("ordinary value masked: %q", out)
	}
	if out, _ := r.Redact(files["env.txt"]); out != files["env.txt"] {
		t.Errorf("env.txt must not be loaded: %q", out)
	}
	if n, err := r.LoadDotEnv(filepath.Join(dir, "missing")); n != 0 || err != nil {
		t.Errorf("missing root: %d %v", n, err)
	}
}

func TestInvalidUTF8(t *testing.T) {
	r := newTest(t)
	aws := "AKIA" + randFrom(upperDigits, 16)
	in := "\xff\xfe bad \xc3 " + aws + " \xe2\x82 tail \x80"
	out, fs := r.Redact(in)
	if strings.Contains(out, aws) || len(fs) != 1 {
		t.Fatalf("got %q %v", out, fs)
	}
	if want := "\xff\xfe bad \xc3 [REDACTED:aws-access-token] \xe2\x82 tail \x80"; out != want {
		t.Errorf("bytes around the secret changed: %q", out)
	}
	// Random bytes must not crash and must be stable under re-redaction.
	b := make([]byte, 64<<10)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	o1, _ := r.Redact(string(b))
	if o2, _ := r.Redact(o1); o1 != o2 {
		t.Error("not idempotent on random bytes")
	}
}

// TestHugeInputs feeds inputs built to hurt (keyword storms, a PEM header
// with no end, one enormous line, realistic mixed text) and checks what is
// masked. How fast is BenchmarkRedactHostile's business: no test here
// measures time, so the suite passes on a loaded machine.
func TestHugeInputs(t *testing.T) {
	r := newTest(t)
	size := 128 << 10
	if raceEnabled {
		size = 32 << 10 // the race detector makes regexp matching many times slower
	}
	for name, in := range hostileInputs(size) {
		out, _ := r.Redact(in)
		if strings.Contains(name, "mixed") && strings.Contains(out, "AKIA") {
			t.Errorf("%s: secret survived", name)
		}
		if name == "pem-no-end" && strings.Contains(out, "ABCDabcd0123") {
			t.Errorf("truncated PEM body survived")
		}
		if name == "assignments-distinct" && strings.Count(out, "[REDACTED:") < size/64 {
			t.Errorf("assignments: only %d markers", strings.Count(out, "[REDACTED:"))
		}
		if again, _ := r.Redact(out); again != out {
			t.Errorf("%s: not idempotent", name)
		}
	}
}

// TestWindowsMatchWholeText checks that scanning only around keyword hits
// finds what scanning the whole text finds.
func TestWindowsMatchWholeText(t *testing.T) {
	fast := newTest(t)
	slow := newTest(t)
	slow.wholeText = true
	var all strings.Builder
	for _, tc := range positiveCases(t) {
		all.WriteString(tc.text)
		all.WriteString("\n")
	}
	texts := []string{all.String()}
	for _, src := range goSource(t, "net/http") {
		texts = append(texts, src)
		if len(texts) > 20 || (raceEnabled && len(texts) > 5) {
			break
		}
	}
	// Keywords spelled with the runes (?i) folds to k and s.
	folded := strings.NewReplacer("k", "\u212a", "s", "\u017f").Replace(all.String())
	texts = append(texts, folded)
	// The hostile inputs too: keyword storms, where the anchored scan,
	// its DFA and the broad rules' skip do most of their work.
	size := 32 << 10
	if raceEnabled {
		size = 4 << 10
	}
	for _, in := range hostileInputs(size) {
		texts = append(texts, in)
	}
	for i, s := range texts {
		a, fa := fast.Redact(s)
		b, fb := slow.Redact(s)
		if a != b || !slices.Equal(fa, fb) {
			t.Errorf("text %d: windowed and whole-text results differ", i)
		}
	}
}

func TestHandler(t *testing.T) {
	r := newTest(t)
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), r))
	aws := "AKIA" + randFrom(upperDigits, 16)
	ghp := "ghp_" + randFrom(alnum, 36)
	stripe := "sk_live_" + randFrom(alnum, 24)
	log = log.With("static", "key "+aws)
	log.WithGroup("g").Info("calling with "+ghp,
		"url", "postgres://u:"+randFrom(alnum, 12)+"@h/db",
		"err", fmt.Errorf("auth failed for %s", stripe),
		slog.Group("nested", "tok", ghp), "n", 3)
	got := buf.String()
	for _, s := range []string{aws, ghp, stripe} {
		if strings.Contains(got, s) {
			t.Errorf("secret %q in log line:\n%s", s, got)
		}
	}
	for _, s := range []string{"[REDACTED:github-pat]", "[REDACTED:url-password]", "n=3", "g.nested.tok="} {
		if !strings.Contains(got, s) {
			t.Errorf("missing %q in %s", s, got)
		}
	}
}

func TestDefault(t *testing.T) {
	t.Setenv("CAIRN_TEST_SECRET_TOKEN", "valueOfTheTestToken42")
	// Default reads the environment once; build a fresh one the same way.
	r, err := New(Options{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	if out := r.String("tok valueOfTheTestToken42"); out != "tok [REDACTED:env:CAIRN_TEST_SECRET_TOKEN]" {
		t.Errorf("got %q", out)
	}
	if d1, d2 := Default(), Default(); d1 != d2 || d1.String("AKIA"+randFrom(upperDigits, 16)) != "[REDACTED:aws-access-token]" {
		t.Error("Default unusable")
	}
	var nilR *Redactor
	if s, fs := nilR.Redact("x"); s != "x" || fs != nil {
		t.Error("nil Redactor must pass text through")
	}
}

func TestEmbeddedRules(t *testing.T) {
	rules, _, err := loadGitleaks()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 200 {
		t.Fatalf("only %d gitleaks rules loaded", len(rules))
	}
	if !bytes.Contains(gitleaksRulesJSON, []byte(`"minVersion": "v8.25.0"`)) {
		t.Error("embedded rules are not from the expected gitleaks config")
	}
}

func TestConcurrent(t *testing.T) {
	r := newTest(t)
	done := make(chan bool)
	for i := range 8 {
		go func() {
			for j := range 50 {
				r.AddValues("k", fmt.Sprintf("value-%02d-%03d", i, j))
				r.Redact(fmt.Sprintf("value-%02d-%03d and AKIAABCDEFGHIJKLMN23", i, j))
			}
			done <- true
		}()
	}
	for range 8 {
		<-done
	}
	if r.Count("k") != 400 {
		t.Errorf("Count(k) = %d", r.Count("k"))
	}
}

func BenchmarkRedact(b *testing.B) {
	r := newTest(b)
	var sb strings.Builder
	for _, src := range goSource(b, "net/http") {
		sb.WriteString(src)
		if sb.Len() > 1<<20 {
			break
		}
	}
	for _, tc := range positiveCases(b) {
		sb.WriteString(tc.text)
	}
	benchRedact(b, r, sb.String())
}

func BenchmarkRedactSmall(b *testing.B) {
	r := newTest(b)
	s := "tool output: wrote 3 files; api_key: " + randFrom(alnum, 32) + "\nok\n"
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		r.Redact(s)
	}
}

var raceEnabled bool

// TestBroadCandidateBeyondAnotherSecret: a broad rule's candidate that
// starts inside another rule's secret but runs past it is not skipped:
// the marker covers both, with the other rule's kind.
func TestBroadCandidateBeyondAnotherSecret(t *testing.T) {
	r := newTest(t)
	head, tail := "Q"+randFrom(alnum, 24), "Z"+randFrom(alnum, 24)
	text := "password=" + head + ";" + tail + "\n"
	out, findings := r.Redact(text)
	if strings.Contains(out, head) || strings.Contains(out, tail) {
		t.Fatalf("secret survives: %q", out)
	}
	if len(findings) != 1 || findings[0].Kind != "generic-api-key" {
		t.Fatalf("findings %v in %q, want one generic-api-key", findings, out)
	}
}

// TestFoldedKeywords: a (?i) rule matches a keyword spelled with a Kelvin
// sign (k) or a long s (s); the keyword and start-literal passes, which
// fold ASCII only, must not make it miss.
func TestFoldedKeywords(t *testing.T) {
	r := newTest(t)
	const secret = "Q7x9Z2m4P8w6R1t3Y5u0V2b4" // no stopword in it
	ascii := strings.NewReplacer("\u212a", "k", "\u017f", "s")
	for _, name := range []string{"\u212aey", "to\u212aen", "pa\u017f\u017fword", "\u017fecret"} {
		text := "my_" + name + " = " + secret + "\n"
		if out := r.String(ascii.Replace(text)); strings.Contains(out, secret) {
			t.Fatalf("secret survives in %q", out)
		}
		if out := r.String(text); strings.Contains(out, secret) {
			t.Errorf("secret survives in %q", out)
		}
	}
}
