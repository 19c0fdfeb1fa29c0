package redact

import (
	"path/filepath"
	"strings"
)

// Files that hold secrets by their name. A snapshot of the workspace keeps
// such a file's content in memory only unless a command changes it; the
// redactor's rules find secrets by content, this by convention.

// secretFileNames are base names (lower case) of files that hold secrets
// by convention, whatever their content.
var secretFileNames = map[string]bool{
	".env": true, ".envrc": true, ".npmrc": true, ".pypirc": true, ".netrc": true, "_netrc": true,
	"credentials": true, "credentials.json": true, ".git-credentials": true, ".pgpass": true,
	".htpasswd": true, "id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
	"secrets.yml": true, "secrets.yaml": true, "secrets.json": true, ".dockercfg": true,
}

// secretFileExts are extensions of key and keystore files.
var secretFileExts = map[string]bool{
	".pem": true, ".key": true, ".p12": true, ".pfx": true, ".jks": true, ".keystore": true,
	".asc": true, ".gpg": true, ".ppk": true, ".kdbx": true,
}

// IsSecretFileName reports whether a workspace path names a file that holds
// secrets by convention (.env*, keys, credential files), whatever it holds.
func IsSecretFileName(rel string) bool {
	base := strings.ToLower(filepath.Base(filepath.FromSlash(rel)))
	if secretFileNames[base] || secretFileExts[filepath.Ext(base)] {
		return true
	}
	switch {
	case base == ".env" || strings.HasPrefix(base, ".env."):
		return !strings.HasSuffix(base, ".example") && !strings.HasSuffix(base, ".sample") && !strings.HasSuffix(base, ".template")
	case strings.HasPrefix(base, "id_rsa") || strings.HasPrefix(base, "id_ed25519") || strings.HasPrefix(base, "id_ecdsa"):
		return !strings.HasSuffix(base, ".pub")
	}
	return false
}

// IsSecretPath reports whether a workspace path holds a secret that r
// finds (a token used as a file or directory name). The path is checked as
// it is and with its separators as spaces, so a rule anchored on word
// boundaries sees each name on its own.
func IsSecretPath(r *Redactor, rel string) bool {
	if r == nil {
		r = Default()
	}
	return r.Contains(rel) || r.Contains(strings.NewReplacer("/", " ", "\\", " ", ".", " ").Replace(rel))
}

// KeepLines is String for text whose line numbers matter (an index that
// finds chunks by line): a secret spanning lines (a PEM block) becomes its
// marker followed by as many newlines as it held.
func (r *Redactor) KeepLines(s string) string {
	_, findings := r.Redact(s)
	if len(findings) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, f := range findings {
		if f.Start < last || f.End > len(s) {
			continue
		}
		b.WriteString(s[last:f.Start])
		b.WriteString(Marker(f.Kind))
		b.WriteString(strings.Repeat("\n", strings.Count(s[f.Start:f.End], "\n")))
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}
