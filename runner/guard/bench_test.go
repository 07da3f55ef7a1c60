package guard

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/perfbot/runner/host"
)

// BenchmarkMonitorSample measures one monitor sample on this machine's real /proc: wall
// time (ns/op), CPU time per sample and per process, and the share of one core at the
// default 10 Hz. The sub-benchmarks add idle processes to show how the cost grows.
func BenchmarkMonitorSample(b *testing.B) {
	for _, tc := range []struct {
		extra int
		cpu   bool
	}{{0, false}, {0, true}, {200, false}, {400, false}} {
		b.Run(fmt.Sprintf("extra=%d/cpu-check=%v", tc.extra, tc.cpu), func(b *testing.B) {
			var procs []*exec.Cmd
			for range tc.extra {
				c := exec.Command("sleep", "600")
				if err := c.Start(); err != nil {
					b.Fatal(err)
				}
				procs = append(procs, c)
			}
			defer func() {
				for _, c := range procs {
					c.Process.Kill()
					c.Wait()
				}
			}()
			kfd := b.TempDir()
			cmd := exec.Command("sleep", "600")
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			os.Mkdir(fmt.Sprintf("%s/%d", kfd, cmd.Process.Pid), 0o755)
			maxCPU := 0.0
			if tc.cpu {
				maxCPU = 50
			}
			s, err := newSampler(host.Local(), kfd, regexp.MustCompile(DefaultCompilerRE), maxCPU, 100*time.Millisecond)
			if err != nil {
				b.Fatal(err)
			}
			defer s.close()
			s.setCommand(cmd.Process.Pid)
			now := time.Now()
			// The first sample opens the descriptors the steady state re-reads.
			if _, err := s.sample(now); err != nil {
				b.Fatal(err)
			}
			nproc := len(s.ps.procs)
			var before, after syscall.Rusage
			b.ReportAllocs()
			b.ResetTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			for i := 0; i < b.N; i++ {
				now = now.Add(100 * time.Millisecond)
				if _, err := s.sample(now); err != nil {
					b.Fatal(err)
				}
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			b.StopTimer()
			cpuNs := float64(tvNs(after.Utime)+tvNs(after.Stime)-tvNs(before.Utime)-tvNs(before.Stime)) / float64(b.N)
			b.ReportMetric(float64(nproc), "procs")
			b.ReportMetric(cpuNs, "cpu-ns/sample")
			b.ReportMetric(cpuNs/float64(nproc), "cpu-ns/proc")
			b.ReportMetric(cpuNs*10/1e9*100, "%core@10Hz")
		})
	}
}

func tvNs(tv syscall.Timeval) int64 { return tv.Sec*1e9 + tv.Usec*1e3 }
