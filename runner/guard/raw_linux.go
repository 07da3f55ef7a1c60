package guard

import (
	"syscall"
	"unsafe"
)

// The reads of a sample are made with RawSyscall: /proc reads do not block, and a
// plain syscall lets the Go scheduler hand the thread's P to another thread, waking it
// for nothing at every sample.
func rawPread(fd int, b []byte, off int64) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r, _, e := syscall.RawSyscall6(syscall.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawGetdents(fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawOpen(path string, flags int) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fdcwd := atFDCWD
	r, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(fdcwd), uintptr(unsafe.Pointer(p)), uintptr(flags), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

const atFDCWD = -100

func rawClose(fd int) {
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
}

func rawRewind(fd int) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_LSEEK, uintptr(fd), 0, 0); e != 0 {
		return e
	}
	return nil
}

// isProcess reports whether pid is a live process (a thread group's leader): tgkill
// with signal 0 finds it only then, and says EPERM for another user's.
func isProcess(pid int) bool {
	_, _, e := syscall.RawSyscall(syscall.SYS_TGKILL, uintptr(pid), uintptr(pid), 0)
	return e == 0 || e == syscall.EPERM
}
