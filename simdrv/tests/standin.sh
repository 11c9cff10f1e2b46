# Sourced by the VM tests: the stand-in driver's two modules in and out, in the order the
# kernel demands of NVIDIA's (nvidia-uvm.ko uses nvidia.ko's exports: in after it, out
# before it).
SIMDRV=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# standin_load PARAMS...: nvidia.ko with PARAMS, then nvidia-uvm.ko.
standin_load() { insmod "$SIMDRV/nvidia.ko" "$@" && insmod "$SIMDRV/nvidia-uvm.ko"; }
standin_unload() { rmmod nvidia_uvm nvidia; }
