#!/usr/bin/env bash
# Redaction throughput: ordinary source (net/http plus a set of secrets),
# a thousand learned values, and the hostile inputs (keyword storms, PEM
# headers with no end, assignment-heavy config). Prints benchstat's summary;
# MB/cpu-s divides by CPU time, so it holds on a machine shared with other
# work, where MB/s (wall) does not.
#   scripts/bench-redact.sh [COUNT]     (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-5}"
out="$(mktemp -t cairn-redact-bench.XXXXXX)"
go test -run '^$' -bench 'BenchmarkRedact$|RedactHostile|RedactLearned' -benchtime 3x -count "$count" ./redact | tee "$out" | grep -E '^Benchmark' >&2
if command -v benchstat >/dev/null; then
  benchstat "$out"
else
  echo "benchstat not on PATH (go install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da); raw results in $out"
fi
