package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// The reaper is perfbot re-executed with envReaper set; its argv is
// [reaperArg0, path, command argv...], fd 3 reports to Start and fd 4 is its control
// pipe. A binary that imports this package turns into a reaper in init, before its own
// main (or TestMain) runs.
const (
	envReaper  = "PERFBOT_PROC_REAPER"
	reaperArg0 = "perfbot-reaper"
)

const prSetChildSubreaper = 36

type reaperConfig struct {
	parent int
	grace  time.Duration
}

func (c reaperConfig) String() string {
	return fmt.Sprintf("v1:%d:%d", c.parent, c.grace.Milliseconds())
}

func parseReaperConfig(v string) (reaperConfig, bool) {
	f := strings.Split(v, ":")
	if len(f) != 3 || f[0] != "v1" {
		return reaperConfig{}, false
	}
	parent, err1 := strconv.Atoi(f[1])
	ms, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || parent <= 0 || ms <= 0 {
		return reaperConfig{}, false
	}
	return reaperConfig{parent: parent, grace: time.Duration(ms) * time.Millisecond}, true
}

func init() {
	v, ok := os.LookupEnv(envReaper)
	if !ok {
		return
	}
	// Never passed on: the command, and a perfbot it runs, are not reapers.
	os.Unsetenv(envReaper)
	c, ok := parseReaperConfig(v)
	if !ok || len(os.Args) < 3 || os.Args[0] != reaperArg0 {
		return // not started by Start: carry on as the program itself
	}
	os.Exit(reap(c, os.Args[1], os.Args[2:]))
}

// reap runs the command and stays its parent, and the parent of every orphan below it,
// until Start's side releases it or goes away.
func reap(c reaperConfig, path string, argv []string) int {
	// It only waits: one P keeps the runtime from waking threads for nothing.
	runtime.GOMAXPROCS(1)
	status := os.NewFile(3, "status")
	ctl := os.NewFile(4, "control")
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	// Signals are caught, not ignored: an ignored signal would stay ignored in the
	// command. SIGTERM means perfbot died (the parent-death signal) or wants us gone.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintf(status, "failed %d\n", int(errno))
		return 1
	}
	if os.Getppid() != c.parent {
		return 1 // perfbot died before the parent-death signal was armed
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		errno, ok := err.(syscall.Errno)
		if !ok {
			errno = syscall.EINVAL
		}
		fmt.Fprintf(status, "failed %d\n", int(errno))
		return 0
	}
	fmt.Fprintf(status, "started %d\n", pid)

	leader := make(chan Status, 1)
	go func() { leader <- waitNoReap(pid) }()
	released := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(ctl)
		ok := false
		for sc.Scan() {
			if sc.Text() == "release" {
				ok = true
			}
		}
		released <- ok
	}()
	self := os.Getpid()
	leaderDone := false
	for {
		select {
		case st := <-leader:
			leaderDone = true
			fmt.Fprintf(status, "exited %d %d\n", st.Code, int(st.Signal))
		case <-chld:
			reapOrphans(pid)
		case <-term:
			abandon(self, pid, c.grace)
			return 0
		case ok := <-released:
			if !ok {
				abandon(self, pid, c.grace)
				return 0
			}
			// Start's side has stopped everything (Process.Wait cleans up first).
			if !leaderDone {
				<-leader
			}
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, 0, nil)
			return 0
		}
	}
}

// abandon stops everything below the reaper: perfbot is gone and nobody else will.
func abandon(self, leader int, grace time.Duration) {
	killBelow(self, leader, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && alive(self) {
		reapOrphans(0)
		time.Sleep(10 * time.Millisecond)
	}
	killBelow(self, leader, syscall.SIGKILL)
}

func alive(self int) bool {
	all, err := Scan()
	if err != nil {
		return false
	}
	for _, s := range Descendants(all, self) {
		if !s.Gone() {
			return true
		}
	}
	return false
}

// killBelow signals the leader's group and every live process below the reaper.
func killBelow(self, leader int, sig syscall.Signal) {
	syscall.Kill(-leader, sig)
	all, err := Scan()
	if err != nil {
		return
	}
	for _, s := range Descendants(all, self) {
		if !s.Gone() {
			Kill(Member{PID: s.PID, Start: s.Start}, sig)
		}
	}
}

// reapOrphans reaps exited children other than the leader, which is left for Wait:
// unreaped, its pid and so its process group id cannot be reused. waitid finds the
// first exited child; once the leader has exited it is that one, and orphans that exit
// later wait for the reaper's own exit (a zombie holds nothing but its pid).
func reapOrphans(leader int) {
	for {
		var info [128]byte // siginfo_t
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, 0 /* P_ALL */, 0,
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOHANG|syscall.WNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		pid := int(*(*int32)(unsafe.Pointer(&info[siginfoUnion()])))
		if errno != 0 || pid == 0 || pid == leader {
			return
		}
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// siginfoUnion is the offset of si_pid in siginfo_t: after si_signo, si_errno and
// si_code (int32 each), aligned to a pointer.
func siginfoUnion() uintptr {
	ptr := unsafe.Sizeof(uintptr(0))
	return (12 + ptr - 1) &^ (ptr - 1)
}

// waitNoReap waits for pid to exit without reaping it (waitid with WNOWAIT).
func waitNoReap(pid int) Status {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, 1 /* P_PID */, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return Status{Code: -1, Signal: syscall.SIGKILL}
		}
		break
	}
	// siginfo_t: si_code at 8; in the union si_pid, si_uid, si_status.
	code := *(*int32)(unsafe.Pointer(&info[8]))
	st := int(*(*int32)(unsafe.Pointer(&info[siginfoUnion()+8])))
	const cldExited = 1
	if code == cldExited {
		return Status{Code: st}
	}
	return Status{Code: -1, Signal: syscall.Signal(st)}
}
