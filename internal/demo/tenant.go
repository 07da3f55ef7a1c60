package demo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// tenant is the other GPU user the demo plants on the shared host: a real process
// whose pid the fake KFD folder lists, as amdgpu lists every process holding the GPU.
// The guard sees it during a profiled run, rejects that attempt and reruns it once
// the tenant has gone.
type tenant struct {
	kfd  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done bool
}

// arrive starts the tenant, once: it reports whether this call started it.
func (t *tenant) arrive(ctx context.Context) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cmd != nil || t.done {
		return false, nil
	}
	cmd := exec.CommandContext(ctx, "sleep", "300")
	// Its own process group and a parent-death signal: the tenant never outlives the
	// demo, even when the demo is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("starting the planted GPU tenant: %w", err)
	}
	t.cmd = cmd
	if err := os.Mkdir(filepath.Join(t.kfd, strconv.Itoa(cmd.Process.Pid)), 0o755); err != nil {
		t.leaveLocked()
		return false, fmt.Errorf("listing the planted GPU tenant in the fake KFD folder: %w", err)
	}
	return true, nil
}

// pid is the tenant's pid, 0 before it arrived.
func (t *tenant) pid() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cmd == nil {
		return 0
	}
	return t.cmd.Process.Pid
}

// leave stops the tenant and takes it off the KFD list; later arrivals are ignored.
func (t *tenant) leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.leaveLocked()
}

func (t *tenant) leaveLocked() {
	t.done = true
	if t.cmd == nil {
		return
	}
	os.Remove(filepath.Join(t.kfd, strconv.Itoa(t.cmd.Process.Pid)))
	t.cmd.Process.Kill()
	t.cmd.Wait() //nolint:errcheck // killed on purpose
	t.cmd = nil
}
