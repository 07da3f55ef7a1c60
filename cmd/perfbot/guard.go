package main

import (
	"context"
	"io"
	"math"
	"os"
	"runtime"
	"time"

	"github.com/lablup/perfbot/runner/guard"
)

func init() {
	register(command{name: "guard", summary: "run a command on an idle GPU under the host-wide lock", run: runGuard})
}

const guardUsage = `[--idle-secs SECS] [--max-attempts N] [--max-wait SECS] [--log FILE] [--sample-hz N]
                    [--max-foreign-cpu PCT] [--label RUN] -- CMD [ARGS]
       perfbot guard --hold [--log FILE] -- CMD [ARGS]     (take the host lock only)
       perfbot guard --status                              (free / held and the holder record)
       perfbot guard --log FILE --section TITLE            (append "== TITLE" to the log)

environment: ROCM_GPU_GUARD_KFD_DIR, ROCM_GPU_GUARD_COMPILER_RE, ROCM_GPU_GUARD_LOCK,
             ROCM_GPU_GUARD_LOCK_HELD (set for the command; a nested guard skips the lock)
exit: the command's code on a clean attempt; 75 when every attempt was contended or the
      wait budget ran out; 2 usage; 130/143 on SIGINT/SIGTERM

examples:
  perfbot guard --log session/guard.log --label "Qwen3-30B-A3B-4bit_greedy profiled" -- ./bench --model qwen3
  perfbot guard --status`

func runGuard(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("guard", guardUsage, stderr)
	idle := fs.Int("idle-secs", int(guard.DefaultIdle/time.Second), "seconds of idle GPU and no compiler needed before each attempt")
	attempts := fs.Int("max-attempts", guard.DefaultMaxAttempts, "attempts before giving up (exit 75) when each one is contended")
	maxWait := fs.Int("max-wait", 0, "give up (exit 75) after this many `SECS` of waiting for the lock and idle windows; 0 waits forever")
	logPath := fs.String("log", "", "append the evidence log to `FILE` (and one JSON line per attempt to FILE.jsonl)")
	hz := fs.Float64("sample-hz", guard.DefaultSampleHz, "samples per second of the idle wait and the in-run monitor")
	maxCPU := fs.Float64("max-foreign-cpu", 0, "treat another process above `PCT` % of one core as contention (0: off)")
	label := fs.String("label", "", "run label for the JSON lines, e.g. \"Qwen3-30B-A3B-4bit_greedy profiled\"")
	hold := fs.Bool("hold", false, "take the host lock only: no idle wait, no monitor")
	status := fs.Bool("status", false, "print free or held, and the holder record")
	section := fs.String("section", "", "append a `TITLE` header line (\"== TITLE\") to --log and exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	argv := fs.Args()
	o := guard.DefaultOptions()
	if err := o.ApplyEnv(os.Getenv); err != nil {
		return usageError("%v", err)
	}
	switch {
	case *status:
		if len(argv) > 0 || *hold || *section != "" {
			return usageError("--status takes no command and no --hold/--section")
		}
		st, err := guard.Status(o.LockPath)
		if err != nil {
			return err
		}
		io.WriteString(stdout, st.Text())
		return nil
	case *section != "":
		if *logPath == "" || len(argv) > 0 {
			return usageError("--section needs --log FILE and no command")
		}
		return guard.Section(*logPath, *section)
	case len(argv) == 0:
		return usageError("no command: put it after `--`, e.g. perfbot guard -- ./bench.sh")
	case *idle < 0 || *maxWait < 0 || *maxCPU < 0:
		return usageError("--idle-secs, --max-wait and --max-foreign-cpu cannot be negative")
	case *idle > int(guard.MaxIdle/time.Second):
		return usageError("--idle-secs %d: want at most %d (a day)", *idle, int(guard.MaxIdle/time.Second))
	case *maxWait > int(guard.MaxMaxWait/time.Second):
		return usageError("--max-wait %d: want at most %d (30 days), or 0 for no limit", *maxWait, int(guard.MaxMaxWait/time.Second))
	case *attempts < 1 || *attempts > guard.MaxMaxAttempts:
		return usageError("--max-attempts %d: want 1 to %d", *attempts, guard.MaxMaxAttempts)
	// NaN fails every comparison, so these are written to pass only good values.
	case !(*hz > 0 && *hz <= guard.MaxSampleHz):
		return usageError("--sample-hz %g: want a number above 0 and at most %g", *hz, guard.MaxSampleHz)
	case math.IsNaN(*maxCPU) || math.IsInf(*maxCPU, 0):
		return usageError("--max-foreign-cpu %g: want a percentage of one core (0 turns the check off)", *maxCPU)
	}
	o.Idle = time.Duration(*idle) * time.Second
	o.MaxAttempts = *attempts
	o.MaxWait = time.Duration(*maxWait) * time.Second
	o.LogPath = *logPath
	o.SampleHz = *hz
	o.MaxForeignCPU = *maxCPU
	o.Label = *label
	o.Hold = *hold
	o.Stdin, o.Stdout, o.Stderr = os.Stdin, stdout, stderr
	// The guard does one thing at a time. With a second P, every wake-up of the
	// sampling goroutine also wakes a second thread that finds nothing to do: half the
	// guard's context switches (bench/guard.sh).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	out, err := guard.Run(ctx, o, argv)
	if err != nil {
		if out.ExitCode == 2 {
			return usageError("%v", err)
		}
		code := out.ExitCode
		if code == 0 {
			code = 1
		}
		return &exitError{code: code, err: err}
	}
	if out.ExitCode != 0 {
		// The guard's own lines already said why.
		return &exitError{code: out.ExitCode}
	}
	return nil
}
