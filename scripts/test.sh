#!/usr/bin/env bash
# Runs every test Cairn has: formatting, vet, the Go tests under the race
# detector, the demo, the black-box LSP test with a real client library,
# and the editor suites. It installs what the tests need when it is missing
# (npm packages, Debian packages), so it works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=1

step() { printf '\n==> %s\n' "$*"; }

step "go mod download"
go mod download

step "gofmt"
unformatted=$(git ls-files -co --exclude-standard -- '*.go' | while read -r f; do [ -f "$f" ] && echo "$f"; done | xargs -r gofmt -l)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...

step "npm ci: pinned MCP servers (test/mcp) and the black-box client (test/blackbox)"
(cd test/mcp && npm ci --no-audit --no-fund --loglevel=error)
(cd test/blackbox && npm ci --no-audit --no-fund --loglevel=error)

step "quality corpora: rxjs and zod (test/corpora), CPython 3.11's standard library"
(cd test/corpora && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts)
if [ ! -f /usr/lib/python3.11/asyncio/tasks.py ] && [ ! -f /root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/tasks.py ]; then
  apt-get install -y --no-install-recommends libpython3.11-stdlib || { apt-get update && apt-get install -y --no-install-recommends libpython3.11-stdlib; }
fi

step "go test -race ./..."
go test -race -count=1 -timeout 20m ./...

step "quality sets on real code (floors on recall, MRR, map and context figures)"
CAIRN_QUALITY=1 go test -count=1 -timeout 30m -run 'TestFresh' ./search

step "build"
mkdir -p bin
go build -o bin/cairn ./cmd/cairn
export CAIRN_BIN="$PWD/bin/cairn"

step "cairn demo"
bin/cairn demo > /tmp/cairn-demo.out || { cat /tmp/cairn-demo.out; exit 1; }
grep -q "identical to the original: true" /tmp/cairn-demo.out

step "evals: the scripted suite against the committed baseline"
bin/cairn eval --baseline evals/baseline.json

step "black-box LSP test (vscode-languageserver-protocol + OpenAI SSE endpoint)"
(cd test/blackbox && npm test)

for suite in editors/nvim/test/run.sh editors/emacs/test/run.sh editors/vscode/test/unit.sh editors/vscode/test/e2e.sh; do
  if [ -f "$suite" ]; then
    step "$suite"
    bash "$suite"
  fi
done

printf '\nAll test suites passed.\n'
