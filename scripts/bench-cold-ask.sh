#!/usr/bin/env bash
# A cold question on a fresh copy of the Go tree: how long `cairn ask` waits
# for the code index and when its first model request goes out, next to the
# cold index build (map + search, `cairn context`, which reconciles both
# before it builds a context). The model is an OpenAI-compatible endpoint on
# 127.0.0.1 (scripts/fake-openai.py) that records when each request arrives.
# usage: scripts/bench-cold-ask.sh [RUNS] [--write-docs]   env: CAIRN_BIN (default: build)
# --write-docs: the results replace the bench:cold-ask section of docs/benchmarks.md.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/scripts/bench-docs.sh"
bench_docs_init "$0" "$@"
set -- "${bench_args[@]}"
runs=${1:-1}
bin=${CAIRN_BIN:-}
if [ -z "$bin" ]; then
  bin=$(mktemp -d)/cairn
  (cd "$repo" && go build -o "$bin" ./cmd/cairn)
fi
work=$(mktemp -d)
trap 'kill $fake 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 "$repo/scripts/fake-openai.py" "$port" "$work/requests.log" &
fake=$!
sleep 0.5
goroot=$(go env GOROOT)
: > "$work/rows.md"
q="How does the Server find the handler for a request path, and where are patterns matched?"
for i in $(seq 1 "$runs"); do
  rm -rf "$work/go" "$work/state-ask" "$work/state-index"
  cp -r "$goroot/src" "$work/go"
  sync
  # cold index build alone
  t0=$(date +%s.%N)
  CAIRN_STATE_DIR="$work/state-index" "$bin" context --root "$work/go" --file net/http/server.go --range 2500-2530 "$q" >/dev/null
  t1=$(date +%s.%N)
  rm -rf "$work/go" && cp -r "$goroot/src" "$work/go" && sync
  : > "$work/requests.log"
  t2=$(date +%s.%N)
  CAIRN_STATE_DIR="$work/state-ask" CAIRN_PROVIDER=openai CAIRN_MODEL=bench OPENAI_API_KEY= \
    OPENAI_BASE_URL="http://127.0.0.1:$port/v1" \
    "$bin" ask --root "$work/go" --file net/http/server.go --range 2500-2530 "$q" >/dev/null 2>"$work/ask.err"
  t3=$(date +%s.%N)
  first=$(head -1 "$work/requests.log" | cut -d' ' -f1)
  hasmap=$(head -1 "$work/requests.log" | cut -d' ' -f2)
  hashits=$(head -1 "$work/requests.log" | cut -d' ' -f3)
  python3 - "$t0" "$t1" "$t2" "$t3" "$first" "$hasmap" "$hashits" "$i" "$work/rows.md" <<'PY'
import sys
t0, t1, t2, t3, first = map(float, sys.argv[1:6])
print(f"cold index (cairn context: map + search): {t1-t0:.1f} s")
print(f"cold ask: first model request after {first-t2:.1f} s (repo map in it: {sys.argv[6]}, search hits: {sys.argv[7]}); whole ask {t3-t2:.1f} s")
with open(sys.argv[9], "a") as rows:
    rows.write(f"| {sys.argv[8]} | {t1-t0:.1f} s | {first-t2:.1f} s | {sys.argv[6]} | {sys.argv[7]} | {t3-t2:.1f} s |\n")
PY
  grep -m1 "indexing the workspace" "$work/ask.err" || true
done
{
  echo "A copy of \`\$(go env GOROOT)/src\` ($(go version | cut -d' ' -f3)), the question on \`net/http/server.go\` lines 2500–2530,"
  echo "the model a local OpenAI-compatible endpoint (\`scripts/fake-openai.py\`) that records when each request arrives."
  echo
  echo "| run | cold index (\`cairn context\`: map + search) | cold \`cairn ask\`: first model request after | repo map in it | search hits in it | whole ask |"
  echo "|---:|---:|---:|---|---|---:|"
  cat "$work/rows.md"
} > "$work/docs-section.md"
bench_docs_write cold-ask "$work/docs-section.md"
