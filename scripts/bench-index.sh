#!/usr/bin/env bash
# Index benchmarks on a copy of $(go env GOROOT)/src, Cairn side by side with
# what a user would otherwise run, in one run, interleaved (the machine may be
# shared: compare the ratios, and the medians of several runs):
#
#   cold build   Cairn (repo map + search index, one process, as a first
#                `cairn serve`) vs `zoekt-index` vs `ctags -R`: wall, CPU, peak RSS
#   CLI search   `cairn search` vs `zoekt` vs `rg` on a warm index: p50 wall per query
#   in process   testing.B (benchstat format): disk change and didSave seen by
#                search and map (after the debounce), identifier queries, and the
#                context engine's build (contextengine BenchmarkBuild)
#
#   scripts/bench-index.sh [runs] [--write-docs]
#       runs: interleaved repetitions (default 3); --write-docs: the results
#       replace the bench:index section of docs/benchmarks.md
#
# Needs: rg (apt-get install -y ripgrep), ctags (universal-ctags), GNU time,
# zoekt-index and zoekt on PATH or in $ZOEKT_BIN. Build zoekt outside this
# repository, e.g.: git clone https://github.com/sourcegraph/zoekt /tmp/zoekt &&
#   (cd /tmp/zoekt && go build -o /tmp/zoekt/bin/ ./cmd/zoekt-index ./cmd/zoekt)
# and set ZOEKT_BIN=/tmp/zoekt/bin. Optional: benchstat on PATH.
# Set CAIRN_BENCH_SCALE=N to index N copies of the tree (docs/scale.md).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/scripts/bench-docs.sh"
bench_docs_init "$0" "$@"
set -- "${bench_args[@]}"
runs=${1:-3}
work=${CAIRN_BENCH_WORKDIR:-$(mktemp -d /tmp/cairn-bench-index.XXXXXX)}
scale=${CAIRN_BENCH_SCALE:-1}
export PATH=${ZOEKT_BIN:+$ZOEKT_BIN:}$PATH
for t in rg ctags zoekt-index zoekt /usr/bin/time; do
	command -v "$t" >/dev/null || { echo "bench-index: $t is missing (see the header of $0)" >&2; exit 1; }
done

corpus=$work/corpus
if [ ! -d "$corpus" ]; then
	mkdir -p "$corpus"
	for i in $(seq 1 "$scale"); do
		if [ "$scale" = 1 ]; then cp -r "$(go env GOROOT)/src" "$corpus/src"; else cp -r "$(go env GOROOT)/src" "$corpus/src$i"; fi
	done
fi
(cd "$repo" && go build -o "$work/cairn" ./cmd/cairn && go test -c -o "$work/codeindex.test" ./codeindex &&
	go test -c -o "$work/contextengine.test" ./contextengine)

corpus_line="$(find "$corpus" -type f | wc -l) files, $(du -sh "$corpus" | cut -f1) ($scale × \$(go env GOROOT)/src, $(go version | cut -d' ' -f3))"
echo "# corpus: $corpus_line"
echo "# machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GB; load at start $(cut -d' ' -f1-3 /proc/loadavg)"

measure() { # label, command... → one line: label wall cpu rss
	local label=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" >/dev/null 2>"$work/stderr.txt" || { cat "$work/stderr.txt" >&2; return 1; }
	read -r wall user sys rss <"$work/time.txt"
	awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" \
		'BEGIN{printf "%-12s wall %7.2f s  cpu %7.2f s  peak RSS %5.0f MB\n", l, w, u+s, r/1024}'
}

echo
echo "## cold build (fresh state each time; runs interleaved)"
: >"$work/cold.txt"
for i in $(seq 1 "$runs"); do
	rm -rf "$work/cold-state" "$work/zoekt-cold"
	CAIRN_BENCH_CORPUS=$corpus measure cairn "$work/codeindex.test" -test.run '^$' -test.bench 'ColdBuild$' -test.benchtime 1x -test.benchmem=false | tee -a "$work/cold.txt"
	measure zoekt-index zoekt-index -index "$work/zoekt-cold" "$corpus" | tee -a "$work/cold.txt"
	measure ctags ctags -R -f "$work/tags" "$corpus" | tee -a "$work/cold.txt"
done
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "### medians"
: >"$work/cold-medians.txt"
for t in cairn zoekt-index ctags; do
	w=$(awk -v t="$t" '$1==t{print $3}' "$work/cold.txt" | median)
	c=$(awk -v t="$t" '$1==t{print $6}' "$work/cold.txt" | median)
	r=$(awk -v t="$t" '$1==t{print $10}' "$work/cold.txt" | median)
	printf '%-12s wall %7.2f s  cpu %7.2f s  peak RSS %5.0f MB\n' "$t" "$w" "$c" "$r"
	echo "$t $w $c $r" >>"$work/cold-medians.txt"
