package intake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/benchlog"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/rocprof"
)

// GemmPatchFile is the grouped_gemm gate patch the GPU job prepares for the publisher,
// beside gemm_tests.json (results.GemmPatchFile).
const GemmPatchFile = results.GemmPatchFile

// The files of a profile results folder (docs/formats.md §3): per run, then per session.
var (
	summaryKind   = &kind{what: "a run summary", check: checkSummary}
	decodeKind    = &kind{what: "a decode_kernels table", check: checkDecodeKernels}
	statsKind     = &kind{what: "a rocprofv3 kernel_stats table", check: checkKernelStats, failedRun: runOf(results.KernelStatsSuffix)}
	benchLogKind  = &kind{what: "a bench log", check: checkBenchLog, failedRun: runOf(results.PlainBenchLogSuffix, results.BenchLogSuffix)}
	guardLogKind  = &kind{what: "a guard log", check: checkGuardLog}
	guardJSONKind = &kind{what: "the guard's attempt records", check: checkGuardJSONL}
	hostInfoKind  = &kind{what: "the host facts", check: checkHostInfo}
	sessionKind   = &kind{what: "the session manifest", check: checkSession}
	gemmTestsKind = &kind{what: "the grouped_gemm test outcome", check: checkGemmTests}
	gemmPatchKind = &kind{what: "the prepared grouped_gemm patch", check: checkGemmPatch}
)

// runKinds are the kinds of a run's files by their suffix (results.RunFileSuffixes);
// `_plain_bench.log` is a `_bench.log` too.
var runKinds = map[string]*kind{
	results.KernelStatsSuffix:   statsKind,
	results.DecodeKernelsSuffix: decodeKind,
	results.SummarySuffix:       summaryKind,
	results.BenchLogSuffix:      benchLogKind,
}

// sessionFiles are the kinds of the per-session names (results.ProfileSessionFiles).
var sessionFiles = map[string]*kind{
	results.GuardLogFile:                             guardLogKind,
	results.GuardLogFile + results.GuardEventsSuffix: guardJSONKind,
	results.HostInfoFile:                             hostInfoKind,
	results.SessionFile:                              sessionKind,
	results.GemmTestsFile:                            gemmTestsKind,
	results.GemmPatchFile:                            gemmPatchKind,
}

// profileKind classifies a name by the layout of a profile results folder
// (results.ProfileName): the profiler's traces, which the publisher has always left out
// of the commit and listed as skipped, are dropped here too, not refused.
func profileKind(name string) (*kind, bool, error) {
	run, suffix, trace, err := results.ProfileName(name)
	switch {
	case err != nil:
		return nil, false, err
	case trace:
		return nil, true, nil
	case run == "":
		return sessionFiles[name], false, nil
	}
	return runKinds[suffix], false, nil
}

// runOf returns the run a per-run file name belongs to, for the first suffix it has.
func runOf(suffixes ...string) func(string) string {
	return func(name string) string {
		for _, s := range suffixes {
			if run, ok := strings.CutSuffix(name, s); ok {
				return run
			}
		}
		return name
	}
}

// ruleError lets a check refuse a file under another rule than ErrFormat.
type ruleError struct {
	rule error
	err  error
}

func (e *ruleError) Error() string { return e.err.Error() }

func checkSummary(name string, data []byte, _ string) error {
	s, err := results.ParseSummary(data)
	if err != nil {
		return err
	}
	if run := strings.TrimSuffix(name, "_summary.json"); s.Name != run {
		return fmt.Errorf("it names run %s: the file and the run must have the same name", safetext.Quote(s.Name))
	}
	return nil
}

func checkDecodeKernels(name string, data []byte, _ string) error {
	_, err := results.ReadKernels(bytes.NewReader(data), name)
	return err
}

func checkKernelStats(name string, data []byte, _ string) error {
	_, err := rocprof.ParseKernelStats(data, name)
	return err
}

func checkBenchLog(name string, data []byte, _ string) error {
	_, err := benchlog.Parse(bytes.NewReader(data), name)
	return err
}

// wholeLines refuses a file whose last line has no line end: the guard writes each line
// whole, so such a file was cut short.
func wholeLines(data []byte) error {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return errors.New("its last line has no line end: the file was cut short (the guard writes whole lines)")
	}
	return nil
}

func checkGuardLog(_ string, data []byte, _ string) error {
	if err := wholeLines(data); err != nil {
		return err
	}
	_, err := results.ParseGuardLog(bytes.NewReader(data))
	return err
}

