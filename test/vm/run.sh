#!/usr/bin/env bash
# Boots Debian's stock kernel under QEMU (TCG) over the host's own root file system and
# runs one shell command inside it. See "The VM test harness" in docs/kmod.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() {
	cat >&2 <<EOT
usage: $0 [--mem MB] [--cpus N] [--timeout S] [--icount SHIFT] [--share DIR]... [--log FILE] -- COMMAND...
  Runs COMMAND (a shell command line) in a QEMU VM booted from the Debian kernel with the
  host root mounted read-only under a tmpfs overlay; cwd is the current directory.
  --share DIR  mount host DIR read-write at the same path in the VM (repeatable)
  --log FILE   keep the guest kernel log in FILE (default: a temporary file)
  --icount SHIFT  the guest's clocks count instructions, 2^SHIFT ns each (QEMU -icount):
               what it times while it computes the host's load does not change; needs
               --cpus 1
  Exits with COMMAND's status; 125 if the VM failed, 124 on timeout, 126 if the kernel log
  shows a WARNING, BUG, Oops, hung task, lockdep or kmemleak report.
  Env: CGPU_VM_KVER (kernel version, default the newest /boot/vmlinuz-*), CGPU_VM_QUIET=1
  (no guest output prefix), CGPU_VM_LOCK (a lock file: wait for it before booting).
EOT
	exit 2
}
mem=2048 cpus=2 timeout_s=1200 log= shares=() icount=
while [ $# -gt 0 ]; do
	case "$1" in
	--mem) mem=${2:?}; shift 2 ;;
	--cpus) cpus=${2:?}; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--share) shares+=("$(cd "${2:?}" && pwd)"); shift 2 ;;
	--log) log=${2:?}; shift 2 ;;
	--icount) icount=${2:?}; shift 2 ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ $# -gt 0 ] || usage
if [ -n "$icount" ]; then
	[[ "$icount" =~ ^([0-9]|10)$ ]] || { echo "run.sh: --icount: not a shift from 0 to 10: $icount" >&2; exit 2; }
	# QEMU 7.2 under -icount never finishes bringing up a second vCPU (the boot stops
	# at "smp: Bringing up secondary CPUs").
	[ "$cpus" = 1 ] || { echo "run.sh: --icount needs --cpus 1 (got $cpus)" >&2; exit 2; }
fi
for n in "$mem" "$cpus" "$timeout_s"; do
	[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: not a positive number: $n" >&2; exit 2; }
done

# Several runs on one machine (developers' sessions beside a test run) may take turns:
# with CGPU_VM_LOCK set to a file, each VM waits for that lock first.
if [ -n "${CGPU_VM_LOCK:-}" ]; then
	exec 8>>"$CGPU_VM_LOCK"
	flock 8
fi

kver=${CGPU_VM_KVER:-$(cd /boot && ls vmlinuz-* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -1)}
kernel=/boot/vmlinuz-$kver moddir=/lib/modules/$kver
[ -r "$kernel" ] && [ -d "$moddir" ] ||
	{ echo "run.sh: no kernel image $kernel with modules in $moddir (linux-image-amd64)" >&2; exit 125; }
busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || readelf -l "$busybox" 2>/dev/null | grep -q INTERP; then
	echo "run.sh: needs a static busybox (busybox-static)" >&2; exit 125
fi

work=$(mktemp -d /tmp/cgpu-vm.XXXXXX)
qpid=
cleanup() { [ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
ctl=$work/ctl
mkdir -p "$ctl" "$work/initramfs/"{bin,proc,sys,dev} "$work/initramfs/lib/modules/$kver"
[ -n "$log" ] || log=$work/kernel.log
: >"$log"

# The initramfs holds busybox, its init and the modules that reach the host root.
cp "$busybox" "$work/initramfs/bin/busybox"
install -m 0755 "$here/initramfs-init.sh" "$work/initramfs/init"
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
	netfs fscache 9pnet 9pnet_virtio 9p overlay; do
	f=$(find "$moddir/kernel" -name "$m.ko*" | head -1)
	[ -n "$f" ] || { echo "run.sh: module $m missing from $moddir" >&2; exit 125; }
	case "$f" in
	*.ko) cp "$f" "$work/initramfs/lib/modules/$kver/$m.ko" ;;
	*.ko.xz) xz -dc "$f" >"$work/initramfs/lib/modules/$kver/$m.ko" ;;
	*.ko.zst) zstd -qdc "$f" >"$work/initramfs/lib/modules/$kver/$m.ko" ;;
	*) echo "run.sh: cannot unpack $f" >&2; exit 125 ;;
	esac
