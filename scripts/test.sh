#!/usr/bin/env bash
# Runs every test Cairn has: formatting, vet, the Go tests under the race
# detector, the demo, the black-box LSP test with a real client library,
# and the editor suites. It installs what the tests need when it is missing
# (npm packages, Debian packages), so it works on a fresh machine.
#
# Every step runs even when an earlier one failed (a step that needs the
# output of a failed one, such as the binary, says so and fails too); the
# failing steps are listed at the end and the exit status is non-zero if
# there is any.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=1

failed=()

# step NAME COMMAND...: runs COMMAND, remembering NAME if it fails.
step() {
  local name=$1
  shift
  printf '\n==> %s\n' "$name"
  local start=$SECONDS rc
  # Not in an if: there bash would ignore set -e inside the subshell.
  ( set -e; "$@" )
  rc=$?
  if [ "$rc" -eq 0 ]; then
    printf '<== %s: ok (%ds)\n' "$name" $((SECONDS - start))
  else
    printf '<== %s: FAILED with status %d (%ds)\n' "$name" "$rc" $((SECONDS - start))
    failed+=("$name (status $rc)")
  fi
}

gofmt_check() {
  local unformatted
  unformatted=$(git ls-files -co --exclude-standard -- '*.go' | while read -r f; do [ -f "$f" ] && echo "$f"; done | xargs -r gofmt -l)
  if [ -n "$unformatted" ]; then
    echo "gofmt would change:"; echo "$unformatted"; return 1
  fi
}

# The tools the Go tests run (under CI=true a test whose tool is missing
# fails instead of skipping): git, perl, node and npm.
test_tools() {
  local need=()
  command -v git >/dev/null 2>&1 || need+=(git)
  command -v perl >/dev/null 2>&1 || need+=(perl)
  command -v node >/dev/null 2>&1 || need+=(nodejs)
  command -v npm >/dev/null 2>&1 || need+=(npm)
  if [ ${#need[@]} -gt 0 ]; then
    apt-get install -y --no-install-recommends "${need[@]}" ||
      { apt-get update && apt-get install -y --no-install-recommends "${need[@]}"; }
  fi
}

npm_deps() {
  (cd test/mcp && npm ci --no-audit --no-fund --loglevel=error)
  (cd test/blackbox && npm ci --no-audit --no-fund --loglevel=error)
  # npm install, not npm ci: acpx's @openclaw/fs-safe names optional builds for
  # other platforms that the registry here does not serve (404), which npm ci's
  # lock check refuses; the lock still pins every package this platform gets.
  (cd test/acp && npm install --no-save --no-audit --no-fund --loglevel=error && npm ls acpx @agentclientprotocol/sdk)
}

# The quality sets run on real code nobody here wrote (internal/corpora):
# the Go tree, CPython 3.11's email and asyncio, the npm packages pinned
# in test/corpora, and the JDK, Rust, kernel and Ruby sources from Debian. CAIRN_QUALITY=1 makes their tests run (and fail, under
# CI=true, when a corpus is missing); they assert floors, not wall times.
quality_corpora() {
  (cd test/corpora && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts)
  if [ ! -f /usr/lib/python3.11/asyncio/tasks.py ] && [ ! -f /root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/tasks.py ]; then
    apt-get install -y --no-install-recommends libpython3.11-stdlib ||
      { apt-get update && apt-get install -y --no-install-recommends libpython3.11-stdlib; }
  fi
  # The JDK's, Rust's, the kernel's and Ruby's sources (internal/corpora/apt.go).
  local apt_corpora=(openjdk-17-source rust-src linux-source-6.1 ruby3.1) missing=()
  for p in "${apt_corpora[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get install -y --no-install-recommends "${missing[@]}" ||
      { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }
  fi
}

# Every test that CAIRN_QUALITY=1 turns on: the three sets (fresh search
# questions, core-API names in the map, context definition recall) and the
# map's ranking against an independent reference on the corpora.
quality_tests='^(TestFresh.*|TestHeldout.*|TestCoreAPI.*|TestFocusedMap.*|TestQuality|TestQualityUnderARoot|TestQualitySetWellFormed|TestRankMatchesReferenceOnCorpora)$'

quality_sets() {
  CAIRN_QUALITY=1 go test -count=1 -timeout 40m -run "$quality_tests" ./search ./repomap ./contextengine
  # First-prompt definition recall of `cairn ask`, cold and warm (issue 25).
  CAIRN_QUALITY=1 go test -count=1 -timeout 40m -run '^TestFirstPrompt' ./cmd/cairn
}

# staticcheck at a pinned version, installed into ./bin on a fresh machine.
staticcheck_version=v0.8.2
run_staticcheck() {
  if [ ! -x bin/staticcheck ] || ! bin/staticcheck -version | grep -q "${staticcheck_version#v}"; then
    GOBIN="$PWD/bin" go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
  fi
  bin/staticcheck ./...
}

build() {
  mkdir -p bin
  rm -f bin/cairn
  go build -o bin/cairn ./cmd/cairn
}

need_binary() {
  if [ ! -x bin/cairn ]; then
    echo "bin/cairn was not built (see the build step)"; return 1
  fi
}

demo() {
  need_binary
  local out rc=0
  out=$(mktemp)
  bin/cairn demo > "$out" || rc=$?
  if [ "$rc" -ne 0 ]; then
    cat "$out"
  elif ! grep -q "identical to the original: true" "$out"; then
    rc=1
  fi
  rm -f "$out"
  return "$rc"
}

evals() {
  need_binary
  bin/cairn eval --baseline evals/baseline.json
}

blackbox() {
  need_binary
  (cd test/blackbox && npm test)
}

acp_blackbox() {
  need_binary
  (cd test/acp && npm test)
}

suite() {
  need_binary
  bash "$1"
}

step "go mod download" go mod download
step "gofmt" gofmt_check
step "go vet" go vet ./...
step "staticcheck $staticcheck_version" run_staticcheck
step "tools the tests run (git, perl, node, npm)" test_tools
step "npm ci: pinned MCP servers (test/mcp), the black-box clients (test/blackbox, test/acp)" npm_deps
step "quality corpora: rxjs and zod from npm, CPython 3.11's standard library" quality_corpora
step "go test -race ./..." go test -race -count=1 -timeout 20m ./...
step "quality sets on real code (floors on retrieval, map and context figures)" quality_sets
step "remote search: zoekt-index and zoekt-webserver (pinned), the Zoekt tests" bash scripts/ci-zoekt.sh
step "build" build
export CAIRN_BIN="$PWD/bin/cairn"
step "cairn demo" demo
step "evals: the scripted suite against the committed baseline" evals
step "black-box LSP test (vscode-languageserver-protocol + OpenAI SSE endpoint)" blackbox
step "black-box ACP test (@agentclientprotocol/sdk + OpenAI SSE endpoint)" acp_blackbox

for s in editors/nvim/test/run.sh editors/emacs/test/run.sh editors/vscode/test/unit.sh editors/vscode/test/e2e.sh; do
  if [ -f "$s" ]; then
    step "$s" suite "$s"
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  printf '\n%d step(s) failed:\n' "${#failed[@]}"
  printf '  - %s\n' "${failed[@]}"
  exit 1
fi
printf '\nAll test suites passed.\n'
