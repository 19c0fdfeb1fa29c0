#!/usr/bin/env bash
# Runs every editor suite against one cairn binary; exits non-zero if any fails.
#   CAIRN_BIN=/path/to/cairn bash editors/test-all.sh      (default: builds ./cmd/cairn)
#   SKIP_VSCODE=1 skips the heavy code-server suite.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
if [ -z "${CAIRN_BIN:-}" ]; then
  mkdir -p /tmp/cairn-bin
  (cd "$repo" && go build -o /tmp/cairn-bin/cairn ./cmd/cairn) || exit 1
  export CAIRN_BIN=/tmp/cairn-bin/cairn
fi
export CAIRN_BIN
failed=()
bash "$here/nvim/test/run.sh" || failed+=(nvim)
bash "$here/emacs/test/run.sh" || failed+=(emacs)
if [ -z "${SKIP_VSCODE:-}" ]; then
  bash "$here/vscode/test/e2e.sh" || failed+=(vscode)
fi
if ((${#failed[@]})); then
  echo "editor suites failed: ${failed[*]}"
  exit 1
fi
echo "editor suites passed"
