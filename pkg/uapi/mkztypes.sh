#!/bin/sh
# mkztypes.sh OUT: writes to OUT the Go definitions cgo -godefs makes of types_linux.go
# over kmod/uapi. go generate runs it; the package's test runs it again and compares.
# cgo records its command line in what it writes and leaves objects in its working
# directory, so it runs in a scratch tree with this repository's relative paths: the
# output is the same whoever runs it, wherever the repository is.
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/pkg/uapi" "$tmp/kmod"
cp "$here/types_linux.go" "$tmp/pkg/uapi/"
ln -s "$here/../../kmod/uapi" "$tmp/kmod/uapi"
(cd "$tmp/pkg/uapi" && go tool cgo -godefs -- -I../../kmod/uapi types_linux.go >"$tmp/raw")
gofmt "$tmp/raw" >"$tmp/out"
mv "$tmp/out" "$out"