done
(cd "$work/initramfs" && find . | cpio -o -H newc --quiet) >"$work/initrd"

cp "$here/guest.sh" "$ctl/guest.sh"
printf '%s\n' "$*" >"$ctl/cmd"
pwd >"$ctl/cwd"
# The working directory travels as a share of its own: the guest hides the host's /tmp,
# /var/tmp and /root under fresh tmpfs, and a checkout may live in any of them.
virtfs=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$ctl,mount_tag=cgpuctl,security_model=none,multidevs=remap"
	-virtfs "local,path=$(pwd),mount_tag=cwd,security_model=none,readonly=on,multidevs=remap")
: >"$ctl/shares"
for i in "${!shares[@]}"; do
	printf '%s\n' "${shares[$i]}" >>"$ctl/shares"
	virtfs+=(-virtfs "local,path=${shares[$i]},mount_tag=share$i,security_model=none,multidevs=remap")
done

# ttyS0 carries the command's output, ttyS1 the kernel console (kept whole in $log even
# if the guest dies).
prefix='s/\r$//'
[ "${CGPU_VM_QUIET:-}" = 1 ] || prefix='s/\r$//; s/^/vm| /'
start=$(date +%s)
set +e
accel=(-accel tcg,thread=multi)
[ -z "$icount" ] || accel=(-accel tcg -icount "shift=$icount")
timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 "${accel[@]}" -m "$mem" \
	-smp "$cpus" -cpu max -nodefaults -no-reboot -display none -monitor none \
	-serial stdio -serial "file:$log" \
	-kernel "$kernel" -initrd "$work/initrd" \
	-append "console=ttyS1 loglevel=7 panic=-1 oops=panic rdinit=/init" \
	"${virtfs[@]}" </dev/null 2>"$work/qemu.err" | sed -u "$prefix"
qrc=${PIPESTATUS[0]}
set -e
elapsed=$(( $(date +%s) - start ))

# The boot itself is noise: show the log from the hand-over to the initramfs on.
show_log() {
	local whole="whole log: $log"
	[ "$log" != "$work/kernel.log" ] || whole="--log FILE keeps the whole log"
	echo "---- guest kernel log from /init on ($whole)" >&2
	sed -n '/Run \/init as init process/,$p' "$log" | sed 's/\r$//; s/^/kernel| /' >&2
}
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "run.sh: VM timed out after ${timeout_s}s" >&2; show_log; exit 124
fi
if [ ! -s "$ctl/rc" ]; then
	echo "run.sh: the VM stopped without a result (qemu status $qrc)" >&2
	cat "$work/qemu.err" >&2; show_log; exit 125
fi
rc=$(cat "$ctl/rc")
bad='WARNING:|BUG:|Oops|hung_task|blocked for more than|possible circular locking|lockdep|unreferenced object|kmemleak|general protection fault|Kernel panic|UBSAN:|KASAN:'
if grep -Eq "$bad" "$log"; then
	echo "run.sh: the guest kernel log reports a problem:" >&2
	grep -E "$bad" "$log" | sed 's/^/  /' >&2; show_log; exit 126
fi
echo "run.sh: guest command exited $rc (${elapsed}s in the VM)" >&2
[ "$rc" = 0 ] || show_log
exit "$rc"
