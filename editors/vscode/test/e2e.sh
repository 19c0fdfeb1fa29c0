#!/usr/bin/env bash
# End-to-end test of the Cairn VS Code extension in real VS Code (code-server
# 4.100.3) driven by headless Chromium (playwright-core), with the real cairn
# binary and an OpenAI-compatible test endpoint (editors/test-model.mjs): the
# chat view, threads and follow-ups, the diff editor, accept/reject whole and
# per hunk, undo, cancel, approvals, a run started from the lightbulb; then a
# two-folder .code-workspace (test/e2e/multiroot.mjs).
#
# Installs what it needs, skipping what is already there: Debian's chromium,
# ripgrep and libkrb5-dev; the extension's npm packages; code-server and
# playwright-core (pinned in test/e2e/package-lock.json).
#
# env: CAIRN_BIN   server binary (default: build ./cmd/cairn into a new temporary directory)
#      SHOTS       where screenshots go (default: the work dir; SHOTS=<repo>/docs refreshes the README's)
#      KEEP_WORK=1 keep the scratch directory after a pass
# Exits non-zero on failure.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)        # editors/vscode
repo=$(cd "$here/../.." && pwd)
log() { echo "[vscode-e2e] $*"; }
since() { echo $(( $(date +%s) - $1 ))s; }

# --- system packages ---------------------------------------------------------
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
if ((${#need[@]})); then
  t=$(date +%s)
  log "apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  log "apt-get install took $(since "$t")"
fi
case "$(node --version)" in
  v20.*) ;;
  *) echo "code-server 4.100.3 needs Node 20; found $(node --version)" >&2; exit 1 ;;
esac

# --- the extension -------------------------------------------------------------
cd "$here"
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.cairn-installed 2>/dev/null)" != "$want" ]; then
  t=$(date +%s)
  npm ci --no-audit --no-fund
  echo "$want" > node_modules/.cairn-installed
  log "npm ci (extension) took $(since "$t")"
fi
npm run package   # unit tests: test/unit.sh
vsix="$here/cairn.vsix"

# --- code-server + playwright-core -------------------------------------------
cd "$here/test/e2e"
marker=node_modules/.cairn-e2e-installed
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$marker" 2>/dev/null)" != "$want" ] || [ ! -e node_modules/code-server/lib/vscode/node_modules.asar ]; then
  t=$(date +%s)
  seed=$(mktemp -d)
  # @vscode/ripgrep downloads a binary at install time; seed its cache with Debian's rg.
  mkdir -p "$seed/vscode-ripgrep-cache-1.15.11"
  cp "$(command -v rg)" "$seed/rg"
  tar czf "$seed/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$seed" rg
  # package.json's allowScripts lets code-server's and argon2's install scripts run;
  # code-server's postinstall refuses to run as root without unsafe_perm.
  TMPDIR="$seed" npm_config_yes=true npm_config_unsafe_perm=true npm ci --no-audit --no-fund
  rm -rf "$seed"
  echo "$want" > "$marker"
  log "npm ci (code-server, playwright-core) took $(since "$t")"
fi
code_server="$here/test/e2e/node_modules/.bin/code-server"

# --- the server ----------------------------------------------------------------
if [ -z "${CAIRN_BIN:-}" ]; then
  t=$(date +%s)
  bindir=$(mktemp -d -t cairn-bin.XXXXXX)
  (cd "$repo" && go build -o "$bindir/cairn" ./cmd/cairn)
  CAIRN_BIN=$bindir/cairn
  log "go build took $(since "$t")"
fi
[ -x "$CAIRN_BIN" ] || { echo "CAIRN_BIN=$CAIRN_BIN is not an executable" >&2; exit 1; }

# --- run -----------------------------------------------------------------------
work=$(mktemp -d -t cairn-vscode-e2e.XXXXXX)
status=0
CAIRN_BIN="$CAIRN_BIN" VSIX="$vsix" WORK="$work" SHOTS="${SHOTS-$work}" \
  CODE_SERVER="$code_server" CHROMIUM="${CHROMIUM:-$(command -v chromium)}" TEST_MODEL="$repo/editors/test-model.mjs" \
  HOME="$work/home" XDG_CACHE_HOME="$work/cache" TMPDIR="$work/tmp" CAIRN_STATE_DIR="$work/state" \
  timeout 900 node "$here/test/e2e/run.mjs" || status=$?
# A multi-root workspace (.code-workspace with two folders), in its own code-server.
if [ "$status" -eq 0 ]; then
  CAIRN_BIN="$CAIRN_BIN" VSIX="$vsix" WORK="$work" \
    CODE_SERVER="$code_server" CHROMIUM="${CHROMIUM:-$(command -v chromium)}" TEST_MODEL="$repo/editors/test-model.mjs" \
    HOME="$work/home" XDG_CACHE_HOME="$work/cache" TMPDIR="$work/tmp" \
    timeout 600 node "$here/test/e2e/multiroot.mjs" || status=$?
fi
if [ "$status" -ne 0 ]; then
  log "FAILED (exit $status); logs and failure.png in $work"
  exit "$status"
fi
[ "${KEEP_WORK:-}" = 1 ] || rm -rf "$work"
log "passed"
