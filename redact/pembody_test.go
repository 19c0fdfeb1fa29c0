package redact

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
)

// testKeys returns PEM private keys of the shapes Go writes (PKCS#1,
// PKCS#8 RSA and EC).
func testKeys(t *testing.T) map[string]string {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p8, _ := x509.MarshalPKCS8PrivateKey(rk)
	e8, _ := x509.MarshalPKCS8PrivateKey(ek)
	return map[string]string{
		"pkcs1": string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)})),
		"pkcs8": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8})),
		"ec":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: e8})),
	}
}

// TestKeyBodyWindowsAreMasked (issue 24 finding 8): any window of two or
// more lines of a key's body, without its BEGIN or END line, as a command
// or a numbered listing prints it, is masked: no body line survives.
func TestKeyBodyWindowsAreMasked(t *testing.T) {
	r := Default()
	for name, key := range testKeys(t) {
		lines := strings.Split(strings.TrimSuffix(key, "\n"), "\n")
		n := len(lines)
		for from := 1; from < n-1; from++ { // 0-based; line 0 is BEGIN
			for to := from + pemMinLines; to <= n; to++ {
				if from == 1 && to == n { // the whole block: the private-key rule's
					continue
				}
				win := lines[from:to]
				for _, shape := range []string{"plain", "numbered", "grep", "quoted"} {
					var b strings.Builder
					for i, l := range win {
						switch shape {
						case "plain":
							b.WriteString(l)
						case "numbered":
							fmt.Fprintf(&b, "%5d\t%s", from+i+1, l)
						case "grep":
							fmt.Fprintf(&b, "%d:%s", from+i+1, l)
						case "quoted":
							fmt.Fprintf(&b, "\t\"%s\\n\" +", l)
						}
						b.WriteByte('\n')
					}
					in := "some output\n" + b.String() + "more output\n"
					out := r.String(in)
					for _, l := range win {
						if len(l) >= 16 && !strings.HasPrefix(l, "-----") && strings.Contains(out, l) {
							t.Fatalf("%s lines %d-%d (%s): a body line survives:\n%s", name, from+1, to, shape, out)
						}
					}
					if !strings.HasPrefix(out, "some output\n") || !strings.HasSuffix(out, "more output\n") {
						t.Fatalf("%s lines %d-%d (%s): the text around is damaged:\n%s", name, from+1, to, shape, out)
					}
				}
			}
		}
	}
}

// TestPEMBodyLeavesOrdinaryTextAlone: hex digests, go.sum lines, long
// identifiers and single base64 lines are not key bodies.
func TestPEMBodyLeavesOrdinaryTextAlone(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("3f786850e387550fdab836ed7e6dc881de23001b3f786850e387550fdab836ed\n", 4),
		"golang.org/x/text v0.3.0 h1:g61tztE5qeGQ89tm6NTjjM9VPIm088od1l6aSorWRWg=\ngolang.org/x/text v0.3.0/go.mod h1:NqM8EUOU14njkJ3fqMW+pc6Ldnwhi/IjpwHt7yyuwOQ=\n",
		strings.Repeat("ThisIsAVeryLongIdentifierNameThatGoesOnAndOnForSixtyFourCharsXy\n", 1),
		strings.Repeat("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl\n", 3),
		"func main() {\n\tfmt.Println(\"hello\")\n}\n",
	} {
		if out := Default().String(s); out != s {
			t.Errorf("changed:\n%s\n→\n%s", s, out)
		}
	}
}
