package guard

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/host"
)

// Guards of different users share the lock file: one the guard creates is writable by
// all, whatever the umask; one that exists is used as it is, never chmodded.
func TestLockFileMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		existing bool
		want     os.FileMode
	}{
		{"created", false, 0o666},
		{"existing", true, 0o644},
	}
	for _, c := range cases {
		w := newWorld(t)
		if c.existing {
			if err := os.WriteFile(w.lock, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(w.lock, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l, busy, err := tryLock(w.lock)
		if err != nil || busy {
			t.Fatalf("%s: tryLock: busy %v, %v", c.name, busy, err)
		}
		fi, err := os.Stat(w.lock)
		l.release()
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("%s: lock file mode %v, want %v", c.name, got, c.want)
		}
	}
}

// The holder record is read up to its size limit: a record of exactly the limit is
// shown, one byte more is refused rather than cut short and parsed.
func TestHolderRecordSizeLimit(t *testing.T) {
	t.Parallel()
	record := func(n int) []byte {
		b := []byte("pid=4242\nmode=excl\ncmd=")
		for len(b) < n-1 {
			b = append(b, 'x')
		}
		return append(b, '\n')
	}
	for _, c := range []struct {
		size int
		ok   bool
	}{{maxHolderRecord, true}, {maxHolderRecord + 1, false}} {
		w := newWorld(t)
		b := record(c.size)
		if len(b) != c.size {
			t.Fatalf("record of %d bytes, want %d", len(b), c.size)
		}
		if err := os.WriteFile(HolderPath(w.lock), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, ok := readHolder(w.lock)
		if ok != c.ok {
			t.Errorf("a %d-byte record: read %v, want %v", c.size, ok, c.ok)
		}
		if ok && (r.PID != 4242 || r.Mode != "excl" || len(r.Cmd) != c.size-len("pid=4242\nmode=excl\ncmd=\n")) {
			t.Errorf("a %d-byte record read as pid %d mode %q cmd of %d bytes", c.size, r.PID, r.Mode, len(r.Cmd))
		}
	}
}

// Status and its text, whole, for each state a user can see: no lock file, a record
// left by a guard that is gone, a lock held with and without a start time.
func TestStatusText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	st, err := Status(w.lock)
	if err != nil || st.Held || st.Stale || st.Holder != nil {
		t.Fatalf("no lock file, no record: %+v, %v", st, err)
	}
	if got := st.Text(); got != "free\n" {
		t.Errorf("free: %q", got)
	}
	if err := os.WriteFile(HolderPath(w.lock), []byte("pid=4242\nstart=0\nmode=excl\ncmd=make\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = Status(w.lock)
	if err != nil || st.Held || !st.Stale || st.Holder == nil || st.Holder.PID != 4242 {
		t.Fatalf("a record, no lock file: %+v, %v", st, err)
	}
	const rec = "pid=4242\nstart=0\nmode=excl\ncmd=make\n"
	if got := st.Text(); got != "free\nstale holder record (its guard is gone):\n"+rec {
		t.Errorf("stale: %q", got)
	}
	// The lock file exists and nobody holds it: the record is stale all the same.
	if err := os.WriteFile(w.lock, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if st, err = Status(w.lock); err != nil || st.Held || !st.Stale || st.Holder == nil {
		t.Errorf("a record, a free lock file: %+v, %v", st, err)
	}
	if err := os.Remove(HolderPath(w.lock)); err != nil {
		t.Fatal(err)
	}
	if st, err = Status(w.lock); err != nil || st.Held || st.Stale || st.Holder != nil {
		t.Errorf("a free lock file, no record: %+v, %v", st, err)
	}
	held := LockStatus{Held: true, Holder: &HolderRecord{PID: 4242, Mode: "excl", Cmd: "make"}}
	if got := held.Text(); got != "held\n"+rec {
		t.Errorf("held, no start time: %q", got)
	}
	held.Holder.Start = 1
	since := time.Unix(1, 0).Format(TimeLayout)
	if got := held.Text(); got != "held\npid=4242\nstart=1\nmode=excl\ncmd=make\nsince="+since+"\n" {
		t.Errorf("held since 1: %q", got)
	}
	if got := (LockStatus{Held: true}).Text(); got != "held\n(no holder record: the lock was taken by something that does not write one)\n" {
		t.Errorf("held, no record: %q", got)
	}
}

// Closing the evidence closes both of its files.
func TestEvidenceCloseClosesFiles(t *testing.T) {
	t.Parallel()
	e, err := openEvidence(t.TempDir()+"/guard.log", RealClock{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.close()
	if _, err := e.file.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("log file after close: %v", err)
	}
	if _, err := e.jsonl.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("attempt summary after close: %v", err)
	}
	(&evidence{}).close() // without --log: nothing to close
}

// Each limit of the guard's options on its edge: the edge is taken, one step past it
// is refused with the option named.
func TestOptionsAtTheirEdges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		set  func(*Options)
		want string // "" when valid
	}{
		{"idle 0", func(o *Options) { o.Idle = 0 }, ""},
		{"idle at most", func(o *Options) { o.Idle = MaxIdle }, ""},
		{"idle past", func(o *Options) { o.Idle = MaxIdle + 1 }, "idle window"},
		{"idle below 0", func(o *Options) { o.Idle = -1 }, "idle window"},
		{"attempts 1", func(o *Options) { o.MaxAttempts = 1 }, ""},
		{"attempts 0", func(o *Options) { o.MaxAttempts = 0 }, "max attempts"},
		{"attempts at most", func(o *Options) { o.MaxAttempts = MaxMaxAttempts }, ""},
		{"attempts past", func(o *Options) { o.MaxAttempts = MaxMaxAttempts + 1 }, "max attempts"},
		{"wait 0", func(o *Options) { o.MaxWait = 0 }, ""},
		{"wait at most", func(o *Options) { o.MaxWait = MaxMaxWait }, ""},
		{"wait past", func(o *Options) { o.MaxWait = MaxMaxWait + 1 }, "max wait"},
		{"wait below 0", func(o *Options) { o.MaxWait = -1 }, "max wait"},
		{"rate at most", func(o *Options) { o.SampleHz = MaxSampleHz }, ""},
		{"rate past", func(o *Options) { o.SampleHz = MaxSampleHz * 1.0001 }, "sample rate"},
		{"rate 0", func(o *Options) { o.SampleHz = 0 }, "sample rate"},
		{"foreign CPU 0", func(o *Options) { o.MaxForeignCPU = 0 }, ""},
		{"foreign CPU at most", func(o *Options) { o.MaxForeignCPU = maxForeignCPU }, ""},
		{"foreign CPU past", func(o *Options) { o.MaxForeignCPU = maxForeignCPU + 0.5 }, "max foreign CPU"},
		{"foreign CPU below 0", func(o *Options) { o.MaxForeignCPU = -0.5 }, "max foreign CPU"},
	}
	for _, c := range cases {
		o := DefaultOptions()
		c.set(&o)
		err := o.validate([]string{"true"})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	for v, ok := range map[string]bool{"1": true, " 77 ": true, "0": false, "-1": false, "x": false} {
		o := DefaultOptions()
		err := o.ApplyEnv(func(k string) string {
			if k == EnvLockHeld {
				return v
			}
			return ""
		})
		if (err == nil) != ok {
			t.Errorf("%s=%q: %v", EnvLockHeld, v, err)
		}
	}
}

// fill gives the defaults only for what is unset: a compiler pattern and a kill grace
// the caller chose stay.
func TestFillKeepsChoices(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^nvcc$`)
	o := Options{CompilerRE: re, KillGrace: 5 * time.Second}
	o.fill()
	if o.CompilerRE != re || o.KillGrace != 5*time.Second {
		t.Errorf("chosen: pattern %v grace %v", o.CompilerRE, o.KillGrace)
	}
	for _, g := range []time.Duration{0, -time.Second} {
		o = Options{KillGrace: g}
		o.fill()
		if o.CompilerRE == nil || o.CompilerRE.String() != regexp.MustCompile(DefaultCompilerRE).String() || o.KillGrace != DefaultKillGrace {
			t.Errorf("grace %v: pattern %v grace %v", g, o.CompilerRE, o.KillGrace)
		}
	}
}

// A section mark names a run and a phase; a line with nothing before the phase is a
// note.
func TestParseLogSectionNeedsARun(t *testing.T) {
	t.Parallel()
	evs, err := ParseLog(strings.NewReader("== qwen plain\n==  plain\n"))
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v, %v", evs, err)
	}
	if evs[0].Kind != EvSection || evs[0].Run != "qwen" || evs[0].Phase != "plain" {
		t.Errorf("first: %+v", evs[0])
	}
	if evs[1].Kind != EvNote || evs[1].Run != "" {
		t.Errorf("second: %+v", evs[1])
	}
}

// The process scanner keeps its descriptors to a quarter of the open-file limit, at
// most 4096; checked in helper processes started under lower limits.
func TestScannerDescriptorBudget(t *testing.T) {
	t.Parallel()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	s, err := newProcScanner(host.Local(), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(min(lim.Cur/4, 4096)); s.maxFD != want {
		t.Errorf("open-file limit %d: budget %d, want %d", lim.Cur, s.maxFD, want)
	}
	for limit, want := range map[string]string{"200": "50", "1200": "300"} {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		cmd := exec.CommandContext(ctx, "sh", "-c", `ulimit -n "$1" && exec "$0"`, os.Args[0], limit)
		cmd.Env = append(os.Environ(), "GUARD_TEST_HELPER=fdbudget")
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("helper under ulimit -n %s: %v", limit, err)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("under ulimit -n %s: budget %s, want %s", limit, got, want)
		}
	}
}
