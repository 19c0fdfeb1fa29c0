#!/usr/bin/env bash
# Context quality evaluation and build benchmarks on real code:
# $(go env GOROOT)/src in place, a copy of CPython 3.11's Lib/email and a copy
# of ajv 8's TypeScript lib/ (see testdata/quality.json and README.md).
#
#   contextengine/quality.sh [benchtime]     # benchtime for the benchmarks (default 300x)
#
# CAIRN_QUALITY_WORKDIR keeps the corpus copies and the index state between
# runs (default: a fresh temporary directory; the first run builds the Go
# tree's repo map and search index, about a minute on 2 cores).
set -euo pipefail
benchtime=${1:-300x}
cd "$(dirname "$0")"
work=${CAIRN_QUALITY_WORKDIR:-$(mktemp -d /tmp/cairn-quality.XXXXXX)}
export CAIRN_QUALITY_CORPUS=1 CAIRN_QUALITY_WORKDIR=$work CAIRN_QUALITY_OUT=$work/recall.txt
echo "# workdir $work; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(go version)"
go test -count=1 -run '^TestQuality$' -timeout 30m . >"$work/quality.log" 2>&1 || { cat "$work/quality.log"; exit 1; }
cat "$CAIRN_QUALITY_OUT"
echo
go test -count=1 -run '^$' -bench 'BenchmarkBuild|BenchmarkCalleePass|BenchmarkTokenCount' -benchtime "$benchtime" -timeout 30m . | grep -E '^(Benchmark|ok|FAIL)'
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
