package search

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/workspace"
)

// TestIndexHoldsNoSecrets (issue 24 finding 8): with the server's options
// (its redactor as Exclude and Redact), a file named after a token is left
// out of the index and counted as such, through the reconcile and through
// Update; a token and a private key in a file's text are stored masked,
// with the lines after them still found at their real line numbers (a
// hit's text is read from the file when asked, not stored); no
// file of the index's directory holds the token, the name or a key line.
func TestIndexHoldsNoSecrets(t *testing.T) {
	const token = "ghp_R8bXq2Lz7Kd4Vn9Wm3Tc6Yh1Jp5Fs0Ga8Ue2"
	const nameToken = "ghp_N4mEtOkEn7Qz2Lx9Wv3Bc8Rt5Yp1Ks6Hd0Ja"
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	src := "package deploy\n\n// releaseToken is " + token + " for the release job.\nconst releaseKey = `" + key + "`\n\n// AfterTheKey follows the key.\nfunc AfterTheKey() int { return 1 }\n"
	wantLine := strings.Count(src[:strings.Index(src, "func AfterTheKey")], "\n") + 1

	root := t.TempDir()
	writeFile(t, root, "deploy/deploy.go", src)
	writeFile(t, root, nameToken+".txt", "plain words in a file named after a token\n")
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	ix, err := Open(ws, Options{StateDir: state, DeclsFunc: treeSitterDecls,
		Exclude: func(rel string) bool { return redact.IsSecretPath(red, rel) },
		Redact:  func(b []byte) []byte { return []byte(red.KeepLines(string(b))) }})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Skipped[SkipSecretPath] != 1 {
		t.Errorf("skipped %v; want the token-named file under %q", st.Skipped, SkipSecretPath)
	}
	if s := ix.Stats(); s.Skipped[SkipSecretPath] != 1 {
		t.Errorf("the index status does not say a file was left out: %v", s.Skipped)
	}
	for _, h := range mustSearch(t, ix, "plain words") {
		t.Errorf("the token-named file is indexed: %+v", h)
	}
	// A file created later under a secret name, through Update.
	later := "later/" + nameToken + ".md"
	writeFile(t, root, later, "more plain words\n")
	if err := ix.Update(later); err != nil {
		t.Fatal(err)
	}
	for _, h := range mustSearch(t, ix, "more plain words") {
		t.Errorf("Update indexed a token-named file: %+v", h)
	}
	if len(mustSearch(t, ix, "release job")) == 0 {
		t.Fatal("the masked file is not searchable")
	}
	// The index's terms are of the masked text: the token is not among them.
	for _, h := range mustSearch(t, ix, token) {
		t.Errorf("the token is a term of the index: %+v", h)
	}
	var found bool
	for _, h := range mustSearch(t, ix, "AfterTheKey") {
		if h.Path == "deploy/deploy.go" && h.Line == wantLine {
			found = true
		}
	}
	if !found {
		t.Errorf("AfterTheKey is not found at line %d: %+v", wantLine, mustSearch(t, ix, "AfterTheKey"))
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	needles := []string{token, nameToken}
	for _, l := range strings.Split(key, "\n") {
		if l != "" && !strings.HasPrefix(l, "-----") {
			needles = append(needles, l)
		}
	}
	filepath.Walk(state, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				t.Errorf("%s holds %.20s…", p, n)
			}
		}
		return nil
	})
}
