// Package sandbox owns how the pinned commit's code runs on a shared host when the host
// owner turns the sandbox on (PERFBOT_SANDBOX=bwrap, docs/runner.md "Sandbox"): the
// build, the plain and profiled bench runs, the numeric tests and the nightly harness
// run inside bubblewrap, without network, with the system, the toolchain, the checkout
// and the model folders read-only, a private /tmp and home, the GPU device nodes bound
// in, and only the folders the job names writable.
//
// It reads the host's settings (FromEnv), prepares one job's sandbox (New) and turns a
// command prepared by runner/host into the same command under bwrap (Wrap, or Host for
// the commands the guard prepares); the wrapped command still starts through
// runner/proc, so its processes stay below the command's reaper and the guard counts
// them as the run's own. There is no pid namespace: the sandboxed processes keep their
// host pids, the ones the KFD proc dir lists. It must not start commands itself (apart
// from the start-up probe of bwrap), decide what a command's exit means, or read the
// repository's config: the sandbox is the host's decision.
package sandbox
