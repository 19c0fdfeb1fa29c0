# Sourced by the benchmark scripts: with --write-docs (or CAIRN_BENCH_WRITE_DOCS=1)
# a script replaces its own section of docs/benchmarks.md with the run's results,
# so the figures in the docs are the ones a script printed, with the date, commit,
# machine, load and exact command beside them. Without the flag nothing in the
# tree changes.
#
# A section is everything between two marker lines:
#   <!-- bench:NAME:begin -->
#   <!-- bench:NAME:end -->
# The markers stay; what lies between them is replaced as a whole.
#
#   source scripts/bench-docs.sh
#   bench_docs_init "$0" "$@"        # sets bench_args (the arguments without --write-docs)
#   set -- "${bench_args[@]}"
#   ...
#   bench_docs_write NAME BODY_FILE  # no-op unless --write-docs was given

bench_docs_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# bench_docs_init SCRIPT ARGS...: remembers the command as run and the load at
# the start, and takes --write-docs out of the arguments (into bench_args).
bench_docs_init() {
	local script=$1 a
	shift
	bench_args=()
	bench_docs_enabled=${CAIRN_BENCH_WRITE_DOCS:-0}
	for a in "$@"; do
		if [ "$a" = --write-docs ]; then bench_docs_enabled=1; else bench_args+=("$a"); fi
	done
	local v envs=""
	for v in ZOEKT_BIN CAIRN_BENCH_SCALE CAIRN_BENCH_CORPUS CAIRN_BIN; do
		if [ -n "${!v:-}" ]; then envs+="$v=$(printf '%q' "${!v}") "; fi
	done
	bench_docs_command="$envs$(printf '%q' "${script#"$bench_docs_root"/}")"
	[ $# -gt 0 ] && bench_docs_command+=" $(printf '%q ' "$@")"
	bench_docs_command=${bench_docs_command% }
	bench_docs_load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
}

# bench_docs_section_check FILE NAME: the file has exactly one begin and one
# end marker for NAME, begin first.
bench_docs_section_check() {
	local file=$1 name=$2 b e
	b=$(grep -nxF "<!-- bench:$name:begin -->" "$file" | cut -d: -f1) || true
	e=$(grep -nxF "<!-- bench:$name:end -->" "$file" | cut -d: -f1) || true
	if [ "$(printf '%s\n' "$b" | grep -c .)" != 1 ] || [ "$(printf '%s\n' "$e" | grep -c .)" != 1 ] || [ "$b" -ge "$e" ]; then
		echo "bench-docs: $file needs exactly one '<!-- bench:$name:begin -->' line before one '<!-- bench:$name:end -->' line" >&2
		return 1
	fi
}

# bench_docs_replace FILE NAME BODY_FILE: replaces section NAME of FILE with
# the contents of BODY_FILE (the markers stay). The file is rewritten whole
# through a temporary file, or left as it was on any error.
bench_docs_replace() {
	local file=$1 name=$2 body=$3 tmp
	bench_docs_section_check "$file" "$name" || return 1
	tmp=$(mktemp "$file.XXXXXX") || return 1
	if awk -v begin="<!-- bench:$name:begin -->" -v end="<!-- bench:$name:end -->" -v body="$body" '
		$0 == begin { print; while ((getline line < body) > 0) print line; skip = 1; next }
		$0 == end   { skip = 0 }
		!skip       { print }
	' "$file" >"$tmp"; then
		chmod --reference="$file" "$tmp" 2>/dev/null || true
		mv "$tmp" "$file"
	else
		rm -f "$tmp"
		return 1
	fi
}

# bench_docs_write NAME BODY_FILE: with --write-docs, section NAME of
# docs/benchmarks.md (or $CAIRN_BENCH_DOCS) becomes a header naming when,
# where and how the run was made, followed by BODY_FILE (Markdown).
bench_docs_write() {
	local name=$1 body=$2
	[ "${bench_docs_enabled:-0}" = 1 ] || return 0
	local file=${CAIRN_BENCH_DOCS:-$bench_docs_root/docs/benchmarks.md}
	local commit dirty="" section
	commit=$(git -C "$bench_docs_root" rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [ -n "$(git -C "$bench_docs_root" status --porcelain --untracked-files=no -- . ':!docs/benchmarks.md' 2>/dev/null)" ]; then
		dirty=" (with uncommitted changes)"
	fi
	section=$(mktemp) || return 1
	{
		echo
		echo "Written by \`$bench_docs_command\` on $(date -u '+%Y-%m-%d %H:%M UTC') at \`$commit\`$dirty;"
		echo "$(nproc) cores, $(awk '/MemTotal/{printf "%.0f", $2/1048576}' /proc/meminfo) GB, $(uname -sr);" \
			"load $bench_docs_load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end."
		echo
		cat "$body"
		echo
	} >"$section"
	if bench_docs_replace "$file" "$name" "$section"; then
		echo "bench-docs: wrote section $name of $file" >&2
	else
		rm -f "$section"
		return 1
	fi
	rm -f "$section"
}
