#!/usr/bin/env bash
# cgpu_km's pure logic in user space: unit tests and a bounded fuzz run, both under
# ASan and UBSan (kmod/Makefile); then that the module's files call downward only
# (kmod/tests/layers.sh, docs/kmod.md "Layers").
set -euo pipefail
make -C kmod check FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
bash kmod/tests/layers.sh
