//go:build !unix

package proc

import (
	"os/exec"
	"syscall"
)

func setGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if sig == syscall.SIGKILL || sig == syscall.SIGTERM {
		cmd.Process.Kill()
	}
}
