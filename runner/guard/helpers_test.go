package guard

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/linestest"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/proc"
)

// The test binary doubles as helper programs (a guard process to signal, a nested guard,
// a CPU burner, a report of the scanner's descriptor budget), chosen by
// GUARD_TEST_HELPER.
func TestMain(m *testing.M) {
	switch os.Getenv("GUARD_TEST_HELPER") {
	case "":
		os.Exit(m.Run())
	case "guard":
		os.Exit(helperGuard())
	case "burn":
		helperBurn()
	case "fdbudget":
		s, err := newProcScanner(host.Local(), false)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Println(s.maxFD)
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper")
		os.Exit(3)
	}
}

// helperConfig is how a test configures the guard helper (JSON in GUARD_TEST_CONFIG).
type helperConfig struct {
	Lock        string `json:"lock"`
	KFD         string `json:"kfd"`
	Log         string `json:"log"`
	IdleMS      int    `json:"idle_ms"`
	MaxWaitMS   int    `json:"max_wait_ms"`
	MaxAttempts int    `json:"max_attempts"`
	GraceMS     int    `json:"grace_ms"`
	Hold        bool   `json:"hold"`
}

// helperGuard is a minimal perfbot main around Run: signal-aware context, env overrides.
func helperGuard() int {
	var c helperConfig
	if err := json.Unmarshal([]byte(os.Getenv("GUARD_TEST_CONFIG")), &c); err != nil {
		fmt.Fprintln(os.Stderr, "helper config:", err)
		return 3
	}
	argv := os.Args[1:]
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	o := DefaultOptions()
	o.LockPath, o.KFDDir, o.LogPath = c.Lock, c.KFD, c.Log
	o.Idle = time.Duration(c.IdleMS) * time.Millisecond
	o.MaxWait = time.Duration(c.MaxWaitMS) * time.Millisecond
	o.MaxAttempts = max(c.MaxAttempts, 1)
	o.KillGrace = time.Duration(max(c.GraceMS, 1)) * time.Millisecond
	o.Hold = c.Hold
	o.CompilerRE = regexp.MustCompile(noCompiler)
	if err := o.ApplyEnv(os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	o.Stdin, o.Stdout, o.Stderr = os.Stdin, os.Stdout, os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := Run(ctx, o, argv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "guard:", err)
	}
	return out.ExitCode
}

// helperBurn burns CPU until /proc says it used at least GUARD_TEST_TICKS clock ticks,
// prints "burned <pid>", then waits for one more line. Waiting for the CPU figure itself
// (not for time) keeps the CPU test independent of how loaded the machine is.
func helperBurn() {
	want, _ := strconv.ParseUint(os.Getenv("GUARD_TEST_TICKS"), 10, 64)
	in := bufio.NewReader(os.Stdin)
	in.ReadString('\n') // "go"
	x := 0
	for {
		for i := range 1_000_000 {
			x += i ^ x
		}
		b, err := os.ReadFile("/proc/self/stat")
		if err != nil {
			os.Exit(4)
		}
		p, err := proc.ParseStat(b, nil)
		if err == nil && p.Ticks >= want {
			break
		}
	}
	fmt.Printf("burned %d %d\n", os.Getpid(), x&1)
	in.ReadString('\n')
	os.Exit(0)
}

// noCompiler keeps other people's builds on this shared machine out of tests that do
// not test compilers.
const noCompiler = `^perfbot-test-no-such-compiler$`

// fakeClock is a Clock the test steps. Only blocking waits count as registrations.
type fakeClock struct {
	mu      sync.Mutex
	cond    *sync.Cond
	now     time.Time
	waiters []fakeWaiter
	gen     int
	stopped bool
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	c := &fakeClock{now: time.Date(2026, 9, 30, 17, 41, 1, 0, time.FixedZone("", 9*3600))}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	c.gen++
	c.cond.Broadcast()
	return ch
}

