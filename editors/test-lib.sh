# Shared setup of the editor suites (sourced by */test/run.sh): the cairn
# binary and a throwaway work area with a one-file Go workspace.

# cairn_bin sets CAIRN_BIN, building ./cmd/cairn of repo $1 into a new
# temporary directory when unset.
cairn_bin() {
  if [ -z "${CAIRN_BIN:-}" ]; then
    local dir
    dir=$(mktemp -d -t cairn-bin.XXXXXX)
    (cd "$1" && go build -o "$dir/cairn" ./cmd/cairn)
    CAIRN_BIN=$dir/cairn
  fi
  [ -x "$CAIRN_BIN" ] || { echo "CAIRN_BIN=$CAIRN_BIN is not an executable" >&2; exit 1; }
}

# make_work NAME sets work to a new directory holding home/, cache/, tmp/,
# state/ and ws/ (hello.go and go.mod); the caller writes script.yaml.
make_work() {
  work=$(mktemp -d -t "cairn-$1-test.XXXXXX")
  mkdir -p "$work/home" "$work/cache" "$work/tmp" "$work/state" "$work/ws"
  cat > "$work/ws/hello.go" <<'GO'
package main

import "fmt"

func main() {
	fmt.Println("Hello")
}
GO
  printf 'module example.com/hello\n\ngo 1.22\n' > "$work/ws/go.mod"
}
