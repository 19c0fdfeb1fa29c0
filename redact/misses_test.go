package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewMisses holds the secrets a security review found reaching the
// model (issue 13): each must be masked.
func TestReviewMisses(t *testing.T) {
	r := newTest(t)
	body := make([]byte, 1190)
	for i := range body {
		body[i] = byte(rng.IntN(256))
	}
	rsa := pemBlock("RSA PRIVATE KEY", body)
	fromLine2 := rsa[strings.IndexByte(rsa, '\n')+1:]
	pw := randFrom(alnum, 16)
	django := "django-insecure-" + randFrom(alnum+"!@#$%^&*(-_=+)", 50)
	cases := []struct{ name, text, secret string }{
		{"private-key-from-line-2", fromLine2, fromLine2[70:130]},
		{"private-key-from-line-2-numbered", "2\t" + strings.ReplaceAll(fromLine2, "\n", "\n") + "", fromLine2[200:260]},
		{"netrc-one-line", "machine api.example.com login bob password " + pw + "\n", pw},
		{"netrc-lines", "machine api.example.com\n  login bob\n  password " + pw + "\n", pw},
		{"django-secret-key", "SECRET_KEY = '" + django + "'\n", django[16:40]},
		{"xml-password", "<datasource>\n  <password>" + pw + "</password>\n</datasource>", pw},
		{"xml-api-key", "<apiKey>" + pw + "</apiKey>", pw},
		{"mysql-p", "mysql -u root -p" + pw + " app < dump.sql", pw},
		{"mysqldump-quoted", "mysqldump -uroot -p'" + pw + "' app", pw},
		{"password-flag", "psql --password=" + pw + " -h db", pw},
		{"properties-password", "spring.datasource.password=" + pw + "\n", pw},
		{"yaml-password", "db:\n  password: " + pw + "\n", pw},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, fs := r.Redact(tc.text)
			if strings.Contains(out, tc.secret) {
				t.Fatalf("secret survived (findings %v):\n%s", fs, out)
			}
			if again, _ := r.Redact(out); again != out {
				t.Errorf("not idempotent:\n%s\n%s", out, again)
			}
		})
	}
}

// TestReviewMissesNegatives keeps the new rules off ordinary code and
// placeholders.
func TestReviewMissesNegatives(t *testing.T) {
	r := newTest(t)
	for _, s := range []string{
		"\tPassword: req.Password,\n",
		"password := \"password\"\n",
		"<password>${DB_PASSWORD}</password>",
		"mysql -u root -p app\n",
		"psql --password-file=/run/secrets/pg\n",
		"db.password=${DB_PASSWORD}\n",
		"secret: true\n",
		"password: !vault |\n",
		"the password field is required\n",
		"if password == \"\" {\n",
		"SECRET_KEY = os.environ['SECRET_KEY']\n",
	} {
		if out, fs := r.Redact(s); out != s {
			t.Errorf("false positive:\n in: %q\nout: %q\n%v", s, out, fs)
		}
	}
}

// TestLoadDotEnvBelowRoot: .env files anywhere in the workspace (not only
// at its root) are learned; dependency and VCS folders are not walked.
func TestLoadDotEnvBelowRoot(t *testing.T) {
	root := t.TempDir()
	tok := randFrom(alnum, 24)
	deep := randFrom(alnum, 24)
	skipped := randFrom(alnum, 24)
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("config/.env", "SERVICE_TOKEN="+tok+"\n")
	write("services/api/.env.production", "DB_PASSWORD="+deep+"\n")
	write("node_modules/pkg/.env", "NPM_TOKEN="+skipped+"\n")
	r := newTest(t)
	if _, err := r.LoadDotEnv(root); err != nil {
		t.Fatal(err)
	}
	out := r.String("x " + tok + " y " + deep + " z")
	if strings.Contains(out, tok) || strings.Contains(out, deep) {
		t.Errorf("values from nested .env files survived: %s", out)
	}
	if !strings.Contains(out, "[REDACTED:env:SERVICE_TOKEN]") {
		t.Errorf("want the variable's name as the kind: %s", out)
	}
	if r.String(skipped) != skipped {
		t.Errorf("node_modules was walked")
	}
}

// TestFork: values learned by a run's fork mask text in that run only; the
// session's values apply in every fork.
func TestFork(t *testing.T) {
	session := newTest(t)
	envTok := randFrom(alnum, 20)
	session.AddValues("env:TOKEN", envTok)
	run1, run2 := session.Fork(), session.Fork()
	learned := randFrom(alnum, 20)
	run1.AddValues("learned", learned)
	if got := run1.String(learned + " " + envTok); strings.Contains(got, learned) || strings.Contains(got, envTok) {
		t.Errorf("run1 leaks: %s", got)
	}
	if got := run2.String(learned); got != learned {
		t.Errorf("a value learned in run1 reached run2: %s", got)
	}
	if got := session.String(learned); got != learned {
		t.Errorf("a value learned in run1 reached the session: %s", got)
	}
	if got := run2.String(envTok); strings.Contains(got, envTok) {
		t.Errorf("session value not applied in a fork: %s", got)
	}
	// A marker of a kind only the fork knows is left alone by the fork.
	out := run1.String(learned)
	if again := run1.String(out); again != out {
		t.Errorf("fork not idempotent: %s -> %s", out, again)
	}
}

// TestManyValues: thousands of learned values, overlapping ones included.
func TestManyValues(t *testing.T) {
	r := newTest(t)
	var vals []string
	for i := 0; i < 5000; i++ {
		v := randFrom(alnum, 12+i%20)
		vals = append(vals, v)
		r.AddValues("v", v)
	}
	r.AddValues("v", vals[7]+"XYZ123") // a value containing another
	text := "a " + vals[0] + " b " + vals[4999] + " c " + vals[7] + "XYZ123 d"
	out := r.String(text)
	for _, v := range []string{vals[0], vals[4999], vals[7]} {
		if strings.Contains(out, v) {
			t.Errorf("%s survived: %s", v, out)
		}
	}
	if strings.Contains(out, "XYZ123") {
		t.Errorf("the longer value was cut: %s", out)
	}
}

// TestJSON: secrets in any string of a JSON document are masked, escaped
// multi-line ones included; numbers and documents without secrets are
// left byte for byte.
func TestJSON(t *testing.T) {
	r := newTest(t)
	body := make([]byte, 600)
	for i := range body {
		body[i] = byte(rng.IntN(256))
	}
	key := pemBlock("RSA PRIVATE KEY", body)
	aws := "AKIA" + randFrom(upperDigits, 16)
	doc, _ := json.Marshal(map[string]any{"summary": "found " + aws, "content": key, "n": json.Number("12345678901234567890"),
		"list": []any{"ok", map[string]any{"inner": "key=" + aws}}})
	out := string(r.JSON(doc))
	if strings.Contains(out, aws) || strings.Contains(out, "PRIVATE KEY-----\\n"+key[32:60]) {
		t.Fatalf("secret survived: %s", out)
	}
	if !strings.Contains(out, "12345678901234567890") {
		t.Errorf("number changed: %s", out)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	plain := []byte(`{"b": 1,  "a": "nothing here"}`)
	if got := r.JSON(plain); string(got) != string(plain) {
		t.Errorf("clean document rewritten: %s", got)
	}
	if got := r.JSON([]byte("not json " + aws)); string(got) != "not json "+aws {
		t.Errorf("non-JSON input changed")
	}
}
