# Sourced by the VM tests: this tree's stand-in modules (simdrv/*.ko, insmod; install.sh
# loads the installed ones with modprobe) in and out, in the order the kernel demands of
# NVIDIA's (nvidia-uvm.ko uses nvidia.ko's exports: in after it, out before it).
SIMDRV=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# simdrv_load PARAMS...: nvidia.ko with PARAMS, then nvidia-uvm.ko.
simdrv_load() { insmod "$SIMDRV/nvidia.ko" "$@" && insmod "$SIMDRV/nvidia-uvm.ko"; }
simdrv_unload() { rmmod nvidia_uvm nvidia; }
