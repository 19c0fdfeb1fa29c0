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
