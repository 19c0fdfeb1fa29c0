#!/usr/bin/env bash
# Builds zoekt-index and zoekt-webserver, pinned, into bin/zoekt with the Go
# module proxy, then runs the remote-search tests against a real
# zoekt-webserver (codeindex: TestZoekt*, one pass of
# BenchmarkZoektRemoteSearch). The module proxy on the machines here refuses
# github.com/sourcegraph/zoekt (HTTP 403, every version): then it says so and
# exits 0, and those tests skip (docs/scale.md, "CI").
set -euo pipefail
cd "$(dirname "$0")/.."
ZOEKT_VERSION=${ZOEKT_VERSION:-v0.0.0-20260807124253-c4d8f3537f7a}
bin=$PWD/bin/zoekt
mkdir -p "$bin"
if [ ! -x "$bin/zoekt-webserver" ] || [ ! -x "$bin/zoekt-index" ] || [ "$(cat "$bin/VERSION" 2>/dev/null)" != "$ZOEKT_VERSION" ]; then
  if ! out=$(GOBIN=$bin go install "github.com/sourcegraph/zoekt/cmd/zoekt-index@$ZOEKT_VERSION" \
      "github.com/sourcegraph/zoekt/cmd/zoekt-webserver@$ZOEKT_VERSION" 2>&1); then
    if grep -q '403 Forbidden\|not available' <<<"$out"; then
      echo "zoekt $ZOEKT_VERSION: the Go module proxy refuses it here; the remote-search tests skip:"
      echo "$out" | tail -3
      exit 0
    fi
    echo "$out"; exit 1
  fi
  echo "$ZOEKT_VERSION" >"$bin/VERSION"
fi
export ZOEKT_BIN=$bin ZOEKT_REQUIRED=1
go test -count=1 -timeout 10m -run 'Zoekt' -bench 'ZoektRemoteSearch' -benchtime 200x ./codeindex
