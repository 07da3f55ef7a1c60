package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/hostinfo"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/results"
)

// Names of the session files the runner writes beside the runs.
const (
	guardLog   = results.GuardLogFile
	guardJSONL = results.GuardLogFile + ".jsonl"
	hostInfo   = results.HostInfoFile
	sessionDoc = results.SessionFile
	gemmTests  = results.GemmTestsFile
)

// committedSuffixes are the per-run files that go into the commit (docs/formats.md §3);
// committedNames are the per-session ones. Anything else stays out, traces above all.
var (
	committedSuffixes = []string{"_kernel_stats.csv", "_decode_kernels.csv", "_summary.json", "_bench.log"}
	committedNames    = []string{guardLog, guardJSONL, hostInfo, sessionDoc, gemmTests}
	// readNames are read but not committed: the prepared patch is committed as the
	// sources it carries.
	readNames = []string{patch.PreparedFile}
)

var folderRE = regexp.MustCompile(`^([A-Za-z0-9]+)_([0-9a-f]{7,40})$`)

// folder is one profile's results folder as read from disk.
type folder struct {
	dir     string // the <gfx>_<commit8> folder
	name    string
	gfx     string
	commit8 string

	runs    []*results.Summary
	files   []string // names to commit, sorted
	skipped []string // names left out, sorted

	guard    []results.GuardEvent
	hasGuard bool
	env      []report.Row
	hasHost  bool
	// session is the runner's manifest; hasSession is false when the folder has none.
	session    results.Session
	hasSession bool
	gemm       *patch.Outcome
	// prepared is the runner's gemm_patch.json, nil when the folder has none.
	prepared *patch.Prepared
	notes    []string // problems that do not stop publishing
}

// ResultsFolder is the <gfx>_<commit> folder publishing reads from dir: dir itself, or
// the one such folder it holds.
func ResultsFolder(dir string) (string, error) { return findFolder(dir) }

// findFolder accepts the results root holding one <gfx>_<commit> folder, or that
// folder itself.
func findFolder(dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("reading the results folder: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder: give the results folder written by `perfbot run profile`", dir)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*_summary.json")); len(m) > 0 {
		return dir, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("reading the results folder: %w", err)
	}
	var found []string
	for _, e := range entries {
		if !e.IsDir() || !folderRE.MatchString(e.Name()) {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*_summary.json")); len(m) > 0 {
			found = append(found, e.Name())
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no run summaries in %s: want <gfx>_<commit>/<run>_summary.json as written by `perfbot run profile` (did every run fail?)", dir)
	case 1:
		return filepath.Join(dir, found[0]), nil
	}
	return "", fmt.Errorf("%s holds %d results folders (%s): give the one to publish", dir, len(found), strings.Join(found, ", "))
}

// readFolder reads everything publish needs from a results folder.
func readFolder(dir string) (*folder, error) {
	dir, err := findFolder(dir)
	if err != nil {
		return nil, err
	}
	f := &folder{dir: dir, name: filepath.Base(dir)}
	m := folderRE.FindStringSubmatch(f.name)
	if m == nil {
		return nil, fmt.Errorf("results folder %q is not named <gfx>_<commit> (e.g. gfx1151_929c80ab): publish the folder `perfbot run profile` wrote", f.name)
	}
	f.gfx, f.commit8 = m[1], m[2]

	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the results folder: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.Type().IsRegular() && committable(name):
			f.files = append(f.files, name)
		case e.Type().IsRegular() && slices.Contains(readNames, name):
		default:
			f.skipped = append(f.skipped, name)
		}
	}
	sort.Strings(f.files)
	sort.Strings(f.skipped)

	for _, read := range []func() error{f.readSession, f.readSummaries, f.readGuard, f.readHost, f.readGemm, f.readPrepared} {
		if err := read(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func committable(name string) bool {
	if slices.Contains(committedNames, name) {
		return true
	}
	for _, s := range committedSuffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return true
		}
	}
	return false
}

