#!/bin/sh
# Stage 2, inside the overlaid host root: a fresh system view, the extra shares, then the
# command. Its output goes to ttyS0 (the host's stdout); the kernel console is ttyS1.
ctl=/run/cgpu-vm
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin
export HOME=/root TERM=dumb
# reboot(2) straight from busybox: nothing left to read from 9p while the VM stops.
finish() { echo "$1" >"$ctl/rc"; sync; exec busybox poweroff -f; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
# devtmpfs has no /dev/fd (udev makes it on a real system); bash's <(...) and DKMS need it.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mount -t tmpfs tmpfs /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup
# The first memory cgroup switches on the kernel-memory accounting key, which patches a
# call site in every slab allocation. Under QEMU TCG that patch, made by runc for the first
# container while the other vCPU allocated, once left a vCPU looping at the patched site
# (soft lockup at __kmem_cache_alloc_node, no cgpu_km code patched: docs/kmod.md, "Open:
# patching a hot entry in the test VM"). Made here, with nothing else running, it is made
# once and early; the key stays on after the cgroup goes.
if echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	mkdir /sys/fs/cgroup/cgpu-vm-boot && rmdir /sys/fs/cgroup/cgpu-vm-boot
	echo -memory >/sys/fs/cgroup/cgroup.subtree_control
fi
# The host's /tmp holds its own files and sockets: hide them.
for d in /tmp /var/tmp; do mount -t tmpfs -o mode=1777 tmpfs "$d"; done
mount -t tmpfs -o mode=0700 tmpfs /root
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
echo 1 >/proc/sys/kernel/sysrq
echo 60 >/proc/sys/kernel/hung_task_timeout_secs
hostname cgpu-vm
ip link set lo up 2>/dev/null || busybox ifconfig lo 127.0.0.1 up
# The working directory, read-only from the host, writable in the guest through an overlay
# whose writes stay in the VM, like the rest of the root.
cwd=$(cat "$ctl/cwd")
mkdir -p /run/cgpu-cwd/lower /run/cgpu-cwd/upper /run/cgpu-cwd/work "$cwd"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro,cache=loose cwd /run/cgpu-cwd/lower &&
	mount -t overlay -o lowerdir=/run/cgpu-cwd/lower,upperdir=/run/cgpu-cwd/upper,workdir=/run/cgpu-cwd/work overlay "$cwd" ||
	{ echo "cgpu-vm: cannot mount the working directory $cwd" >/dev/ttyS0; finish 125; }
cd "$cwd" || finish 125
i=0
while read -r path; do
	mkdir -p "$path"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 "share$i" "$path" ||
		{ echo "cgpu-vm: cannot mount share $path" >/dev/ttyS0; finish 125; }
	i=$((i + 1))
done <"$ctl/shares"
echo "cgpu-vm: kernel $(uname -r) up after $(cut -d' ' -f1 /proc/uptime) s" >/dev/ttyS0
bash -c "$(cat "$ctl/cmd")" </dev/null >/dev/ttyS0 2>&1
rc=$?
finish "$rc"
