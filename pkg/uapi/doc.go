// Package uapi is the Go side of the kernel module's ABI headers, kmod/uapi/*.h: the
// /dev/cgpu ioctl structs and numbers, and the /proc/cgpu_km tree's ranges, defaults and
// policy numbers. Its definitions are generated from the headers by cgo -godefs (the
// names Go uses are listed in types_linux.go), never written by hand, so Go and the
// kernel cannot disagree; the package's test fails when the committed file is not what
// the headers give today.
package uapi

//go:generate sh mkztypes.sh ztypes_linux_$GOARCH.go
