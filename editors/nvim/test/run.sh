#!/usr/bin/env bash
# Tests of the Neovim plugin in headless Neovim: unit tests of the pure helpers,
# an end-to-end run against the real cairn binary on the scripted model, then
# threads/hunks/code actions against an OpenAI-compatible test endpoint.
# env: CAIRN_BIN (default: build ./cmd/cairn into a new temporary directory), NVIM (default: nvim)
# Exits non-zero on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)   # editors/nvim
repo=$(cd "$here/../.." && pwd)
NVIM=${NVIM:-nvim}

if ! command -v "$NVIM" >/dev/null 2>&1; then
  t=$(date +%s)
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null
  echo "[nvim-test] apt-get install neovim took $(( $(date +%s) - t ))s"
fi
"$NVIM" --version | head -1

source "$repo/editors/test-lib.sh"
cairn_bin "$repo"

make_work nvim
cat > "$work/script.yaml" <<'YAML'
turns:
  - text: "Reading the file."
    toolCalls:
      - name: read_file
        arguments: {path: "hello.go"}
  - toolCalls:
      - name: edit_file
        arguments: {path: "hello.go", oldText: "Hello", newText: "Hello, world"}
  - text: "I changed the greeting."
  # second run: a proposal that is rejected with gr
  - toolCalls:
      - name: edit_file
        arguments: {path: "hello.go", oldText: "Hello", newText: "Hi"}
  - text: "Proposed Hi."
  # third run: a slow answer, cancelled with :CairnCancel
  - text: "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29 w30 w31 w32 w33 w34 w35 w36 w37 w38 w39 end-of-answer"
    delayMs: 250
  # fourth run: a write command, allowed once through vim.ui.select
  - toolCalls:
      - name: run_command
        arguments: {command: "touch approved.txt"}
  - text: "Created approved.txt."
  # fifth run: a write command, denied
  - toolCalls:
      - name: run_command
        arguments: {command: "touch denied.txt"}
  - text: "I was not allowed to."
  # sixth run: an edit accepted, then changed by the user: undo refuses
  - toolCalls:
      - name: edit_file
        arguments: {path: "hello.go", oldText: "Hello", newText: "Hey"}
  - text: "Proposed Hey."
  # seventh run: two hunks in calc.go; the user types while they wait
  - toolCalls:
      - name: edit_file
        arguments:
          path: calc.go
          oldText: "return a - b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a + b"
          newText: "return a + b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a * b"
  - text: "Fixed Add and Mul."
YAML
printf 'package main\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a + b\n}\n' > "$work/ws/calc.go"

run_nvim() {
  (cd "$work/ws" && HOME="$work/home" XDG_CACHE_HOME="$work/cache" XDG_STATE_HOME="$work/state-nvim" \
    XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" TMPDIR="$work/tmp" \
    CAIRN_STATE_DIR="$work/state" CAIRN_NVIM_DIR="$here" CAIRN_BIN="$CAIRN_BIN" \
    WS="$work/ws" SCRIPT="$work/script.yaml" MODEL_URL="${MODEL_URL:-}" REQUESTS="${REQUESTS:-}" \
    timeout 300 "$NVIM" --headless -u NONE -i NONE -n --cmd "set rtp^=$here" --cmd 'filetype on' -c "luafile $1")
}

# The threads suite talks to an OpenAI-compatible endpoint that records what
# the model is sent (editors/test-model.mjs; Node is needed for it).
printf 'package main\n\nfunc one() string {\n\treturn "one"\n}\n\nfunc two() string {\n\treturn "two"\n}\n' > "$work/ws/two.go"
cat > "$work/turns.json" <<'JSON'
[
  {"text": "It prints Hello.", "delayMs": 150},
  {"text": "Il affiche Bonjour."},
  {"toolCalls": [{"name": "edit_file", "arguments": {"path": "two.go",
    "oldText": "return \"one\"\n}\n\nfunc two() string {\n\treturn \"two\"",
    "newText": "return \"uno\"\n}\n\nfunc two() string {\n\treturn \"dos\""}}]},
  {"text": "Two changes proposed."},
  {"text": "It explains itself."},
  {"toolCalls": [{"name": "edit_file", "arguments": {"path": "hello.go", "oldText": "Hello", "newText": "Howdy"}}]},
  {"text": "Proposed Howdy."}
]
JSON
node "$repo/editors/test-model.mjs" "$work/turns.json" "$work/requests.jsonl" "$work/model.port" > "$work/model.log" 2>&1 &
model_pid=$!
trap 'kill "$model_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$work/model.port" ] && break; sleep 0.1; done
[ -s "$work/model.port" ] || { echo "[nvim-test] the test model server did not start: $(cat "$work/model.log")"; exit 1; }

status=0
run_nvim "$here/test/unit.lua" || status=1
run_nvim "$here/test/e2e.lua" || status=1
run_nvim "$here/test/roots.lua" || status=1
MODEL_URL="http://127.0.0.1:$(cat "$work/model.port")/v1" REQUESTS="$work/requests.jsonl" \
  run_nvim "$here/test/threads.lua" || status=1
if [ "$status" -ne 0 ]; then
  echo "[nvim-test] FAILED; scratch files kept in $work"
  exit 1
fi
[ "${KEEP_WORK:-}" = 1 ] || rm -rf "$work"
echo "[nvim-test] passed"
