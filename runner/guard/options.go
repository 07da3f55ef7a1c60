package guard

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/perfbot/runner/host"
)

// Defaults and environment names shared with scripts/rocm_gpu_guard.sh (docs/formats.md §4).
const (
	DefaultKFDDir      = "/sys/class/kfd/kfd/proc"
	DefaultLockPath    = "/tmp/mlxcel-rocm-gpu-guard.lock"
	DefaultCompilerRE  = `^(cargo|rustc|clang|clang\+\+|clang-[0-9]+|hipcc|nvcc|cc1|cc1plus|ld|ld\.lld|ld\.gold|ld\.bfd|lld|collect2)$`
	DefaultIdle        = 90 * time.Second
	DefaultMaxAttempts = 5
	DefaultSampleHz    = 10.0
	DefaultKillGrace   = 5 * time.Second

	EnvKFDDir     = "ROCM_GPU_GUARD_KFD_DIR"
	EnvCompilerRE = "ROCM_GPU_GUARD_COMPILER_RE"
	EnvLock       = "ROCM_GPU_GUARD_LOCK"
	EnvLockHeld   = "ROCM_GPU_GUARD_LOCK_HELD"

	// ExitContended is the exit code when every attempt was contended or the wait
	// budget ran out (EX_TEMPFAIL: try again later).
	ExitContended = 75
)

// MaxSampleHz bounds --sample-hz: faster sampling costs CPU on the machine being
// measured without catching anything a 10 Hz monitor misses in practice.
const MaxSampleHz = 100.0

// Upper bounds of the other settings: beyond them a value is a typo (or an overflow
// waiting to happen), never a plan. A wait budget of 0 means no limit.
const (
	MaxIdle        = 24 * time.Hour
	MaxMaxWait     = 30 * 24 * time.Hour
	MaxMaxAttempts = 1000
)

// Options configure one guarded run. Start from DefaultOptions: the zero value of Idle
// means "one clean sample is enough", which is rarely what a caller wants.
type Options struct {
	Host  host.Host // the machine; nil means host.Local()
	Clock Clock     // nil means the wall clock

	Idle        time.Duration // idle window before every attempt
	MaxAttempts int           // attempts before giving up with ExitContended
	MaxWait     time.Duration // total budget for lock and idle waits; 0 means no limit
	SampleHz    float64       // rate of idle-wait and monitor samples
	// MaxForeignCPU, when > 0, makes any foreign process above this share of one core
	// (percent, measured over about a second) contention.
	MaxForeignCPU float64
	Hold          bool // take the lock only: no idle wait, no monitor, one run

	LogPath string // evidence log (appended); its `.jsonl` sibling gets one record per attempt
	Label   string // run label for the JSON lines, e.g. "Qwen3-30B-A3B-4bit_greedy profiled"

	KFDDir     string         // host path of the KFD proc dir
	CompilerRE *regexp.Regexp // full-match pattern for compiler comm names
	LockPath   string         // host-wide lock file (a real path: flock needs one)
	// LockHeldBy is the pid from ROCM_GPU_GUARD_LOCK_HELD: when it is an ancestor of
	// this process, the lock is already held for us and is not taken again.
	LockHeldBy int

	// Dir is the command's working folder (a real path; empty: the guard's own). A
	// relative command path (target/release/...) is taken relative to it, as a shell
	// that changed folder first would; the log shows the argv as given.
	Dir    string
	Env    []string // extra KEY=VALUE entries for the command
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer // the command's stderr and the guard's echoed lines

	KillGrace time.Duration // SIGTERM to SIGKILL delay when stopping the command

	// BeforeAttempt, when set, runs after each idle wait, right before attempt k starts
	// (k from 1). A command that leaves files a rerun would build on (a harness that
	// resumes from its own CSV) clears what the rejected attempt left here. An error
	// stops the guard before the attempt.
	BeforeAttempt func(k int) error
}

