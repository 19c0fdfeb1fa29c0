// Package redact finds and masks secrets in everything Cairn sends to a
// model, writes to a trace or an audit record, or logs.
//
//	r, _ := redact.New(redact.Options{Environ: os.Environ()})
//	r.LoadDotEnv(workspaceRoot)
//	clean, findings := r.Redact(text) // "key=[REDACTED:aws-access-token]"
//	logger := slog.New(redact.NewHandler(inner, r))
//
// # What is detected
//
//   - gitleaks' standard rule set (about 220 rules: cloud, VCS, payment,
//     chat and LLM provider keys, JWTs, PEM private keys, generic
//     "password=…"/"api_key: …" assignments gated by entropy), with its
//     keywords, secret groups, entropy thresholds, allowlists and stopwords
//     applied as gitleaks applies them. Path-only rules and path/commit
//     allowlists do not apply to free text and are skipped.
//   - A few supplementary rules for what gitleaks, which targets committed
//     files, leaves to others and an agent's logs and traces are full of:
//     passwords in URLs and connection strings (postgres, mysql,
//     mongodb+srv, redis, amqp, https://user:pass@…; only the password is
//     masked), sk-… keys of OpenAI-compatible providers without the
//     T3BlbkFJ marker, Authorization headers, and PEM private keys cut off
//     before their END line. See cairnRules.
//   - Exact values: those passed in Options.Values or AddValues, the values
//     of secret-looking environment variables (FromEnv, IsSecretEnvName) and
//     of the workspace's .env and .env.* files (LoadDotEnv).
//
// Each match becomes [REDACTED:<kind>], kind being the rule id
// ("aws-access-token", "private-key", "url-password") or the value's kind
// ("env:OPENAI_API_KEY"). Overlapping matches merge into one marker (exact
// values win over specific rules, which win over generic-api-key). Existing
// markers are never matched again, so redaction is idempotent.
//
// # Why gitleaks' rules but not gitleaks' code
//
// The rules are gitleaks v8.30.1's own default configuration
// (config/gitleaks.toml), converted verbatim to gitleaks-rules.json by
// gen-rules.sh and embedded; gitleaks' MIT licence is in gitleaks.LICENSE.
// Importing github.com/zricethezav/gitleaks/v8/detect instead would link 62
// modules (viper, cobra, archive and compression libraries, a wasm runtime
// for its optional RE2 build). Measured here against a hello-world that uses
// regexp (2.7 MB): gitleaks detect makes it 12.8 MB and costs 31.5 s of CPU
// to compile with a warm standard-library cache (a cold build went from
// 10 s to 61 s); its config package alone still pulls in viper (6.8 MB,
// 22 modules, 20 s of CPU). This package adds no module, makes it 3.9 MB
// (mostly encoding/json, log/slog and net/url, which Cairn links anyway) and
// costs 1.9 s of CPU. It compiles the rules in ~20 ms on first use and scans
// 8-20x faster than gitleaks' detector on the same input, because like
// gitleaks it runs a rule's regexp only where one of the rule's keywords
// occurs (one Aho–Corasick pass over the text) and, unlike gitleaks, only
// over the lines around each keyword hit rather than the whole text (PEM
// rules reach 64 KiB forward). A test checks that windowed and whole-text
// scanning agree; on $GOROOT/src/crypto this package and gitleaks report the
// same 82 findings, on net/http gitleaks none and this package 11 (all
// url-password, test URLs such as http://user:password@dummy.faketld/).
// Updating the rules is `go generate` with a new version in gen-rules.sh.
//
// Not carried over from gitleaks: decoding of base64/hex/percent-encoded
// segments, composite ("required") rules (none in the default set), and the
// gitleaks:allow comment.
package redact
