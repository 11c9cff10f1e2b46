#!/usr/bin/env bash
# The stand-in NVIDIA driver on the host: the module builds, its pure logic's unit test
# and a bounded fuzz run pass under ASan/UBSan, and its ABI equals NVIDIA's headers of
# 535.261.03 and 550.163.01 (simdrv/conformance/run.sh, downloads them once). The
# real-GPU tracer's parts build and its report reads a trace as it should
# (test/gpu/rmtrace-test.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
make -C simdrv
make -C simdrv check FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
simdrv/conformance/run.sh
bash test/gpu/rmtrace-test.sh
