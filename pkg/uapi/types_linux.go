//go:build ignore

// The input of ztypes_linux_$GOARCH.go: the parts of kmod/uapi/*.h that Go uses. Add a
// name here and run go generate; never edit the output.

package uapi

/*
#include "cgpu_ioctl.h"
*/
import "C"

// The /dev/cgpu ABI (cgpu_ioctl.h).
const (
	ABIVersion = C.CGPU_ABI_VERSION
	DevicePath = C.CGPU_DEVICE_PATH
	MaxGPUs    = C.CGPU_MAX_GPUS
	// IocInstStat encodes the size of InstStat: the kernel refuses any other.
	IocInstStat = C.CGPU_IOC_INST_STAT
)

// SchedStat is the scheduler's view of one instance on one GPU.
type SchedStat C.struct_cgpu_sched_stat

// InstStat is the argument of IocInstStat.
type InstStat C.struct_cgpu_inst_stat

// The /proc/cgpu_km tree's ranges, defaults and policy numbers (cgpu_procfs.h).
const (
	IDLen     = C.CGPU_ID_LEN
	FullIDLen = C.CGPU_FULL_ID_LEN
	MaxBytes  = C.CGPU_MAX_BYTES

	MaxInstMin     = C.CGPU_MAX_INST_MIN
	MaxInstMax     = C.CGPU_MAX_INST_MAX
	MaxInstDefault = C.CGPU_MAX_INST_DEFAULT
	WeightDefault  = C.CGPU_WEIGHT_DEFAULT

	PolicyFair    = C.CGPU_POLICY_FAIR
	PolicyPreempt = C.CGPU_POLICY_PREEMPT
	PolicyWeight  = C.CGPU_POLICY_WEIGHT
	PolicyFixed   = C.CGPU_POLICY_FIXED
	PolicySoft    = C.CGPU_POLICY_SOFT
	PolicyNative  = C.CGPU_POLICY_NATIVE
	PolicyMax     = C.CGPU_POLICY_MAX
	PolicyDefault = C.CGPU_POLICY_DEFAULT

	PrioRatioMin     = C.CGPU_PRIO_RATIO_MIN
	PrioRatioMax     = C.CGPU_PRIO_RATIO_MAX
	PrioRatioDefault = C.CGPU_PRIO_RATIO_DEFAULT
)
