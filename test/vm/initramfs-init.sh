#!/bin/busybox sh
# PID 1 of the initramfs: mount the host root (9p, read-only) under a tmpfs overlay and
# hand over to guest.sh inside it. Every failure powers off, so the host sees no rc file
# and reports the boot as failed instead of waiting for its timeout.
/bin/busybox --install -s /bin
export PATH=/bin
die() { echo "cgpu-vm init: $*"; poweroff -f; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
kver=$(uname -r)
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
	netfs fscache 9pnet 9pnet_virtio 9p overlay; do
	insmod "/lib/modules/$kver/$m.ko" || die "insmod $m failed"
done
opts=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /lower /rw /newroot
mount -t 9p -o "$opts,ro,cache=loose" hostroot /lower || die "mounting the host root failed"
mount -t tmpfs -o mode=0755 rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
	die "overlay mount failed"
# The host's /run holds its daemons' pid files and sockets: start from an empty one.
mount -t tmpfs -o mode=0755 run /newroot/run
mkdir -p /newroot/run/cgpu-vm
mount -t 9p -o "$opts" cgpuctl /newroot/run/cgpu-vm || die "mounting the control share failed"
umount /proc /sys /dev
# switch_root, not chroot: in a chroot the kernel refuses new user namespaces, and
# runc's pivot_root needs a root that is a real mount.
exec switch_root /newroot /bin/sh /run/cgpu-vm/guest.sh