// generation is the number of blocking waits registered so far.
func (c *fakeClock) generation() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// waitGen blocks until more than g blocking waits were registered (the guard finished
// its sample and waits again) or the run ended; it reports which.
func (c *fakeClock) waitGen(g int) bool {
	expired := false
	timer := time.AfterFunc(waitLimit, func() {
		c.mu.Lock()
		expired = true
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.gen <= g && !c.stopped && !expired {
		c.cond.Wait()
	}
	return c.gen > g
}

func (c *fakeClock) stop() {
	c.mu.Lock()
	c.stopped = true
	c.cond.Broadcast()
	c.mu.Unlock()
}

// deadline is the earliest pending wait.
func (c *fakeClock) deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiters) == 0 {
		return time.Time{}, false
	}
	d := c.waiters[0].at
	for _, w := range c.waiters {
		if w.at.Before(d) {
			d = w.at
		}
	}
	return d, true
}

// set moves the clock to t without firing anything (t must not pass a deadline).
func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// fire moves the clock to the earliest deadline and fires every wait due by then.
func (c *fakeClock) fire() {
	d, ok := c.deadline()
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d.After(c.now) {
		c.now = d
	}
	keep := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			keep = append(keep, w)
		}
	}
	c.waiters = keep
}

// step lets the guard take exactly one more sample and waits until it has.
func (c *fakeClock) step() bool {
	g := c.generation()
	c.fire()
	return c.waitGen(g)
}

// newLines collects what a command prints and lets a test wait for a line.
func newLines() *linestest.Lines {
	l := linestest.New()
	l.Limit = waitLimit
	return l
}

// world is one test's private guard setup: KFD dir, lock, log.
type world struct {
	dir, kfd, lock, log string
}

func newWorld(t *testing.T) world {
	t.Helper()
	d := t.TempDir()
	w := world{dir: d, kfd: filepath.Join(d, "kfd"), lock: filepath.Join(d, "guard.lock"), log: filepath.Join(d, "guard.log")}
	if err := os.Mkdir(w.kfd, 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w world) options() Options {
	o := DefaultOptions()
	o.Host = host.Local()
	o.KFDDir, o.LockPath, o.LogPath = w.kfd, w.lock, w.log
	o.CompilerRE = regexp.MustCompile(noCompiler)
	o.Idle = 0
	o.MaxAttempts = 1
	o.KillGrace = 2 * time.Second
	return o
}

// hold registers pid in the fake KFD dir, as the driver does for a process that has
// /dev/kfd open.
func (w world) hold(t *testing.T, pid int) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(w.kfd, strconv.Itoa(pid)), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (w world) release(t *testing.T, pid int) {
	t.Helper()
	if err := os.Remove(filepath.Join(w.kfd, strconv.Itoa(pid))); err != nil {
		t.Fatal(err)
	}
}

func (w world) logText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(w.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (w world) attempts(t *testing.T) []Attempt {
	t.Helper()
	b, err := os.ReadFile(w.log + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []Attempt
	for _, ln := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var a Attempt
		if err := json.Unmarshal([]byte(ln), &a); err != nil {
			t.Fatalf("jsonl line %q: %v", ln, err)
		}
		out = append(out, a)
	}
	return out
}

// startProc starts a real process the test owns; it is killed and reaped at cleanup.
func startProc(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// running reports whether pid is a live (non-zombie) process.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	p, err := proc.ParseStat(b, nil)
	return err == nil && !p.Gone()
}

// stdinPipe gives a command a real pipe as stdin; each line written lets one `read` go.
func stdinPipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

type result struct {
	out  Outcome
	err  error
	done chan struct{}
}

// goRun runs the guard in the background; a fake clock (may be nil) is told when it ends.
func goRun(ctx context.Context, o Options, argv []string, fc *fakeClock) *result {
	r := &result{done: make(chan struct{})}
	go func() {
		r.out, r.err = Run(ctx, o, argv)
		if fc != nil {
			fc.stop()
		}
		close(r.done)
	}()
	return r
}

func (r *result) wait(t *testing.T) (Outcome, error) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(waitLimit):
		t.Fatalf("the guard did not finish within %v", waitLimit)
	}
	return r.out, r.err
}