// readSummaries reads the runs in the session's order (then by name).
func (f *folder) readSummaries() error {
	paths, err := filepath.Glob(filepath.Join(f.dir, "*_summary.json"))
	if err != nil {
		return fmt.Errorf("listing summaries: %w", err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		s, err := results.ReadSummary(p)
		if err != nil {
			return fmt.Errorf("reading summary: %w", err)
		}
		if s.Name == "" {
			return fmt.Errorf("%s has no run name: is it a <run>_summary.json?", p)
		}
		if want := strings.TrimSuffix(filepath.Base(p), "_summary.json"); s.Name != want {
			return fmt.Errorf("%s names run %q: the file and the run must have the same name", p, s.Name)
		}
		f.runs = append(f.runs, s)
	}
	order := map[string]int{}
	for i, r := range f.session.Runs {
		order[r.Name] = i + 1
	}
	sort.SliceStable(f.runs, func(i, j int) bool {
		oi, oj := order[f.runs[i].Name], order[f.runs[j].Name]
		if oi != oj && oi > 0 && oj > 0 {
			return oi < oj
		}
		return oi > 0 && oj == 0
	})
	return nil
}

// optional reads the folder's file name; one that is missing is a note saying what
// that costs (missing), not an error.
func (f *folder) optional(name, missing, what string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		f.notes = append(f.notes, "the results folder has no "+name+": "+missing)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	return b, nil
}

func (f *folder) readGuard() error {
	b, err := f.optional(guardLog, "the runs' guard evidence is missing", "the guard log")
	if b == nil || err != nil {
		return err
	}
	evs, err := results.ParseGuardLog(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("reading %s: %w", filepath.Join(f.dir, guardLog), err)
	}
	f.guard, f.hasGuard = evs, true
	return nil
}

// maxGemmTests bounds gemm_tests.json: three tests with a detail each.
const maxGemmTests = 1 << 20

func (f *folder) readGemm() error {
	b, err := infile.ReadFile(filepath.Join(f.dir, gemmTests), maxGemmTests)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the numeric test outcomes: %w", err)
	}
	o, err := patch.ParseOutcome(b)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(f.dir, gemmTests), err)
	}
	f.gemm = &o
	return nil
}

// readPrepared reads the patch the runner prepared (gemm_patch.json) with the strict
// parser: it comes from a job that ran the pinned commit's code.
func (f *folder) readPrepared() error {
	file := filepath.Join(f.dir, patch.PreparedFile)
	b, err := infile.ReadFile(file, patch.MaxPreparedSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the prepared patch: %w", err)
	}
	if f.gemm == nil {
		return fmt.Errorf("%s: the results have a prepared patch but no %s it was prepared from", file, gemmTests)
	}
	p, err := patch.ParsePrepared(b)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	f.prepared = &p
	return nil
}

func (f *folder) readSession() error {
	s, err := results.ReadSession(filepath.Join(f.dir, results.SessionFile))
	if errors.Is(err, fs.ErrNotExist) {
		f.notes = append(f.notes, "the results folder has no session.json: the date and commit come from elsewhere, and runs that failed are not listed")
		return nil
	}
	if err != nil {
		return err
	}
	f.session, f.hasSession = s, true
	if s.GFX != "" && s.GFX != f.gfx {
		f.notes = append(f.notes, fmt.Sprintf("session.json says the GPU was %s but the folder is named for %s", s.GFX, f.gfx))
	}
	if end := f.sessionEnd(); end != "" {
		f.notes = append(f.notes, end)
	}
	return nil
}

// sessionEnd says how the session ended when it did not complete; "" when it did.
func (f *folder) sessionEnd() string {
	why := ""
	if f.session.Error != "" {
		why = ": " + f.session.Error
	}
	switch f.session.State {
	case "failed":
		return "the profile session stopped on an error before every run was done" + why
	case "interrupted":
		return "the profile session was interrupted before every run was done" + why
	case "running":
		return "session.json says the profile session was still running: it stopped without closing its manifest"
	}
	return ""
}

// sessionTime is when the session ended (else started): the time of the bot commit,
// fixed so that the same results make the same commit.
func (f *folder) sessionTime() time.Time {
	if !f.session.Finished.IsZero() {
		return f.session.Finished
	}
	return f.session.Started
}

// sessionDate is the session's day (the host's date at its start), YYYY-MM-DD.
func (f *folder) sessionDate() string {
	if f.session.Date != "" {
		return f.session.Date
	}
	if t := f.sessionTime(); !t.IsZero() {
		return t.Format(time.DateOnly)
	}
	return ""
}

// failedRuns are the session's runs that left no summary, with the runner's reason.
func (f *folder) failedRuns() []report.RunState {
	withSummary := map[string]bool{}
	for _, s := range f.runs {
		withSummary[s.Name] = true
	}
	var out []report.RunState
	for _, r := range f.session.Runs {
		if withSummary[r.Name] {
			continue
		}
		detail := r.Reason
		switch {
		case r.Status == results.StatusOK:
			detail = "the session says ok, but the results folder has no " + r.Name + "_summary.json"
		case r.Status == results.StatusRunning:
			detail = "the session stopped during this run"
		case detail == "":
			detail = "no reason recorded"
		}
		out = append(out, report.RunState{Name: r.Name, Status: string(r.Status), Detail: detail})
	}
	return out
}

// runNotes tell the pull request which runs have no results and why, and how the
// session ended when it did not complete.
func (f *folder) runNotes() []string {
	var notes []string
	for _, r := range f.failedRuns() {
		notes = append(notes, fmt.Sprintf("%s has no results (%s): %s", r.Name, r.Status, r.Detail))
	}
	if end := f.sessionEnd(); end != "" {
		notes = append(notes, end)
	}
	return notes
}