// DefaultOptions returns the CLI defaults of docs/formats.md §4.
func DefaultOptions() Options {
	return Options{
		Idle:        DefaultIdle,
		MaxAttempts: DefaultMaxAttempts,
		SampleHz:    DefaultSampleHz,
		KFDDir:      DefaultKFDDir,
		CompilerRE:  regexp.MustCompile(DefaultCompilerRE),
		LockPath:    DefaultLockPath,
		KillGrace:   DefaultKillGrace,
	}
}

// ApplyEnv applies the shell guard's environment overrides (getenv is os.Getenv in the
// CLI). A bad value is an error that names the variable.
func (o *Options) ApplyEnv(getenv func(string) string) error {
	if v := getenv(EnvKFDDir); v != "" {
		o.KFDDir = v
	}
	if v := getenv(EnvLock); v != "" {
		o.LockPath = v
	}
	if v := getenv(EnvCompilerRE); v != "" {
		re, err := CompileCompilerRE(v)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvCompilerRE, err)
		}
		o.CompilerRE = re
	}
	if v := strings.TrimSpace(getenv(EnvLockHeld)); v != "" {
		pid, err := strconv.Atoi(v)
		if err != nil || pid <= 0 {
			return fmt.Errorf("%s=%q: want the pid of the guard that holds the lock", EnvLockHeld, v)
		}
		o.LockHeldBy = pid
	}
	return nil
}

// CompileCompilerRE compiles a compiler pattern so that it must match the whole comm
// name, as the shell guard's `grep -Ex` does.
func CompileCompilerRE(expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(`^(?:` + expr + `)$`)
	if err != nil {
		return nil, fmt.Errorf("compiler pattern %q does not compile (%v): fix the regular expression", expr, err)
	}
	return re, nil
}

func (o *Options) validate(argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("no command given: put it after `--`")
	}
	if o.Idle < 0 || o.Idle > MaxIdle {
		return fmt.Errorf("idle window %s: want 0 to %s", o.Idle, MaxIdle)
	}
	if o.MaxAttempts < 1 || o.MaxAttempts > MaxMaxAttempts {
		return fmt.Errorf("max attempts %d: want 1 to %d", o.MaxAttempts, MaxMaxAttempts)
	}
	if o.MaxWait < 0 || o.MaxWait > MaxMaxWait {
		return fmt.Errorf("max wait %s: want 0 (no limit) to %s", o.MaxWait, MaxMaxWait)
	}
	// Written so that NaN fails too: every comparison with NaN is false.
	if !(o.SampleHz > 0 && o.SampleHz <= MaxSampleHz) {
		return fmt.Errorf("sample rate %g Hz: want more than 0 and at most %g", o.SampleHz, MaxSampleHz)
	}
	if !(o.MaxForeignCPU >= 0 && o.MaxForeignCPU <= maxForeignCPU) {
		return fmt.Errorf("max foreign CPU %g%%: want a percentage of one core from 0 (off) to %g", o.MaxForeignCPU, float64(maxForeignCPU))
	}
	if o.LockPath == "" {
		return fmt.Errorf("no lock path: set %s or leave the default", EnvLock)
	}
	if !o.Hold && o.KFDDir == "" {
		return fmt.Errorf("no KFD proc dir: set %s or leave the default", EnvKFDDir)
	}
	return nil
}

// maxForeignCPU bounds MaxForeignCPU (percent of one core): a thousand busy cores.
const maxForeignCPU = 100_000

func (o *Options) fill() {
	if o.Host == nil {
		o.Host = host.Local()
	}
	if o.Clock == nil {
		o.Clock = RealClock{}
	}
	if o.CompilerRE == nil {
		o.CompilerRE = regexp.MustCompile(DefaultCompilerRE)
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	// The command's output is copied by os/exec goroutines while the guard echoes its
	// own lines: writers that are not files must be serialised.
	if _, isFile := o.Stderr.(*os.File); !isFile {
		sw := &syncWriter{w: o.Stderr}
		if o.Stdout == o.Stderr {
			o.Stdout = sw
		}
		o.Stderr = sw
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (o *Options) interval() time.Duration {
	return time.Duration(float64(time.Second) / o.SampleHz)
}

// hzText prints a rate the way the log says it ("10", "2.5").
func hzText(hz float64) string {
	return strconv.FormatFloat(hz, 'f', -1, 64)
}