func checkGuardJSONL(_ string, data []byte, _ string) error {
	if err := wholeLines(data); err != nil {
		return err
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var a results.GuardAttempt
		if err := oneObject(line, &a); err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return nil
}

// checkHostInfo accepts what the publisher shows: runner/hostinfo's Info, or (an older
// runner's) any JSON object, shown key by key.
func checkHostInfo(_ string, data []byte, _ string) error {
	var info hostinfo.Info
	if oneObject(data, &info) == nil {
		return nil
	}
	var raw map[string]any
	return oneObject(data, &raw)
}

func checkSession(name string, _ []byte, cp string) error {
	_, err := results.ReadSession(cp)
	return named(err, cp, name)
}

// named puts the file's name for the copy's path in a path reader's error: the copy's
// folder means nothing to the reader of the message.
func named(err error, cp, name string) error {
	if err == nil {
		return nil
	}
	return errors.New(strings.ReplaceAll(err.Error(), cp, name))
}

func checkGemmTests(_ string, data []byte, _ string) error {
	_, err := patch.ParseOutcome(data)
	return err
}

// checkGemmPatch reads the prepared patch with runner/patch's strict reader.
func checkGemmPatch(_ string, data []byte, _ string) error {
	_, err := patch.ParsePrepared(data)
	return err
}

// oneObject decodes data as exactly one JSON object into v, with nothing after it.
func oneObject(data []byte, v any) error {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return errors.New("want one JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("want one JSON object: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("want one JSON object: there is more after it")
	}
	return nil
}

const nightlyLayout = results.NightlyLayout

// nightlyCheck checks a nightly folder: the manifest first, then the files it names.
type nightlyCheck struct {
	man results.Nightly
}

func (n *nightlyCheck) kind(name string) (*kind, bool, error) {
	switch {
	case results.IsNightlyManifest(name):
		return &kind{what: "a nightly manifest", check: n.checkManifest}, false, nil
	case strings.HasSuffix(name, results.GuardLogSuffix):
		return &kind{what: "a guard log", check: n.ofStem(results.GuardLogSuffix, checkGuardLog)}, false, nil
	case strings.HasSuffix(name, results.GuardLogSuffix+results.GuardEventsSuffix):
		return &kind{what: "the guard's attempt records", check: n.ofStem(results.GuardLogSuffix+results.GuardEventsSuffix, checkGuardJSONL)}, false, nil
	case strings.HasSuffix(name, ".csv"):
		if _, err := benchcsv.ParseName(name); err != nil {
			return nil, false, fmt.Errorf("%w; %s", err, nightlyLayout)
		}
		return &kind{what: "a harness CSV", check: n.checkCSV}, false, nil
	}
	return nil, false, errors.New(nightlyLayout)
}

// order puts the one manifest first.
func (n *nightlyCheck) order(src string, plan []item) error {
	var found []string
	at := -1
	for i, it := range plan {
		if results.IsNightlyManifest(it.name) {
			found = append(found, it.name)
			at = i
		}
	}
	if len(found) != 1 {
		return refuse(src, ErrLayout, "it holds %d nightly manifests (*%s)%s: an artifact carries the folder of one `perfbot run bench`",
			len(found), results.NightlySuffix, listed(found))
	}
	m := plan[at]
	copy(plan[1:at+1], plan[:at])
	plan[0] = m
	return nil
}

func listed(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

func (n *nightlyCheck) checkManifest(name string, _ []byte, cp string) error {
	man, err := results.ReadNightly(cp)
	if err != nil {
		return named(err, cp, name)
	}
	if man.Stem+results.NightlySuffix != name {
		return fmt.Errorf("it names the stem %s: not the manifest of its own file name", safetext.Quote(man.Stem))
	}
	n.man = man
	return nil
}

func (n *nightlyCheck) ofStem(suffix string, check func(string, []byte, string) error) func(string, []byte, string) error {
	return func(name string, data []byte, cp string) error {
		if name != n.man.Stem+suffix {
			return &ruleError{rule: ErrUnknown, err: fmt.Errorf("the manifest's stem is %s: %s", safetext.Quote(n.man.Stem), nightlyLayout)}
		}
		return check(name, data, cp)
	}
}

func (n *nightlyCheck) checkCSV(name string, data []byte, _ string) error {
	if !slices.Contains(n.man.CSVs, name) {
		return &ruleError{rule: ErrUnknown, err: errors.New("the manifest does not name it among its CSVs")}
	}
	_, err := benchcsv.Parse(data, name)
	return err
}
