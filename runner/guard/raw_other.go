//go:build !linux

package guard

import "syscall"

func rawPread(fd int, b []byte, off int64) (int, error) { return syscall.Pread(fd, b, off) }

func rawGetdents(fd int, b []byte) (int, error) { return syscall.ReadDirent(fd, b) }

func rawOpen(path string, flags int) (int, error) { return syscall.Open(path, flags, 0) }

func rawClose(fd int) { syscall.Close(fd) }

func rawRewind(fd int) error {
	_, err := syscall.Seek(fd, 0, 0)
	return err
}

func isProcess(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
