//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/streamtest"
)

// buildPerfbot builds the command into a temp dir: these tests run it as a process, so
// that signals and memory are the real ones.
func buildPerfbot(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "perfbot")
	// `go test` puts its own toolchain first on the PATH of the test process.
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/lablup/perfbot/cmd/perfbot").CombinedOutput(); err != nil {
		t.Fatalf("building perfbot: %v\n%s", err, out)
	}
	return bin
}

// sparseFile makes a file of size bytes that takes no disk, with a newline every
// `every` bytes when every > 0.
func sparseFile(t *testing.T, path string, size, every int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off := every; every > 0 && off < size; off += every {
		if _, err := f.WriteAt([]byte{'\n'}, off); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// perfbotProc is one run of the built binary.
type perfbotProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
}

func startPerfbot(t *testing.T, bin string, args ...string) *perfbotProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	p := &perfbotProc{cmd: exec.CommandContext(ctx, bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		cancel()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait returns the exit code, or fails the test if the process does not end in time.
func (p *perfbotProc) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("%v still running after %s; stderr:\n%s", p.cmd.Args, within, p.stderr.String())
	}
	ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		t.Fatalf("%v was killed by %v; stderr:\n%s", p.cmd.Args, ws.Signal(), p.stderr.String())
	}
	return ws.ExitStatus()
}

// maxRSSMB is the process's peak resident memory.
func (p *perfbotProc) maxRSSMB() int64 {
	return p.cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss / 1024
}

// bytesRead is how much the running process has read, from /proc/<pid>/io.
func bytesRead(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// The built binary, as a process, on inputs that never end and under real signals.
func TestAnalyzeBinaryOnEndlessInputs(t *testing.T) {
	t.Parallel()
	bin := buildPerfbot(t)
	t.Run("refused", func(t *testing.T) { t.Parallel(); analyzeRefusesEndlessInputs(t, bin) })
	t.Run("signals", func(t *testing.T) { t.Parallel(); analyzeStopsOnSignals(t, bin) })
}

// What `perfbot analyze` does with inputs that are not profiler files: a device, a
// FIFO, a 10 GiB sparse file. Each is an error within seconds and a bounded memory.
func analyzeRefusesEndlessInputs(t *testing.T, bin string) {
	out, dir := hostileRun(t)
	res := filepath.Join(dir, "results")
	fifo := streamtest.Fifo(t, "fifo_kernel_trace.csv")
	sparse := sparseFile(t, filepath.Join(dir, "sparse_kernel_trace.csv"), 10<<30, 0)
	cases := []struct {
		flag, path, msg string
	}{
		{"--trace", "/dev/zero", "/dev/zero is a character device, not a regular file"},
		{"--trace", fifo, "is a named pipe (FIFO), not a regular file"},
		{"--log", fifo, "is a named pipe (FIFO), not a regular file"},
		{"--plain-log", "/dev/zero", "is a character device, not a regular file"},
		{"--trace", sparse, "sparse_kernel_trace.csv:1: a line longer than 1024 KiB"},
	}
	for _, c := range cases {
		args := analyzeArgs(out, res)
		if c.flag == "--plain-log" {
			args = append(args, c.flag, c.path)
		} else {
			args = withArg(args, c.flag, c.path)
		}
		p := startPerfbot(t, bin, args...)
		code := p.wait(t, time.Minute)
		if code != 1 || !strings.Contains(p.stderr.String(), c.msg) {
			t.Errorf("%s %s: exit %d, stderr %q; want 1 and %q", c.flag, c.path, code, p.stderr.String(), c.msg)
		}
		if rss := p.maxRSSMB(); rss > 128 {
			t.Errorf("%s %s: peak RSS %d MB", c.flag, c.path, rss)
		}
	}
}

// SIGINT and SIGTERM stop a long read at once, with the shell's codes, and no output
// is written. The bench log here is 10 GiB (sparse) of 1 MiB lines that are no marks:
// read to its end it would give another exit code.
func analyzeStopsOnSignals(t *testing.T, bin string) {
	out, dir := hostileRun(t)
	long := sparseFile(t, filepath.Join(dir, "long_bench.log"), 10<<30, 1<<20)
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGTERM, 143, "terminated"}, {syscall.SIGINT, 130, "interrupt"}} {
		res := filepath.Join(dir, "results-"+strconv.Itoa(c.code))
		p := startPerfbot(t, bin, withArg(analyzeArgs(out, res), "--log", long)...)
		// Signal once the process is well into the log.
		deadline := time.Now().Add(time.Minute)
		for bytesRead(p.cmd.Process.Pid) < 64<<20 {
			select {
			case <-p.done:
				t.Fatalf("%v: ended before the signal; stderr:\n%s", c.sig, p.stderr.String())
			case <-time.After(5 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v: the log was not being read", c.sig)
			}
		}
		if err := p.cmd.Process.Signal(c.sig); err != nil {
			t.Fatal(err)
		}
		code := p.wait(t, 30*time.Second)
		if want := "perfbot analyze: stopped: " + c.name + " signal received"; code != c.code || !strings.Contains(p.stderr.String(), want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.sig, code, p.stderr.String(), c.code, want)
		}
		if _, err := os.Stat(filepath.Join(res, out.Run+"_summary.json")); err == nil {
			t.Errorf("%v: a summary was written", c.sig)
		}
		if rss := p.maxRSSMB(); rss > 128 {
			t.Errorf("%v: peak RSS %d MB reading 1 MiB lines", c.sig, rss)
		}
	}
}
