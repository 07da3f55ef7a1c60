// Package guard owns the idle-GPU guard of docs/formats.md §4: the host-wide lock shared with
// the target repo's scripts/rocm_gpu_guard.sh (flock plus the `<lock>.holder` record and
// the nesting variable), the wait for an idle window (KFD proc dir empty, no compiler,
// optionally no CPU-heavy process), the in-run monitor that tells the command's own
// process tree from foreign ones, reruns of contended attempts, the evidence log and
// its per-attempt JSON lines, and a parser for that log (shell guard's and perfbot's).
//
// It reaches the machine only through runner/host and a Clock, so tests run it on real
// processes with a fake KFD dir and a clock they step; it starts the command through
// runner/proc, whose reaper keeps every process of the command below it. It must not probe the GPU itself
// (rocminfo and friends open /dev/kfd and would count as holders), analyze traces or
// talk to GitHub.
package guard
