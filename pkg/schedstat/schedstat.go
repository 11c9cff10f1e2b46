// Package schedstat reads cgpu_km's scheduler figures of any instance through
// CGPU_IOC_INST_STAT (kmod/uapi/cgpu_ioctl.h): GPU time its processes reported, time
// charged, slices granted and taken back, and the GPU time of the last complete second.
// Only the host's root may ask (CAP_SYS_ADMIN in the initial user namespace).
//
// A Reader holds /dev/cgpu open, and an open file keeps a hot update of the module
// waiting: open one per reading and close it at once.
package schedstat

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// DevicePath is CGPU_DEVICE_PATH.
	DevicePath = "/dev/cgpu"
	abiVersion = 1    // CGPU_ABI_VERSION
	iocMagic   = 0xC6 // CGPU_IOC_MAGIC
	idLen      = 12   // CGPU_ID_LEN
	// PolicyNative is the policy without slicing: nobody reports used time under it.
	PolicyNative = 5
)

// SchedStat is struct cgpu_sched_stat, field for field.
type SchedStat struct {
	ABIVersion uint32
	Slot       uint32
	GPU        uint32
	SchedID    uint32
	Policy     uint32
	Weight     uint32
	Waiting    uint32
	Holding    uint32
	QuantumNs  uint64
	GraceNs    uint64
	ChargedNs  uint64 // time held, drains included
	UsedNs     uint64 // GPU time its processes reported at slice ends
	PrioNs     uint64
	Grants     uint64
	Takebacks  uint64
}

// Stat is struct cgpu_inst_stat, field for field.
type Stat struct {
	ABIVersion uint32
	GPU        uint32
	ID         [idLen + 4]byte
	Sched      SchedStat
	// LastSecondUsedNs is UsedNs reported in the last complete second of the kernel's
	// monotonic clock; a slice counts whole in the second it ended in.
	LastSecondUsedNs uint64
	AgeNs            uint64 // since the instance was added
}

// StatSize is sizeof(struct cgpu_inst_stat); the test checks it against the header.
const StatSize = 128

// InstStatCmd is CGPU_IOC_INST_STAT: _IOWR(CGPU_IOC_MAGIC, 10, struct cgpu_inst_stat) in
// the generic encoding (x86, arm64): direction, size, type, number.
const InstStatCmd = (3 << 30) | (StatSize << 16) | (iocMagic << 8) | 10

var _ [StatSize - unsafe.Sizeof(Stat{})]byte // the size is StatSize...
var _ [unsafe.Sizeof(Stat{}) - StatSize]byte // ...exactly

// Reader is an open /dev/cgpu.
type Reader struct{ f *os.File }

// Open opens /dev/cgpu read-write, as the ioctls require.
func Open() (*Reader, error) {
	f, err := os.OpenFile(DevicePath, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &Reader{f: f}, nil
}

// ErrBadID is an id that is not an instance's name (12 lowercase hex digits).
var ErrBadID = errors.New("not a 12-digit instance id")

// Read asks for instance id on host GPU gpu. The kernel's errno comes back wrapped:
// EPERM (not the host's root), ENOENT (no such instance), ENODEV (no such GPU), ENOTTY
// (a module without the call).
func (r *Reader) Read(gpu int, id string) (Stat, error) {
	if len(id) != idLen {
		return Stat{}, fmt.Errorf("%q: %w", id, ErrBadID)
	}
	if gpu < 0 || gpu > 1<<31 {
		return Stat{}, fmt.Errorf("GPU %d: %w", gpu, unix.ENODEV)
	}
	s := Stat{ABIVersion: abiVersion, GPU: uint32(gpu)}
	copy(s.ID[:], id)
	conn, err := r.f.SyscallConn()
	if err != nil {
		return Stat{}, err
	}
	var errno unix.Errno
	if err := conn.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, InstStatCmd, uintptr(unsafe.Pointer(&s)))
	}); err != nil {
		return Stat{}, err
	}
	if errno != 0 {
		return Stat{}, fmt.Errorf("CGPU_IOC_INST_STAT of %s on GPU %d: %w", id, gpu, errno)
	}
	return s, nil
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }
