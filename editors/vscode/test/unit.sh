#!/usr/bin/env bash
# Unit tests of the VS Code extension's pure logic (node --test; no VS Code),
# plus a type check and `npm run package` (the .vsix must build).
# Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.cairn-installed 2>/dev/null)" != "$want" ]; then
  npm ci --no-audit --no-fund
  echo "$want" > node_modules/.cairn-installed
fi
npm test
npm run package
