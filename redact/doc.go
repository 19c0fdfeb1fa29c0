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
//   - Supplementary rules for what gitleaks, which targets committed
//     files, leaves to others and an agent's context, logs and traces are
//     full of: passwords in URLs and connection strings (postgres, mysql,
//     mongodb+srv, redis, amqp, https://user:pass@…; only the password is
//     masked), sk-… keys of OpenAI-compatible providers without the
//     T3BlbkFJ marker, Authorization headers, PEM private keys cut off
//     before their END line or read from their second line on (no BEGIN
//     line), .netrc passwords, quoted strings assigned to secret-named
//     identifiers (Django's SECRET_KEY = '…'), XML elements (<password>),
//     command-line passwords (mysql -pPASS, --password=…), and properties
//     or YAML password lines (spring.datasource.password=…). See
//     cairnRules; the broad ones yield to gitleaks' generic rule.
//   - Exact values: those passed in Options.Values or AddValues, the values
//     of secret-looking environment variables (FromEnv, IsSecretEnvName) and
//     of the workspace's .env and .env.* files at any depth outside
//     dependency and VCS folders (LoadDotEnv). A run works on a Fork: the
//     values it learns stay in that run.
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
// for its optional RE2 build), and its config package alone still pulls in
// viper: both would multiply the binary's size and its compile time. This
// package adds no module; what it links (mostly encoding/json, log/slog and
// net/url) Cairn links anyway. The sizes and compile times compared are in
// docs/benchmarks.md.
//
// # How it stays fast
//
// Every prompt, trace, journal record and log line passes through Redact,
// so it must be cheap on ordinary text and bounded on hostile text. Go's
// regexp has no DFA: its NFA costs input length × program size, and
// gitleaks' rules are large programs. So:
//   - A rule's regexp runs only near an occurrence of one of its keywords
//     (one Aho–Corasick pass over the text finds them all, spelled with
//     the Kelvin sign or the long s too, which (?i) folds to k and s), and
//     only as far as its matches can reach (maxMatchLen, from the parsed
//     expression).
//   - A rule whose matches must start with one of a few literals (the
//     generic rules, once their lazy `[\w.-]{0,50}?` lead is taken off and
//     put back after the match; rules that start with \b and a literal) is
//     tried, anchored, only where one starts.
//   - There, before the regexp, a DFA built lazily from the rule's compiled
//     program (dfa.go) rules out in one pass over the bytes the places
//     where no match can start: nearly all of the keyword places of a
//     keyword storm, where Go's backtracker would try every way
//     of splitting the text between the keyword, the name, the operator
//     and the value. It is a necessary condition (assertions other than ^
//     and $ are taken to hold), and it also bounds where a match can end,
//     so the regexp reads no further. TestDFAPossible and FuzzDFAPossible
//     check both against the regexp on sampled, mutated and hostile text.
//   - Other rules scan in pieces small enough for Go's backtracking engine
//     (256 Kibit / program length), several times faster than its NFA.
//   - Allowlists first rule out, with the same kind of DFA, the texts none
//     of their regexps matches anywhere; otherwise each branch of an
//     alternation runs separately, and only when literals it requires
//     occur. A line allowlist finds its literals once per text, not once per
//     match in up to 8 KiB of line. Stopwords and learned values are
//     Aho–Corasick automata, so thousands of values cost one pass.
//   - A broad rule's candidate that lies inside another rule's secret is
//     not checked again (the merge would drop it).
//
// A test compares the result with the plain whole-text scan of every rule
// on real code; BenchmarkRedact and BenchmarkRedactHostile measure it (the
// figures are in docs/benchmarks.md, written by scripts/bench-redact.sh).
//
// Updating the rules is `go generate` with a new version in gen-rules.sh.
//
// Not carried over from gitleaks: decoding of base64/hex/percent-encoded
// segments, composite ("required") rules (none in the default set), and the
// gitleaks:allow comment.
package redact
