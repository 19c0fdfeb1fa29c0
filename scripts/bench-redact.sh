#!/usr/bin/env bash
# Redaction throughput: ordinary source (net/http plus a set of secrets),
# a thousand learned values, and the hostile inputs (keyword storms, PEM
# headers with no end, assignment-heavy config). Prints benchstat's summary;
# MB/cpu-s divides by CPU time, so it holds on a machine shared with other
# work, where MB/s (wall) does not (benchstat shows it as B/cpu-s in Mi).
#   scripts/bench-redact.sh [COUNT] [REV] [--write-docs]   (COUNT default 5)
# With REV (a git revision), the redact package as it was at REV runs the
# same way, its own benchmarks, interleaved with the work tree's run by run
# so that both see the same load, and benchstat compares the two.
# --write-docs: the results replace the bench:redact section of docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-docs.sh
bench_docs_init "$0" "$@"
set -- "${bench_args[@]}"
count="${1:-5}"
rev="${2:-}"
bench='BenchmarkRedact$|RedactHostile|RedactLearned'
run() { # dir count
  (cd "$1" && go test -run '^$' -bench "$bench" -benchtime 3x -count "$2" ./redact)
}
out="$(mktemp -t cairn-redact-bench.XXXXXX)"
if [ -z "$rev" ]; then
  run . "$count" | tee "$out" | grep -E '^Benchmark' >&2
  files=("$out")
else
  old="$(mktemp -d -t cairn-redact-old.XXXXXX)"
  paths=(go.mod go.sum redact)
  # The benchmarks measure CPU time through internal/benchlat where REV has it.
  if git cat-file -e "$rev:internal/benchlat" 2>/dev/null; then paths+=(internal/benchlat); fi
  git archive "$rev" "${paths[@]}" | tar -x -C "$old"
  base="$(mktemp -t cairn-redact-bench-old.XXXXXX)"
  for _ in $(seq "$count"); do
    run "$old" 1 | tee -a "$base" | grep -E '^Benchmark' | sed "s/^/$rev /" >&2
    run . 1 | tee -a "$out" | grep -E '^Benchmark' | sed 's/^/now /' >&2
  done
  files=("$rev=$base" "now=$out")
fi
summary="$(mktemp -t cairn-redact-summary.XXXXXX)"
if command -v benchstat >/dev/null; then
  benchstat "${files[@]}" | tee "$summary"
else
  echo "benchstat not on PATH (go install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da); raw results in ${files[*]}"
  if [ -z "$rev" ]; then grep -E '^Benchmark' "$out"; else grep -E '^Benchmark' "$base" | sed "s/^/$rev /"; grep -E '^Benchmark' "$out" | sed 's/^/now /'; fi > "$summary"
fi
section="$(mktemp -t cairn-redact-section.XXXXXX)"
{
  echo "1 MiB inputs, count $count$([ -n "$rev" ] && echo " of the redactor at \`$rev\` and of the work tree, interleaved run by run"); the \`/cpu-s\` figures divide by CPU time, which holds on a shared machine."
  echo
  echo '```text'
  cat "$summary"
  echo '```'
} > "$section"
bench_docs_write redact "$section"
rm -f "$section" "$summary"
