package guard

import (
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// fdClock is the wall clock with waits on a timerfd instead of the Go runtime's
// timers. A pending runtime timer makes the runtime's monitor thread (sysmon) wake
// with it, and the timer itself wakes the thread that polls: at ten samples a second
// that costs more CPU than the sample (bench/guard.sh measures it). A timerfd is just
// another descriptor for the poller, and the reads below never enter the scheduler's
// syscall path, so between samples every thread of the guard sleeps.
type fdClock struct {
	f  *os.File
	rc syscall.RawConn
	fd uintptr

	mu       sync.Mutex
	ch       chan time.Time // the pending wait, nil when none
	deadline time.Time
}

const (
	sysTimerfdCreate  = 283
	sysTimerfdSettime = 286
	clockMonotonic    = 1
)

// newFDClock returns nil when a timerfd cannot be made; the caller keeps RealClock.
func newFDClock() *fdClock {
	fd, _, e := syscall.RawSyscall(sysTimerfdCreate, clockMonotonic, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if e != 0 {
		return nil
	}
	f := os.NewFile(fd, "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	c := &fdClock{f: f, rc: rc, fd: fd}
	go c.loop()
	return c
}

func (c *fdClock) close() { c.f.Close() }

// Now is the wall clock.
func (c *fdClock) Now() time.Time { return time.Now() }

// After arms the timerfd for d; an earlier wait still pending is dropped, as a stopped
// timer would be (the guard waits for one thing at a time).
func (c *fdClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- time.Now()
		return ch
	}
	c.mu.Lock()
	c.ch, c.deadline = ch, time.Now().Add(d)
	c.mu.Unlock()
	// struct itimerspec: it_interval (zero: one expiry), it_value, relative.
	spec := [2]syscall.Timespec{{}, syscall.NsecToTimespec(d.Nanoseconds())}
	if _, _, e := syscall.RawSyscall6(sysTimerfdSettime, c.fd, 0, uintptr(unsafe.Pointer(&spec[0])), 0, 0, 0); e != 0 {
		c.mu.Lock()
		c.ch = nil
		c.mu.Unlock()
		return time.After(d)
	}
	return ch
}

// loop delivers each expiry to the wait pending at that time.
func (c *fdClock) loop() {
	var buf [8]byte
	for {
		err := c.rc.Read(func(fd uintptr) bool {
			_, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), 8)
			return e != syscall.EAGAIN
		})
		if err != nil {
			return // closed
		}
		now := time.Now()
		c.mu.Lock()
		// An expiry read just before After re-armed belongs to the earlier wait.
		if c.ch != nil && !now.Before(c.deadline) {
			c.ch <- now
			c.ch = nil
		}
		c.mu.Unlock()
	}
}
