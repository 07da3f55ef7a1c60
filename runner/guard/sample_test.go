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

func TestParseStat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		line string
		want proc
		bad  bool
	}{
		{
			name: "plain",
			line: "3292996 (mlxcel-bench-de) R 3292990 3292990 1200 0 -1 4194560 5 0 0 0 1234 56 0 0 20 0 9 0 987654 1 2 3\n",
			want: proc{pid: 3292996, comm: "mlxcel-bench-de", state: 'R', ppid: 3292990, pgrp: 3292990, sid: 1200, ticks: 1290, start: 987654},
		},
		{
			name: "comm with spaces and parentheses",
			line: "42 (a) b (c)) S 1 42 42 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 55 0",
			want: proc{pid: 42, comm: "a) b (c)", state: 'S', ppid: 1, pgrp: 42, sid: 42, ticks: 10, start: 55},
		},
		{
			name: "zombie",
			line: "7 (sleep) Z 6 6 6 0 -1 4227084 0 0 0 0 0 0 0 0 20 0 1 0 99 0",
			want: proc{pid: 7, comm: "sleep", state: 'Z', ppid: 6, pgrp: 6, sid: 6, start: 99},
		},
		{
			name: "kernel thread",
			line: "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 3 0",
			want: proc{pid: 2, comm: "kthreadd", state: 'S', kthread: true, ticks: 1, start: 3},
		},
		{name: "truncated", line: "7 (sleep) S 6 6", bad: true},
		{name: "no comm", line: "7 sleep S 6 6 6 0", bad: true},
		{name: "bad number", line: "7 (sleep) S x 6 6 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0", bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.line), map[string]string{})
			if tc.bad {
				if err == nil {
					t.Fatalf("parsed %q as %+v, want an error", tc.line, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseStat = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

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
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
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
	if p := procOf(t, zombie.Process.Pid); p.state != 'Z' {
		t.Fatalf("zombie state %c", p.state)
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
	wantAll := []Holder{{live.Process.Pid, "sleep"}, {self, procOf(t, self).comm}}
	if live.Process.Pid > self {
		wantAll[0], wantAll[1] = wantAll[1], wantAll[0]
	}
	if holderList(smp.GPU) != holderList(wantAll) {
		t.Errorf("GPU = %v, want %v", smp.GPU, wantAll)
	}
	// The guard itself is never foreign.
	if holderList(smp.ForeignGPU) != holderList([]Holder{{live.Process.Pid, "sleep"}}) {
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
	if !s.ancestorChain(os.Getppid()) {
		t.Error("the parent is an ancestor")
	}
	other := startProc(t, "sleep", "600")
	s2, _ := newSampler(host.Local(), t.TempDir(), regexp.MustCompile(noCompiler), 0, time.Second)
	defer s2.close()
	if s2.ancestorChain(other.Process.Pid) {
		t.Error("a child is not an ancestor")
	}
	if s2.ancestorChain(1 << 30) {
		t.Error("a missing pid is not an ancestor")
	}
}
