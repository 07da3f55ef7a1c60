package results

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// The per-session files of a profile results folder (docs/formats.md §3). The runner's
// jobs write them; the publisher and the artifact intake read them.
const (
	SessionFile  = "session.json"
	HostInfoFile = "hostinfo.json"
	GuardLogFile = "guard.log"
	// GuardEventsSuffix follows a guard log's name for its JSON lines (guard.log.jsonl).
	GuardEventsSuffix = ".jsonl"
	// GemmTestsFile is where the workflow puts the numeric tests' outcome (§7).
	GemmTestsFile = "gemm_tests.json"
	// GemmPatchFile is the grouped_gemm gate patch the GPU job prepares for the
	// publisher, beside gemm_tests.json.
	GemmPatchFile = "gemm_patch.json"
)

// The per-run files of a profile results folder, named <run><suffix>.
const (
	KernelStatsSuffix   = "_kernel_stats.csv"
	DecodeKernelsSuffix = "_decode_kernels.csv"
	SummarySuffix       = "_summary.json"
	BenchLogSuffix      = "_bench.log"
	// PlainBenchLogSuffix is the plain run's log; it ends in BenchLogSuffix too.
	PlainBenchLogSuffix = "_plain_bench.log"
)

// RunFileSuffixes are the suffixes of a run's files in a profile results folder, in
// the order a reader classifies a name (PlainBenchLogSuffix is a BenchLogSuffix).
var RunFileSuffixes = []string{KernelStatsSuffix, DecodeKernelsSuffix, SummarySuffix, BenchLogSuffix}

// runFilesWritten are every file a run may leave, the plain log included: a rerun
// removes them first.
var runFilesWritten = []string{KernelStatsSuffix, DecodeKernelsSuffix, SummarySuffix, BenchLogSuffix, PlainBenchLogSuffix}

// RunFiles are the names of every file a run may leave in a profile results folder.
func RunFiles(run string) []string {
	out := make([]string, len(runFilesWritten))
	for i, s := range runFilesWritten {
		out[i] = run + s
	}
	return out
}

// TraceSuffixes are the profiler's own traces: they stay in the traces folder and are
// never part of a results folder's commit.
var TraceSuffixes = []string{"_trace.csv", "_results.db"}

// ProfileSessionFiles are the per-session names of a profile results folder.
var ProfileSessionFiles = []string{GuardLogFile, GuardLogFile + GuardEventsSuffix, HostInfoFile, SessionFile, GemmTestsFile, GemmPatchFile}

// ProfileLayout says what a profile results folder holds, for an error about a name
// that is not of it.
const ProfileLayout = "a profile results folder holds <run>_kernel_stats.csv, <run>_decode_kernels.csv, <run>_summary.json, <run>_bench.log, <run>_plain_bench.log, guard.log, guard.log.jsonl, hostinfo.json, session.json, gemm_tests.json and gemm_patch.json (docs/formats.md §3)"

// ProfileName classifies a file name of a profile results folder: a per-session file
// (run ""), a run's file (its run name and its suffix), or a profiler trace (trace
// true, never committed). Any other name, or a run name that is not one, is an error.
func ProfileName(name string) (run, suffix string, trace bool, err error) {
	for _, f := range ProfileSessionFiles {
		if name == f {
			return "", "", false, nil
		}
	}
	for _, s := range RunFileSuffixes {
		if r, ok := strings.CutSuffix(name, s); ok && r != "" {
			if err := CheckRunName(r); err != nil {
				return "", "", false, err
			}
			return r, s, false, nil
		}
	}
	for _, s := range TraceSuffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return "", "", true, nil
		}
	}
	return "", "", false, fmt.Errorf("%s", ProfileLayout)
}

// writeManifest writes v as indented JSON with a line end, atomically.
func writeManifest(path, what string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the %s: %w", what, err)
	}
	if err := WriteFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("writing the %s: %w", what, err)
	}
	return nil
}

// WriteJSON writes v as indented JSON with a line end to folder/name, atomically;
// what names the file in an error ("the host facts").
func WriteJSON(folder, name, what string, v any) error {
	return writeManifest(filepath.Join(folder, name), what, v)
}
