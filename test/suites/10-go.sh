#!/usr/bin/env bash
# Go: vet, every unit test, a bounded run of every fuzz target, and the plan benchmarks'
# figures (printed, not judged).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
# go-nvml's header marks many NVML calls deprecated; the warnings say nothing about us.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
# A count, not a duration: with a duration Go's coordinator can race its own deadline and
# fail a target with a bare "context deadline exceeded" and no input (golang/go#75804,
# fixed only in Go 1.27); a count has no deadline to race. 300000 runs take 5-15 s here.
fuzztime=${CGPU_FUZZTIME:-300000x}

go vet ./...
go test -count=1 ./...

# One bounded fuzz run. Go's fuzzer can report "fuzzing process hung or terminated
# unexpectedly" when a worker misses its 10 s deadline on a loaded machine (golang/go#56238)
# and then saves an input that is not a failure: that input is run again as a plain test,
# and only when it passes is it dropped and the run repeated, once.
fuzz_once() { # dir fn
	local out
	out=$(go test -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" "./$1" 2>&1) && { tail -n 2 <<<"$out"; return 0; }
	echo "$out" | tail -n 30
	local saved
	saved=$(sed -n 's|.*Failing input written to \(testdata/fuzz/[^ ]*\).*|\1|p' <<<"$out" | head -n 1)
	grep -q 'fuzzing process hung or terminated unexpectedly' <<<"$out" || return 1
	if [ -n "$saved" ]; then
		go test -count=1 -run "^$2\$/$(basename "$saved")\$" "./$1" >/dev/null 2>&1 || return 1
		rm -f "$1/$saved"
	fi
	return 2
}
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
	dir=$(dirname "$file")
	for fn in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		echo "--- fuzz $dir $fn ($fuzztime)"
		rc=0; fuzz_once "$dir" "$fn" || rc=$?
		if [ "$rc" -eq 2 ]; then
			echo "--- fuzz $dir $fn: the fuzzer's worker stalled without a failing input; again"
			rc=0; fuzz_once "$dir" "$fn" || rc=$?
		fi
		[ "$rc" -eq 0 ] || { echo "10-go: $fn found a failure (see $dir/testdata/fuzz)" >&2; exit 1; }
	done
done

echo "--- plan benchmarks (16 GPUs x 25 instances)"
go test -run '^$' -bench . -benchtime 400x ./pkg/alloc ./pkg/register | grep -E '^Benchmark'
