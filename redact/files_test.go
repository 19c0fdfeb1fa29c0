package redact

import (
	"strings"
	"testing"
)

func TestIsSecretFileName(t *testing.T) {
	for rel, want := range map[string]bool{
		".env": true, "app/.env.production": true, ".env.example": false, "keys/deploy.pem": true,
		"tls/server.KEY": true, "home/.ssh/id_rsa": true, "id_ed25519.pub": false, "cert.p12": true,
		".npmrc": true, ".pypirc": true, ".netrc": true, "aws/credentials": true, "main.go": false,
		"README.md": false, "environment.go": false,
	} {
		if got := IsSecretFileName(rel); got != want {
			t.Errorf("IsSecretFileName(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestIsSecretPath(t *testing.T) {
	r := Default()
	tok := "ghp_N4mEtOkEn7Qz2Lx9Wv3Bc8Rt5Yp1Ks6Hd0Ja"
	for rel, want := range map[string]bool{
		tok + ".txt": true, "dir/" + tok + "/a.go": true, "notes/" + tok: true,
		"cmd/main.go": false, "ghp_short.txt": false,
	} {
		if got := IsSecretPath(r, rel); got != want {
			t.Errorf("IsSecretPath(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestKeepLinesKeepsLineNumbers: a masked multi-line secret leaves as many
// newlines as it held, so every line after it keeps its number.
func TestKeepLinesKeepsLineNumbers(t *testing.T) {
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAt3Lq9mJ0cFvXr2QbYfG8dW4nHs1KpZ6aTeVxUoR7jCiM5yLqNb\n", 6) + "-----END RSA PRIVATE KEY-----\n"
	in := "a\nkey := `" + key + "`\ntoken ghp_N4mEtOkEn7Qz2Lx9Wv3Bc8Rt5Yp1Ks6Hd0Ja\nlast\n"
	out := Default().KeepLines(in)
	if strings.Count(out, "\n") != strings.Count(in, "\n") {
		t.Fatalf("lines changed: %d → %d\n%s", strings.Count(in, "\n"), strings.Count(out, "\n"), out)
	}
	if strings.Contains(out, "MIIEowIBAAKC") || strings.Contains(out, "ghp_N4mE") || !strings.HasSuffix(out, "\nlast\n") {
		t.Errorf("not masked or damaged:\n%s", out)
	}
	if plain := "nothing secret\nhere\n"; Default().KeepLines(plain) != plain {
		t.Error("text without secrets changed")
	}
}
