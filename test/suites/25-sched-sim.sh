#!/usr/bin/env bash
# The compute scheduler in user space (kmod/sched): unit tests under ASan/UBSan, a short
# fuzz run, cgs.c built as kernel C, then the benchmark tables, which fail the suite
# when a target is missed. Figures: docs/scheduler.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -C kmod/sched check
make -C kmod/sched bench
