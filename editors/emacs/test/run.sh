#!/usr/bin/env bash
# Cairn through a plain LSP client: Emacs 28 + eglot, headless.
# env: CAIRN_BIN (default: build ./cmd/cairn into a new temporary directory)
# Exits non-zero on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

if ! command -v emacs >/dev/null 2>&1 || ! ls -d /usr/share/emacs/site-lisp/elpa/eglot-* >/dev/null 2>&1; then
  t=$(date +%s)
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emacs-nox elpa-eglot >/dev/null
  echo "[emacs-test] apt-get install emacs-nox elpa-eglot took $(( $(date +%s) - t ))s"
fi
emacs --version | head -1

source "$repo/editors/test-lib.sh"
cairn_bin "$repo"

make_work emacs
cat > "$work/script.yaml" <<'YAML'
turns:
  - text: "Reading the file."
    toolCalls:
      - name: read_file
        arguments: {path: "hello.go"}
  - toolCalls:
      - name: edit_file
        arguments: {path: "hello.go", oldText: "Hello", newText: "Hello, world"}
  - text: "This prints a greeting; I made it friendlier."
  - toolCalls:
      - name: edit_file
        arguments: {path: "hello.go", oldText: "Hello, world", newText: "Hello, Cairn"}
  - text: "I changed the greeting again."
YAML

# cairn.el: byte-compiled, warnings are errors.
elpa=$(ls -d /usr/share/emacs/site-lisp/elpa/*/ | sed 's/^/-L /' | tr '\n' ' ')
mkdir -p "$work/elc" && cp "$here/../cairn.el" "$work/elc/"
# shellcheck disable=SC2086
emacs -Q --batch $elpa --eval '(setq byte-compile-error-on-warn t)' -f batch-byte-compile "$work/elc/cairn.el"
printf 'package main\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a + b\n}\n' > "$work/ws/calc.go"
cat > "$work/script-cairn-el.yaml" <<'YAML'
turns:
  - text: "Let me look."
    toolCalls:
      - name: read_file
        arguments: {path: "calc.go"}
  - toolCalls:
      - name: edit_file
        arguments:
          path: calc.go
          oldText: "return a - b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a + b"
          newText: "return a + b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a * b"
  - text: "Fixed Add and Mul."
  - toolCalls:
      - name: run_command
        arguments: {command: "touch approved.txt"}
  - text: "Created approved.txt."
YAML

status=0
(cd "$work/ws" && HOME="$work/home" XDG_CACHE_HOME="$work/cache" TMPDIR="$work/tmp" \
  CAIRN_STATE_DIR="$work/state" CAIRN_BIN="$CAIRN_BIN" WS="$work/ws" SCRIPT="$work/script.yaml" \
  timeout 300 emacs -Q --batch -l "$here/eglot-test.el") || status=$?
mkdir -p "$work/state2"
(cd "$work/ws" && HOME="$work/home" XDG_CACHE_HOME="$work/cache" TMPDIR="$work/tmp" \
  CAIRN_STATE_DIR="$work/state2" CAIRN_BIN="$CAIRN_BIN" WS="$work/ws" SCRIPT="$work/script-cairn-el.yaml" \
  CAIRN_EL="$work/elc/cairn.elc" timeout 300 emacs -Q --batch -l "$here/cairn-test.el") || status=$?
if [ "$status" -ne 0 ]; then
  echo "[emacs-test] FAILED (exit $status); scratch files kept in $work"
  exit 1
fi
[ "${KEEP_WORK:-}" = 1 ] || rm -rf "$work"
echo "[emacs-test] passed"
