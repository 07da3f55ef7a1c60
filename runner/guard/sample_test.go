package guard

import (
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/lablup/perfbot/runner/host"
)

func TestDefaultCompilerPattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(DefaultCompilerRE)
	for _, c := range []string{"cargo", "rustc", "clang", "clang++", "clang-18", "hipcc", "nvcc", "cc1", "cc1plus", "ld", "ld.lld", "ld.gold", "ld.bfd", "lld", "collect2"} {
		if !re.MatchString(c) {
			t.Errorf("%q is a compiler", c)
		}
	}
	// make/cmake/ninja are deliberately not compilers; partial matches do not count.
	for _, c := range []string{"make", "cmake", "ninja", "gcc-wrapper", "cargo-watch", "xld", "clang-", "rustc2", "mlxcel-bench-de", ""} {
		if re.MatchString(c) {
			t.Errorf("%q is not a compiler", c)
		}
	}
}

func TestApplyEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		EnvKFDDir: "/tmp/kfd", EnvLock: "/tmp/l.lock", EnvCompilerRE: "make|ninja", EnvLockHeld: " 1234 ",
	}
	o := DefaultOptions()
	if err := o.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if o.KFDDir != "/tmp/kfd" || o.LockPath != "/tmp/l.lock" || o.LockHeldBy != 1234 {
		t.Fatalf("options = %+v", o)
	}
	if !o.CompilerRE.MatchString("ninja") || o.CompilerRE.MatchString("ninja2") || o.CompilerRE.MatchString("cargo") {
		t.Fatalf("override pattern %q must fully match make|ninja only", o.CompilerRE)
	}
	for name, bad := range map[string]map[string]string{
		"pattern": {EnvCompilerRE: "(cargo"},
		"held":    {EnvLockHeld: "me"},
	} {
		o := DefaultOptions()
		err := o.ApplyEnv(func(k string) string { return bad[k] })
		if err == nil {
			t.Errorf("%s: bad value accepted", name)
		}
	}
}

// waitZombie blocks until child pid has exited without reaping it, so it stays a zombie.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	var info [128]byte
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, 1 /* P_PID */, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			t.Fatal(errno)
		}
		return
	}
}

// Holders are checked against the real /proc: a live process is one, a reaped pid or a
// zombie is not, and entries that are not pids are ignored.
func TestSamplerHolders(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	live := startProc(t, "sleep", "600")
	reaped := exec.Command("true")
	if err := reaped.Run(); err != nil {
		t.Fatal(err)
	}
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	waitZombie(t, zombie.Process.Pid)
	t.Cleanup(func() { zombie.Wait() })
	if p := procOf(t, zombie.Process.Pid); p.State != 'Z' {
		t.Fatalf("zombie state %c", p.State)
	}
	for _, pid := range []int{live.Process.Pid, reaped.Process.Pid, zombie.Process.Pid, os.Getpid()} {
		w.hold(t, pid)
	}
	if err := os.Mkdir(w.kfd+"/not-a-pid", 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := newSampler(host.Local(), w.kfd, regexp.MustCompile(noCompiler), 0, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	smp, err := s.sample(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	wantAll := []Holder{{PID: live.Process.Pid, Comm: "sleep"}, {PID: self, Comm: procOf(t, self).Comm}}
	if live.Process.Pid > self {
		wantAll[0], wantAll[1] = wantAll[1], wantAll[0]
	}
	if holderList(smp.GPU) != holderList(wantAll) {
		t.Errorf("GPU = %v, want %v", smp.GPU, wantAll)
	}
	// The guard itself is never foreign.
	if holderList(smp.ForeignGPU) != holderList([]Holder{{PID: live.Process.Pid, Comm: "sleep"}}) {
		t.Errorf("foreign = %v, want only the live sleep", smp.ForeignGPU)
	}
	if !smp.Contended() {
		t.Error("a live foreign holder must contend")
	}
}

// ancestorChain accepts only real ancestors.
func TestAncestorChain(t *testing.T) {
	t.Parallel()
	s, err := newSampler(host.Local(), t.TempDir(), regexp.MustCompile(noCompiler), 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if s.ancestorChain(os.Getppid()) == nil {
		t.Error("the parent is an ancestor")
	}
	other := startProc(t, "sleep", "600")
	s2, _ := newSampler(host.Local(), t.TempDir(), regexp.MustCompile(noCompiler), 0, time.Second)
	defer s2.close()
	if s2.ancestorChain(other.Process.Pid) != nil {
		t.Error("a child is not an ancestor")
	}
	if s2.ancestorChain(1<<30) != nil {
		t.Error("a missing pid is not an ancestor")
	}
}
