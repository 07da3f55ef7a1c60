// Package action is perfbot as a GitHub Actions step (`perfbot action`, run by the
// composite action.yml): it reads the step's inputs and event, runs the job they name
// (profile, gemm-tests, patch, bench, publish, gate, bisect) through the same packages as the
// command line and the bot server (runner/job, runner/patch, bot/publish, bot/gate), and
// reports through the Actions runtime: outputs with random delimiters, masked secrets,
// escaped annotations, the job's output in a group with workflow commands off, and the
// step summary (docs/action.md). The publish job with the results input runs in a job of
// its own that holds the key: it reads the artifact through bot/intake and the pinned
// commit through its git objects, and runs nothing of the repository.
//
// It owns the runtime contract and the mapping of inputs to jobs. It must not parse
// commands, decide permissions, analyze traces or build documents itself (those belong to
// the packages it calls), print untrusted text where the runner reads commands, or exit
// non-zero for a job that did not fail.
package action
