#!/usr/bin/env bash
# Go: vet, every unit test, a bounded run of every fuzz target, and the plan benchmarks'
# figures (printed, not judged).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
# go-nvml's header marks many NVML calls deprecated; the warnings say nothing about us.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
fuzztime=${CGPU_FUZZTIME:-20s}

go vet ./...
go test -count=1 ./...

# Every Fuzz function of every package, each on its own for fuzztime.
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
	for fn in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		echo "--- fuzz $(dirname "$file") $fn ($fuzztime)"
		go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$fuzztime" "./$(dirname "$file")" 2>&1 | tail -n 3
		[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "10-go: $fn found a failure (see testdata/fuzz)" >&2; exit 1; }
	done
done

echo "--- plan benchmarks (16 GPUs x 25 instances)"
go test -run '^$' -bench . -benchtime 400x ./pkg/alloc ./pkg/register | grep -E '^Benchmark'
