#!/usr/bin/env bash
# Cairn through a plain LSP client: Emacs 28 + eglot, headless.
# env: CAIRN_BIN (default: build ./cmd/cairn to /tmp/cairn-bin/cairn)
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

if [ -z "${CAIRN_BIN:-}" ]; then
  mkdir -p /tmp/cairn-bin
  (cd "$repo" && go build -o /tmp/cairn-bin/cairn ./cmd/cairn)
  CAIRN_BIN=/tmp/cairn-bin/cairn
fi
[ -x "$CAIRN_BIN" ] || { echo "CAIRN_BIN=$CAIRN_BIN is not an executable" >&2; exit 1; }

work=$(mktemp -d /tmp/cairn-emacs-test.XXXXXX)
mkdir -p "$work/home" "$work/cache" "$work/tmp" "$work/state" "$work/ws"
cat > "$work/ws/hello.go" <<'GO'
package main

import "fmt"

func main() {
	fmt.Println("Hello")
}
GO
printf 'module example.com/hello\n\ngo 1.22\n' > "$work/ws/go.mod"
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
YAML

status=0
(cd "$work/ws" && HOME="$work/home" XDG_CACHE_HOME="$work/cache" TMPDIR="$work/tmp" \
  CAIRN_STATE_DIR="$work/state" CAIRN_BIN="$CAIRN_BIN" WS="$work/ws" SCRIPT="$work/script.yaml" \
  timeout 300 emacs -Q --batch -l "$here/eglot-test.el") || status=$?
if [ "$status" -ne 0 ]; then
  echo "[emacs-test] FAILED (exit $status); scratch files kept in $work"
  exit 1
fi
[ "${KEEP_WORK:-}" = 1 ] || rm -rf "$work"
echo "[emacs-test] passed"