// sessionMethod is what the session says about how it ran, for the method table: the
// build, the rocprofv3 flags it passed (the environment table lists the ones the
// installed version offers) and the workload.
func (f *folder) sessionMethod() (build report.Row, rest []report.Row) {
	s := f.session
	cmd := s.Build.Command
	if len(cmd) == 0 {
		cmd = results.BuildCommand
	}
	build = report.Row{Label: "build", Value: strings.Join(cmd, " ")}
	if !f.hasSession {
		return build, nil
	}
	switch s.Build.Status {
	case "ok":
		if s.Build.Seconds > 0 {
			build.Label = fmt.Sprintf("build (%s s)", strconv.FormatFloat(s.Build.Seconds, 'f', -1, 64))
		}
	case "skipped":
		build.Label = "build (skipped: the bench was already built)"
	case "failed":
		build.Label = "build (failed: " + s.Build.Reason + ")"
	}
	if len(s.Profiler) > 0 {
		rest = append(rest, report.Row{Label: "profiler flags passed", Value: strings.Join(s.Profiler, " ")})
	}
	if sh := s.Shape; sh.Generate > 0 {
		rest = append(rest, report.Row{Label: "workload (bench arguments)",
			Value: fmt.Sprintf("-n %d --warmup-tokens %d --ignore-eos --prompt-tokens %d", sh.Generate, sh.Warmup, sh.Prompt)})
	}
	return build, rest
}

// hostLabels names the host facts the report knows, in the order it shows them; other
// keys of hostinfo.json follow under their own names.
var hostLabels = []struct{ key, label string }{
	{"gpu", "GPU"}, {"gpu_name", "GPU"}, {"marketing_name", "GPU"},
	{"gfx", "GPU target"}, {"gfx_target", "GPU target"},
	{"compute_units", "compute units"}, {"cu_count", "compute units"},
	{"vram_bytes", "GPU memory"}, {"vram_total_bytes", "GPU memory"},
	{"mem_total_bytes", "host memory"}, {"host_mem_bytes", "host memory"},
	{"rocm_version", "ROCm"}, {"hip_version", "HIP"}, {"rocprofv3_version", "rocprofv3"},
	{"rocprofiler_sdk_version", "rocprofiler-sdk"},
	{"kernel", "Linux kernel"}, {"os", "OS"}, {"cpu", "CPU"}, {"hostname", "host"},
	{"mlxcel_commit", "mlxcel commit"}, {"overlay_commit", "MLX ROCm overlay commit"},
}

func (f *folder) readHost() error {
	b, err := f.optional(hostInfo, "the environment table shows only what the folder name tells", "the host facts")
	if b == nil || err != nil {
		return err
	}
	// The runner writes runner/hostinfo's Info; other shapes (older runners, hand-made
	// folders) are shown key by key.
	var info hostinfo.Info
	if json.Unmarshal(b, &info) == nil && (info.ROCm.Known() || info.GPU.Known() || info.ROCm.Reason != "") {
		for _, r := range info.Table() {
			f.env = append(f.env, report.Row{Label: r.Name, Value: r.Value})
		}
		f.hasHost = true
		return nil
	}
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("%s: want a JSON object: %w", filepath.Join(f.dir, hostInfo), err)
	}
	flat := map[string]string{}
	flatten("", raw, flat)
	done := map[string]bool{}
	labelled := map[string]bool{}
	for _, hl := range hostLabels {
		v, ok := flat[hl.key]
		if !ok || v == "" || labelled[hl.label] {
			continue
		}
		f.env = append(f.env, report.Row{Label: hl.label, Value: v})
		done[hl.key], labelled[hl.label] = true, true
	}
	rest := make([]string, 0, len(flat))
	for k := range flat {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		if flat[k] != "" {
			f.env = append(f.env, report.Row{Label: k, Value: flat[k]})
		}
	}
	f.hasHost = true
	return nil
}

// flatten turns nested host facts into dotted keys with printable values; byte counts
// are shown in GiB as well.
func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(key, val, out)
		}
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			sub := map[string]string{}
			flatten("", e, sub)
			if s, ok := sub[""]; ok {
				parts = append(parts, s)
			} else {
				b, _ := json.Marshal(e)
				parts = append(parts, string(b))
			}
		}
		out[prefix] = strings.Join(parts, ", ")
	case json.Number:
		s := x.String()
		if strings.HasSuffix(prefix, "_bytes") {
			if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
				s = fmt.Sprintf("%s GiB (%s bytes)", strconv.FormatFloat(math.Round(n/(1<<30)*10)/10, 'f', -1, 64), s)
			}
		}
		out[prefix] = s
	case string:
		out[prefix] = x
	case bool:
		out[prefix] = strconv.FormatBool(x)
	case nil:
	default:
		out[prefix] = fmt.Sprint(x)
	}
}