done
awk '$1=="cairn"{cw=$2;cc=$3} $1=="zoekt-index"{zw=$2;zc=$3} END{printf "cairn ÷ zoekt-index: wall %.2f×, CPU %.2f×\n", cw/zw, cc/zc}' "$work/cold-medians.txt"

echo
echo "## CLI search on a warm index (p50 wall per query over $runs interleaved rounds)"
export CAIRN_STATE_DIR=$work/warm-state
"$work/cairn" search --root "$corpus" warmup >/dev/null 2>&1 || true
[ -d "$work/zoekt-warm" ] || zoekt-index -index "$work/zoekt-warm" "$corpus" >/dev/null 2>&1
queries=(parseHTTPRequest NewReader ServeHTTP "func Marshal" errInvalidWrite)
: >"$work/cli.txt"
for i in $(seq 1 "$runs"); do
	for q in "${queries[@]}"; do
		/usr/bin/time -f "cairn %e" -a -o "$work/cli.txt" "$work/cairn" search --root "$corpus" "$q" >/dev/null 2>&1
		/usr/bin/time -f "zoekt %e" -a -o "$work/cli.txt" zoekt -index_dir "$work/zoekt-warm" "$q" >/dev/null 2>&1
		/usr/bin/time -f "rg %e" -a -o "$work/cli.txt" rg -n --no-heading "$q" "$corpus" >/dev/null 2>&1 || true
	done
done
for t in cairn zoekt rg; do
	printf '%-6s p50 %s s\n' "$t" "$(awk -v t="$t" '$1==t{print $2}' "$work/cli.txt" | median)"
done
c=$(awk '$1=="cairn"{print $2}' "$work/cli.txt" | median); r=$(awk '$1=="rg"{print $2}' "$work/cli.txt" | median)
awk -v c="$c" -v r="$r" 'BEGIN{printf "cairn search ÷ rg (p50): %.2f×\n", c/r}'
z=$(awk '$1=="zoekt"{print $2}' "$work/cli.txt" | median)

echo
echo "## in process (testing.B; benchstat format in $work/bench.txt)"
CAIRN_BENCH_CORPUS=$corpus CAIRN_BENCH_STATE=$work/warm-state "$work/codeindex.test" -test.run '^$' \
	-test.bench 'DiskChangeVisible|DidSaveVisible|Query' -test.benchtime 50x -test.count "$runs" | tee "$work/bench.txt" | grep -E '^Benchmark'
(cd "$repo/contextengine" && CAIRN_QUALITY_CORPUS=1 CAIRN_QUALITY_WORKDIR=$work/quality "$work/contextengine.test" -test.run '^$' \
	-test.bench 'Build$' -test.benchtime 100x -test.count "$runs") | tee -a "$work/bench.txt" | grep -E '^Benchmark'
if command -v benchstat >/dev/null; then benchstat "$work/bench.txt" | tee "$work/benchstat.txt"; fi
echo "# load at end $(cut -d' ' -f1-3 /proc/loadavg); work dir $work"

{
	echo "Corpus: $corpus_line."
	echo
	echo "| cold build, median of $runs interleaved runs | wall | CPU | peak RSS |"
	echo "|---|---:|---:|---:|"
	awk '{n=$1; if(n=="cairn") n="Cairn: map + search, one process"; else if(n=="ctags") n="`ctags -R`"; else n="`" n "`";
		printf "| %s | %.1f s | %.1f s | %.0f MB |\n", n, $2, $3, $4}' "$work/cold-medians.txt"
	echo
	awk '$1=="cairn"{cw=$2;cc=$3} $1=="zoekt-index"{zw=$2;zc=$3} END{printf "Cairn ÷ zoekt-index: wall %.2f×, CPU %.2f×.\n", cw/zw, cc/zc}' "$work/cold-medians.txt"
	echo
	echo "| search from the command line, warm index, p50 per query (${#queries[@]} queries × $runs rounds) | wall |"
	echo "|---|---:|"
	echo "| \`cairn search\` | $c s |"
	echo "| \`zoekt\` | $z s |"
	echo "| \`rg\` | $r s |"
	echo
	awk -v c="$c" -v r="$r" 'BEGIN{printf "cairn search ÷ rg (p50): %.2f×.\n", c/r}'
	echo
	echo "In process (\`testing.B\`, $runs runs; \`cpu-ms/op\` is the process CPU per operation):"
	echo
	echo '```text'
	if [ -s "$work/benchstat.txt" ]; then cat "$work/benchstat.txt"; else grep -E '^Benchmark' "$work/bench.txt"; fi
	echo '```'
} >"$work/docs-section.md"
bench_docs_write index "$work/docs-section.md"
