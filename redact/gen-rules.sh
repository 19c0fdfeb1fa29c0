#!/bin/sh
# Regenerates gitleaks-rules.json (and gitleaks.LICENSE) from the default
# configuration embedded in gitleaks at the pinned version. Neither gitleaks
# nor the TOML parser become dependencies of the cairn module: the module is
# only downloaded into the module cache, and tomljson runs as `go run pkg@v`.
set -eu
GITLEAKS_VERSION=v8.30.1
GOTOML_VERSION=v2.4.3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=$(cd "$tmp" && go mod init tmp >/dev/null 2>&1 &&
	go mod download -json "github.com/zricethezav/gitleaks/v8@$GITLEAKS_VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
test -f "$dir/config/gitleaks.toml"
(cd "$tmp" && go run "github.com/pelletier/go-toml/v2/cmd/tomljson@$GOTOML_VERSION" "$dir/config/gitleaks.toml") >"$here/gitleaks-rules.json"
cp "$dir/LICENSE" "$here/gitleaks.LICENSE"
chmod 644 "$here/gitleaks.LICENSE"
