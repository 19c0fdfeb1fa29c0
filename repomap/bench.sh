#!/usr/bin/env bash
# Repo map benchmarks on a copy of $(go env GOROOT)/src, side by side with
# `ctags -R` on the same copy. Prints benchstat-friendly lines (save them and
# run benchstat on them), then wall time and peak RSS from /usr/bin/time -v
# for one cold build, one warm load and ctags, each in its own process.
#
#   repomap/bench.sh [count] [--write-docs]
#       count: benchmark repetitions (default 5); --write-docs: the results
#       replace the bench:repomap section of docs/benchmarks.md
#
# Needs: universal-ctags (apt-get install -y universal-ctags), GNU time
# (/usr/bin/time), optionally benchstat
# (go install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da).
set -euo pipefail
source "$(dirname "$0")/../scripts/bench-docs.sh"
bench_docs_init "$0" "$@"
set -- "${bench_args[@]}"
count=${1:-5}
cd "$(dirname "$0")"
work=${CAIRN_BENCH_WORKDIR:-$(mktemp -d /tmp/cairn-repomap-bench.XXXXXX)}
export CAIRN_BENCH_WORKDIR=$work CAIRN_BENCH_CORPUS=${CAIRN_BENCH_CORPUS:-goroot}
out=$work/bench.txt
command -v ctags >/dev/null || { echo "ctags missing: apt-get install -y universal-ctags" >&2; exit 1; }

go test -c -o "$work/repomap.test" .
bin=$work/repomap.test

# Prepare the corpus copy and the warm cache outside the timed runs.
"$bin" -test.run '^$' -test.bench 'WarmLoad$' -test.benchtime 1x >/dev/null

measure() { # label, command...
	local label=$1; shift
	/usr/bin/time -v "$@" >/dev/null 2>"$work/time.txt" || { cat "$work/time.txt" >&2; return 1; }
	local wall rss user sys
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$work/time.txt")
	rss=$(awk -F': ' '/Maximum resident set size/{printf "%.0f MB", $2/1024}' "$work/time.txt")
	user=$(awk -F': ' '/User time/{print $2}' "$work/time.txt")
	sys=$(awk -F': ' '/System time/{print $2}' "$work/time.txt")
	printf '%-28s wall %-9s cpu %ss user + %ss sys  peak RSS %s\n' "$label" "$wall" "$user" "$sys" "$rss"
	# /usr/bin/time -v gives the wall time as [h:]m:ss.ss; the table gives seconds.
	printf '| %s | %s s | %s s | %s |\n' "$label" \
		"$(awk -v w="$wall" 'BEGIN{n=split(w, p, ":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; printf "%.2f", s}')" \
		"$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.2f", u+s}')" "$rss" >>"$work/rows.md"
}

: >"$work/rows.md"
corpus_line="$(find "$work/src" -type f | wc -l) files, $(find "$work/src" -name '*.go' | wc -l) Go files, $(du -sh "$work/src" | cut -f1)"
echo "# corpus: $corpus_line"
echo "# machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# one process each (includes process start; cold build also writes the cache):"
for i in 1 2 3; do
	measure "ctags -R" ctags -R -f "$work/tags" "$work/src"  # warnings go to time.txt
done
for i in 1 2; do
	measure "repomap cold build" "$bin" -test.run '^$' -test.bench 'ColdBuild$' -test.benchtime 1x
done
for i in 1 2 3; do
	measure "repomap warm load" "$bin" -test.run '^$' -test.bench 'WarmLoad$' -test.benchtime 1x
done

echo "# benchmarks (benchstat $out):"
"$bin" -test.run '^$' -test.bench 'ColdBuild$' -test.benchtime 1x -test.count 2 -test.benchmem | tee "$out" | grep '^Benchmark'
"$bin" -test.run '^$' -test.bench 'WarmLoad$|UpdateOneFile|UpdateAndRender|Render|GraphRebuild' -test.count "$count" -test.benchmem | tee -a "$out" | grep '^Benchmark'
# ctags in the same format, so benchstat shows it beside the cold build.
for i in $(seq "$count"); do
	s=$(date +%s%N); ctags -R -f "$work/tags" "$work/src" 2>/dev/null; e=$(date +%s%N)
	echo "BenchmarkCtagsR 1 $((e - s)) ns/op" | tee -a "$out"
done
if command -v benchstat >/dev/null || [ -x "$(go env GOPATH)/bin/benchstat" ]; then
	PATH=$PATH:$(go env GOPATH)/bin benchstat "$out" | tee "$work/benchstat.txt"
fi
{
	echo "Corpus: a copy of \`\$(go env GOROOT)/src\` ($(go version | cut -d' ' -f3)), $corpus_line."
	echo
	echo "| one process each (process start included; the cold build also writes the cache) | wall | CPU | peak RSS |"
	echo "|---|---:|---:|---:|"
	cat "$work/rows.md"
	echo
	echo "Benchmarks (count $count; \`BenchmarkCtagsR\` is \`ctags -R\` timed in the same format):"
	echo
	echo '```text'
	if [ -s "$work/benchstat.txt" ]; then cat "$work/benchstat.txt"; else grep '^Benchmark' "$out"; fi
	echo '```'
} >"$work/docs-section.md"
bench_docs_write repomap "$work/docs-section.md"
echo "# work dir: $work (remove it when done)"
