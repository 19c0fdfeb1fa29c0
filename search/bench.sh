#!/usr/bin/env bash
# Benchmarks Cairn's search index side by side with zoekt and rg on a copy of
# the Go source tree, and reports retrieval quality (recall@5, MRR) for
# search and an `rg -w` baseline. Run from the module root:
#
#   search/bench.sh            # everything
#   WORK=/tmp/cairn-bench search/bench.sh
#
# Needs: go, /usr/bin/time, rg (apt-get install -y ripgrep), network access to
# the Go module proxy the first time (to build zoekt).
set -euo pipefail

WORK=${WORK:-/tmp/cairn-bench}
CORPUS=${CORPUS:-$WORK/gosrc}
ZOEKT_VERSION=v0.0.0-20240808144359-20c496e3680f
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$WORK"

log() { printf '\n== %s\n' "$*"; }
ms() { echo $(( ($2 - $1) / 1000000 )); }

log "machine: $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg), go: $(go version | cut -d' ' -f3)"

if [ ! -d "$CORPUS" ]; then
	log "copying $(go env GOROOT)/src to $CORPUS"
	cp -r "$(go env GOROOT)/src" "$CORPUS"
fi
echo "corpus: $CORPUS ($(find "$CORPUS" -type f | wc -l) files, $(du -sh "$CORPUS" | cut -f1))"

if ! command -v rg >/dev/null; then
	log "installing ripgrep"
	apt-get install -y ripgrep >/dev/null
fi

ZBIN=$WORK/zoekt-bin
if [ ! -x "$ZBIN/zoekt-index" ] || [ ! -x "$ZBIN/zoekt" ]; then
	log "building zoekt $ZOEKT_VERSION"
	mkdir -p "$WORK/zoekt-mod" "$ZBIN"
	(
		cd "$WORK/zoekt-mod"
		[ -f go.mod ] || go mod init zoektbench >/dev/null 2>&1
		GOFLAGS=-mod=mod go get "github.com/sourcegraph/zoekt@$ZOEKT_VERSION" >/dev/null 2>&1
		GOFLAGS=-mod=mod GOBIN=$ZBIN go install github.com/sourcegraph/zoekt/cmd/zoekt-index github.com/sourcegraph/zoekt/cmd/zoekt
	)
fi
if [ ! -x "$ZBIN/zoektbench" ]; then
	log "building zoektbench (search/testdata/zoektbench: zoekt queries timed in process)"
	mkdir -p "$WORK/zoekt-mod/zoektbench"
	cp "$ROOT/search/testdata/zoektbench/main.go" "$WORK/zoekt-mod/zoektbench/"
	(
		cd "$WORK/zoekt-mod"
		[ -f go.mod ] || { go mod init zoektbench >/dev/null 2>&1; GOFLAGS=-mod=mod go get "github.com/sourcegraph/zoekt@$ZOEKT_VERSION" >/dev/null 2>&1; }
		GOFLAGS=-mod=mod go build -o "$ZBIN/zoektbench" ./zoektbench
	)
fi

log "building the search test binary"
(cd "$ROOT" && go test -c -o "$WORK/search.test" ./search)

timev() { # runs a command under /usr/bin/time -v; prints wall and max RSS
	local out=$WORK/time.txt
	/usr/bin/time -v -o "$out" "$@" >"$WORK/cmd.out" 2>&1 || { cat "$WORK/cmd.out"; return 1; }
	echo "  wall $(grep 'Elapsed' "$out" | awk '{print $NF}'), max RSS $(( $(grep 'Maximum resident' "$out" | awk '{print $NF}') / 1024 )) MB"
}

log "cold index: cairn search (bleve/scorch)"
cd "$ROOT/search"
timev env CAIRN_BENCH_CORPUS="$CORPUS" "$WORK/search.test" -test.run '^$' -test.bench 'ColdIndex' -test.benchtime 1x
grep Benchmark "$WORK/cmd.out"

log "cold index: zoekt-index -disable_ctags"
rm -rf "$WORK/zoekt-index"
timev "$ZBIN/zoekt-index" -disable_ctags -index "$WORK/zoekt-index" "$CORPUS"
echo "  index size $(du -sm "$WORK/zoekt-index" | cut -f1) MB"

log "warm open, warm reconcile, one-file update, queries (in process)"
STATE=$WORK/state
env CAIRN_BENCH_CORPUS="$CORPUS" CAIRN_BENCH_STATE="$STATE" "$WORK/search.test" -test.run '^$' \
	-test.bench 'WarmOpen|WarmReconcile|Update|Query' -test.benchtime 2s | grep Benchmark
echo "  index size $(du -sm "$STATE/search/index" | cut -f1) MB"

ident=(ServeHTTP http2parseSettingsFrame NewRequestWithContext LoadOrStore growslice ReadMIMEHeader findRunnable EncodeToString ParseCIDR lockSlow)
phrase=("settings frame" "stack overflow" "garbage collection" "read deadline" "context canceled" "write barrier" "invalid UTF-8" "connection reset" "header field" "unexpected EOF")
natural=("where are HTTP/2 settings frames parsed" "how does the HTTP client follow redirects" "graceful shutdown of an HTTP server" "how does the runtime grow a goroutine stack" "decompress a gzip stream" "split a network address into host and port" "reset a timer to a new duration" "look up an environment variable" "generate an RSA private key" "match file names against a glob pattern")

p50() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

rgq() { # rg -w -i over the query's words
	local args=()
	for w in $(echo "$1" | grep -oE '[A-Za-z0-9_]{2,}'); do args+=(-e "$w"); done
	rg -w -i -c --no-messages "${args[@]}" "$CORPUS" >/dev/null || true
}
zq() { # zoekt CLI: process start, shard load and search
	"$ZBIN/zoekt" -index_dir "$WORK/zoekt-index" "$1" >/dev/null 2>&1 || true
}
log "query latency in process: zoekt (Go API, 10 hits, 200 searches per class)"
zphrase=()
for q in "${phrase[@]}"; do zphrase+=("\"$q\""); done
"$ZBIN/zoektbench" -index "$WORK/zoekt-index" -label identifier "${ident[@]}" 2>/dev/null
"$ZBIN/zoektbench" -index "$WORK/zoekt-index" -label phrase "${zphrase[@]}" 2>/dev/null
"$ZBIN/zoektbench" -index "$WORK/zoekt-index" -label natural "${natural[@]}" 2>/dev/null
echo "  (zoekt ANDs the words of a natural question as substrings: most of those find nothing)"

for tool in rg zoekt; do
	log "query latency per process (start-up included): $tool (ms, p50 over 10 queries x 3)"
	for class in ident phrase natural; do
		declare -n qs=$class
		for rep in 1 2 3; do
			for q in "${qs[@]}"; do
				[ "$class" = phrase ] && [ "$tool" = zoekt ] && q="\"$q\""
				t0=$(date +%s%N)
				if [ "$tool" = rg ]; then rgq "$q"; else zq "$q"; fi
				t1=$(date +%s%N)
				ms "$t0" "$t1"
			done
		done | p50 | sed "s/^/  $class p50 /"
	done
done

log "retrieval quality (search/testdata/queries.txt)"
env CAIRN_BENCH_CORPUS="$CORPUS" CAIRN_BENCH_STATE="$STATE" "$WORK/search.test" -test.run 'TestRetrievalQuality' -test.v |
	sed -n '/retrieval quality/,/^---/p'
log "done (load now: $(cut -d' ' -f1-3 /proc/loadavg))"
