// Package results owns the format of a results folder (docs/formats.md §3,
// docs/nightly.md): the file names of a profile folder and of a nightly folder, run
// names and sampling tags, the `<run>_summary.json` and `<run>_decode_kernels.csv`
// formats (byte compatible with the target repo's own analyzer) and the number
// formatting they use, and perfbot's manifests with their typed states: a profile
// session's session.json (Session, RunStatus, BuildStatus, SessionState) and a nightly's
// <stem>.nightly.json (Nightly, SweepStatus), with the commands they record, and the
// test entries of gemm_tests.json (TestResult, TestOutcome; runner/patch reads and
// decides on the whole file), and the guard's evidence (guard.log and its JSON lines:
// GuardEvent, GuardAttempt, ParseGuardLog; runner/guard writes them). Its readers
// (ReadSession with Session.Validate, ReadNightly, ParseSummary, ReadKernels,
// ParseGuardLog) and ProfileName are what a folder read from disk is checked with; the
// artifact intake adds the checks of hostile input (links, sizes, names) around them.
//
// The runner's jobs (runner/job) write a folder through it; the artifact intake
// (bot/intake), the publisher (bot/publish) and the documents (bot/report) read one
// through it. It is a format package: plain data types, their readers and atomic
// writes. It imports only packages of data formats below it (runner/benchcsv,
// runner/baseline, runner/hostinfo for the types a nightly manifest embeds) and
// internal text helpers, never config, runner/job, runner/guard, runner/proc or
// runner/sandbox, and it must not read traces, run processes or talk to GitHub: so config
// and every reader may import it.
package results
