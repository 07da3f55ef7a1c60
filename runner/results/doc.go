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
// A compare results folder (docs/ab.md) is an A/B session's: compare.json (Compare:
// Kind bench or profile, ShaA and ShaB, Label, State as a session's, the metrics, per
// model its CompareResult per metric (abstat's medians, counts, change and interval,
// test, p, adjusted p, verdict) and every accepted CompareRun in the order it ran),
// the CSV pair named by CompareCSVName (<backend>_<host>_<date>_<label>-before.csv and
// -after.csv, CSVBefore and CSVAfter), guard.log with its events and hostinfo.json,
// and for a profile compare the side folders a/ and b/ (each a profile results folder:
// ReadSession, ProfileName) with <model>_diff.json and <model>_diff.md beside them
// (Diffs). Its API: Compare.Save (validates, then writes atomically), ReadCompare
// (bounded, Validate), ReadCompareFolder (the manifest, then every file it names a
// regular file of the folder and the side folders real folders, no links),
// Compare.Validate, Compare.Files (the top-level files it names), Compare.Model,
// Compare.Values, CompareName (classifies a top-level name of the folder),
// CompareCSVName and CheckCompareLabel. A cancelled session's manifest has State
// interrupted and the runs it measured; a failed one, State failed and its Error.
//
// A bisection folder (docs/nightly.md, "Bisection on the GPU host") holds bisect.json
// (Bisect: the range Good..Bad and its Commits, the model and metric, the parameters,
// every measurement in the order it ran, and the Outcome: the first bad commit or why
// none, its posterior and each measured commit's), guard.log with its events and
// hostinfo.json. Its API: Bisect.Save (validates, then writes atomically), ReadBisect
// (bounded, Validate) and Bisect.Validate; an interrupted bisection keeps its readings
// and the outcome so far.
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
