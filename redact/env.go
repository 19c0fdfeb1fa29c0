package redact

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// secretNameParts are the upper-case fragments that make an environment
// variable name secret-looking.
var secretNameParts = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "PRIVATE"}

// IsSecretEnvName reports whether an environment variable name looks like it
// holds a secret: it contains KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// CREDENTIAL, AUTH or PRIVATE, case-insensitively (OPENAI_API_KEY,
// GITHUB_TOKEN, PGPASSWORD, AWS_SECRET_ACCESS_KEY, npm_config__authToken,
// SSH_AUTH_SOCK), except that AUTHOR (GIT_AUTHOR_NAME, XAUTHORITY) does not
// count as AUTH. It errs on the side of hiding: KEYBOARD_LAYOUT matches.
// It is shared with the run_command environment stripper.
func IsSecretEnvName(name string) bool {
	u := strings.ToUpper(name)
	for _, p := range secretNameParts {
		for off := 0; ; {
			i := strings.Index(u[off:], p)
			if i < 0 {
				break
			}
			i += off
			// AUTHOR (GIT_AUTHOR_NAME, XAUTHORITY) is not AUTH;
			// AUTHORIZATION is.
			rest := u[i+len(p):]
			if p == "AUTH" && strings.HasPrefix(rest, "OR") && !strings.HasPrefix(rest, "ORIZ") {
				off = i + len(p)
				continue
			}
			return true
		}
	}
	return false
}

// MinEnvValueLen is the shortest environment or .env value that is
// collected as a secret.
const MinEnvValueLen = 8

// FromEnv adds the values of secret-looking variables (IsSecretEnvName,
// value at least MinEnvValueLen bytes) from environ, in os.Environ form
// ("NAME=value"), as kind "env:NAME". Passwords embedded in URL-valued
// variables of any name (DATABASE_URL=postgres://u:p@h) are added too.
// It returns the number of values added.
func (r *Redactor) FromEnv(environ []string) int {
	n := 0
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		n += r.addEnvValue(name, val, false)
	}
	return n
}

// addEnvValue adds one variable's value when it qualifies. fromFile also
// accepts token-looking values under ordinary names, since a workspace .env
// file exists to hold secrets.
func (r *Redactor) addEnvValue(name, val string, fromFile bool) int {
	val = strings.TrimSpace(val)
	kind := "env:" + name
	n := 0
	if pw := urlPassword(val); pw != "" && len(pw) >= 4 && !placeholder.MatchString(pw) {
		r.AddValues(kind, pw)
		n++
	}
	if len(val) < MinEnvValueLen || placeholder.MatchString(val) {
		return n
	}
	if IsSecretEnvName(name) || (fromFile && looksLikeToken(val)) {
		r.AddValues(kind, val)
		n++
	}
	return n
}

func urlPassword(v string) string {
	if !strings.Contains(v, "://") || !strings.Contains(v, "@") {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}

// looksLikeToken accepts long, random-looking single words: at least 16
// bytes, no spaces, letters and digits mixed, entropy above 3.5 bits.
func looksLikeToken(v string) bool {
	if len(v) < 16 || strings.ContainsAny(v, " \t") {
		return false
	}
	if strings.Contains(v, "://") || strings.HasPrefix(v, "/") {
		return false // URLs without passwords and paths are configuration
	}
	letters := strings.IndexFunc(v, func(c rune) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }) >= 0
	return letters && hasDigit(v) && shannon(v) > 3.5
}

// LoadDotEnv reads .env and .env.* files directly in the workspace root and
// adds their values: those of secret-looking names (as FromEnv) and any
// value that looks like a token or holds a URL password. It returns the
// number of values added. Missing files are not an error.
func (r *Redactor) LoadDotEnv(root string) (int, error) {
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	names, err := findDotEnv(root)
	if err != nil {
		return 0, err
	}
	sort.Strings(names)
	total := 0
	var errs []error
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(n)))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(data) > 1<<20 {
			errs = append(errs, fmt.Errorf("redact: %s: larger than 1 MiB, skipped", n))
			continue
		}
		for _, kv := range ParseDotEnv(data) {
			total += r.addEnvValue(kv[0], kv[1], true)
			// A value quoted with \n escapes appears escaped in files.
			if strings.Contains(kv[1], "\n") {
				esc := strings.ReplaceAll(kv[1], "\n", `\n`)
				if IsSecretEnvName(kv[0]) || looksLikeToken(kv[1]) || strings.Contains(kv[1], "PRIVATE KEY") {
					r.AddValues("env:"+kv[0], esc)
				}
			}
		}
	}
	return total, errors.Join(errs...)
}

// ParseDotEnv parses dotenv syntax: NAME=value lines, optional "export ",
// # comments, single quotes (literal), double quotes (with \n \t \" \\
// escapes, may span lines) and unquoted values with trailing " #" comments.
// It returns name/value pairs in file order.
func ParseDotEnv(data []byte) [][2]string {
	var out [][2]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimSuffix(sc.Text(), "\r"))
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		val = strings.TrimLeft(val, " \t")
		if name == "" || strings.ContainsAny(name, " \t") {
			continue
		}
		switch {
		case strings.HasPrefix(val, "'"):
			body := val[1:]
			for !strings.Contains(body, "'") && i+1 < len(lines) {
				i++
				body += "\n" + lines[i]
			}
			if j := strings.IndexByte(body, '\''); j >= 0 {
				body = body[:j]
			}
			val = body
		case strings.HasPrefix(val, `"`):
			body := val[1:]
			for closingQuote(body) < 0 && i+1 < len(lines) {
				i++
				body += "\n" + lines[i]
			}
			if j := closingQuote(body); j >= 0 {
				body = body[:j]
			}
			val = unescapeDouble(body)
		default:
			if j := strings.Index(val, " #"); j >= 0 {
				val = val[:j]
			}
			val = strings.TrimSpace(val)
		}
		out = append(out, [2]string{name, val})
	}
	return out
}

func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Bounds of the .env search: it runs at every server start, so it looks
// at most this many folders and files, and never into dependency, build or
// version-control folders, whose .env files belong to others.
const (
	dotEnvMaxDirs  = 20000
	dotEnvMaxFiles = 100
	dotEnvMaxDepth = 8
)

var dotEnvSkipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true, "vendor": true,
	".venv": true, "venv": true, "__pycache__": true, "target": true, "dist": true,
	"build": true, ".cache": true, ".next": true, ".tox": true,
}

// findDotEnv returns the workspace-relative, slash-separated paths of the
// .env and .env.* files below root, sorted.
func findDotEnv(root string) ([]string, error) {
	var names []string
	dirs := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable folder is skipped, not fatal
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && (dotEnvSkipDirs[d.Name()] || strings.Count(rel, "/") >= dotEnvMaxDepth) {
				return filepath.SkipDir
			}
			if dirs++; dirs > dotEnvMaxDirs {
				return filepath.SkipAll
			}
			return nil
		}
		n := d.Name()
		if (n == ".env" || strings.HasPrefix(n, ".env.")) && d.Type().IsRegular() {
			names = append(names, rel)
			if len(names) >= dotEnvMaxFiles {
				return filepath.SkipAll
			}
		}
		return nil
	})
	sort.Strings(names)
	return names, err
}
