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

	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// Reader is an open /dev/cgpu.
type Reader struct{ f *os.File }

// Open opens /dev/cgpu read-write, as the ioctls require.
func Open() (*Reader, error) {
	f, err := os.OpenFile(uapi.DevicePath, os.O_RDWR, 0)
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
func (r *Reader) Read(gpu int, id string) (uapi.InstStat, error) {
	if len(id) != uapi.IDLen {
		return uapi.InstStat{}, fmt.Errorf("%q: %w", id, ErrBadID)
	}
	if gpu < 0 || gpu > 1<<31 {
		return uapi.InstStat{}, fmt.Errorf("GPU %d: %w", gpu, unix.ENODEV)
	}
	s := uapi.InstStat{Abi_version: uapi.ABIVersion, Gpu: uint32(gpu)}
	for i := range len(id) {
		s.Id[i] = int8(id[i])
	}
	conn, err := r.f.SyscallConn()
	if err != nil {
		return uapi.InstStat{}, err
	}
	var errno unix.Errno
	if err := conn.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, uapi.IocInstStat, uintptr(unsafe.Pointer(&s)))
	}); err != nil {
		return uapi.InstStat{}, err
	}
	if errno != 0 {
		return uapi.InstStat{}, fmt.Errorf("CGPU_IOC_INST_STAT of %s on GPU %d: %w", id, gpu, errno)
	}
	return s, nil
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }
