package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
	"github.com/lablup/perfbot/runner/abstat"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// The files and folders of a compare results folder (docs/ab.md, "The compare results
// folder").
const (
	// CompareFile is the compare's manifest.
	CompareFile = "compare.json"
	// CompareDirA and CompareDirB hold, for a profile compare, each side's profile
	// results folder as `perfbot run profile` writes one.
	CompareDirA = "a"
	CompareDirB = "b"
	// DiffJSONSuffix and DiffMarkdownSuffix follow a model's name for the two decode
	// profiles' difference (runner/portdiff) of a profile compare: <model>_diff.json,
	// <model>_diff.md.
	DiffJSONSuffix     = "_diff.json"
	DiffMarkdownSuffix = "_diff.md"
	// CSVBeforeSuffix and CSVAfterSuffix end the label of the CSV pair's names:
	// rocm_strixhalo-gfx1151_2026-12-03_pr-1900-before.csv and -after.csv.
	CSVBeforeSuffix = "-before"
	CSVAfterSuffix  = "-after"
)

// CompareLayout says what a compare results folder holds, for an error about a name
// that is not of it.
const CompareLayout = "a compare results folder holds compare.json, the CSV pair <backend>_<host>_<date>_<label>-before.csv and -after.csv, guard.log, guard.log.jsonl, hostinfo.json, <model>_diff.json and <model>_diff.md, and for a profile compare the folders a/ and b/ (docs/ab.md)"

// CompareKind is what a compare measured: the bench's decode and prefill speed, or the
// decode profile.
type CompareKind string

// Compare kinds.
const (
	CompareBench   CompareKind = "bench"
	CompareProfile CompareKind = "profile"
)

// CompareSide is one of the two commits: A the base, B the change.
type CompareSide string

// Compare sides.
const (
	SideA CompareSide = "A"
	SideB CompareSide = "B"
)

// Compare is perfbot's manifest of one compare session (compare.json): the two
// commits, what was asked, every accepted run in the order it ran, and per model and
// metric the statistics' result. A session that stopped early (State failed or
// interrupted) keeps every run it measured and the results of the models it finished.
type Compare struct {
	Kind CompareKind `json:"kind"`
	// ShaA is the base's commit, ShaB the change's: 40 lowercase hex digits each.
	ShaA string `json:"sha_a"`
	ShaB string `json:"sha_b"`
	// Label names the pair in the CSV names (pr-1900, or the two short SHAs a1b2c3d-e4f5a6b).
	Label string `json:"label"`
	// Backend and Host are the harness file names' backend (rocm) and hardware tag
	// (strixhalo-gfx1151); Date the session's start, YYYY-MM-DD, host time.
	Backend  string    `json:"backend"`
	Host     string    `json:"host"`
	GFX      string    `json:"gfx,omitempty"`
	Date     string    `json:"date"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// State is running, complete (every model decided, Holm's correction applied),
	// failed (Error says why) or interrupted (cancelled by SIGINT/SIGTERM; Error says
	// where): a partial compare is still a valid one.
	State SessionState `json:"state"`
	Error string       `json:"error,omitempty"`
	// Start and Cap are the repeats per side before the first decision and at most;
	// MaxRedo the guard rejections of one run tolerated before the session fails.
	Start   int            `json:"start"`
	Cap     int            `json:"cap"`
	MaxRedo int            `json:"max_redo,omitempty"`
	Options abstat.Options `json:"options"`
	// Metrics are the readings of every run, in the order of CompareRun.Values.
	Metrics []CompareMetric `json:"metrics"`
	Models  []CompareModel  `json:"models"`
	// Runs are the accepted runs in the order they ran; Rejected counts the attempts
	// the guard refused (each redone in place); Planned the runs expected when the
	// manifest was written (it grows while a plan adds runs).
	Runs     []CompareRun `json:"runs"`
	Rejected int          `json:"rejected"`
	Planned  int          `json:"planned"`
	// CSVBefore and CSVAfter are the harness files of A's and B's runs, in this folder.
	CSVBefore string `json:"csv_before,omitempty"`
	CSVAfter  string `json:"csv_after,omitempty"`
	// DirA and DirB are, for a profile compare, the folders of each side's profile
	// session ("a" and "b"); Diffs the per-model differences of the two profiles.
	DirA     string        `json:"dir_a,omitempty"`
	DirB     string        `json:"dir_b,omitempty"`
	Diffs    []CompareDiff `json:"diffs,omitempty"`
	GuardLog string        `json:"guard_log,omitempty"`
	HostInfo string        `json:"hostinfo,omitempty"`
}

// CompareMetric is one reading of a run and which way is better.
type CompareMetric struct {
	Name string `json:"name"` // "decode tok/s", "prefill tok/s"
	// Direction is abstat's: "higher is better" or "lower is better".
	Direction string `json:"direction"`
}

// CompareModel is one model's outcome.
type CompareModel struct {
	Model string `json:"model"`
	// Done says the plan finished with every metric of the model; Results are then
	// one per metric (empty before).
	Done    bool            `json:"done"`
	NA      int             `json:"n_a"`
	NB      int             `json:"n_b"`
	Results []CompareResult `json:"results,omitempty"`
}

// CompareResult is one metric's comparison: abstat's result (medians, counts, change
// and its interval, the test that decided, p, adjusted p, verdict and why), with the
// metric's name and the look of the adaptive plan it was decided at.
type CompareResult struct {
	Metric string `json:"metric"`
	Look   int    `json:"look,omitempty"`
	abstat.Result
}

// CompareRun is one accepted run.
type CompareRun struct {
	Model string      `json:"model"`
	Side  CompareSide `json:"side"`
	// I is the repeat's index within its side for the model (from 0).
	I int `json:"i"`
	// Values are the readings, one per Compare.Metrics entry.
	Values []float64 `json:"values"`
	// Rejected is how many attempts at this position the guard refused before it.
	Rejected int `json:"rejected,omitempty"`
	// Run is, for a profile compare, the run's name in its side's folder.
	Run string `json:"run,omitempty"`
}

// CompareDiff names one model's profile difference files.
type CompareDiff struct {
	Model    string `json:"model"`
	JSON     string `json:"json"`
	Markdown string `json:"markdown,omitempty"`
}

// Model returns the outcome of the named model.
func (c *Compare) Model(name string) (CompareModel, bool) {
	for _, m := range c.Models {
		if m.Model == name {
			return m, true
		}
	}
	return CompareModel{}, false
}

// Values are side's readings of metric k of model, in the order they ran.
func (c *Compare) Values(model string, side CompareSide, k int) []float64 {
	var v []float64
	for _, r := range c.Runs {
		if r.Model == model && r.Side == side && k < len(r.Values) {
			v = append(v, r.Values[k])
		}
	}
	return v
}

// Files are the top-level files the manifest names (compare.json first), each one
// path element of the folder; the side folders are not listed.
func (c *Compare) Files() []string {
	out := []string{CompareFile}
	for _, f := range []string{c.CSVBefore, c.CSVAfter, c.GuardLog} {
		if f != "" {
			out = append(out, f)
		}
	}
	if c.GuardLog != "" {
		out = append(out, c.GuardLog+GuardEventsSuffix)
	}
	if c.HostInfo != "" {
		out = append(out, c.HostInfo)
	}
	for _, d := range c.Diffs {
		out = append(out, d.JSON)
		if d.Markdown != "" {
			out = append(out, d.Markdown)
		}
	}
	return out
}

// Save writes the manifest to folder/compare.json, atomically, after Validate: a
// runner never writes a manifest its readers would refuse.
func (c *Compare) Save(folder string) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("the compare manifest: %w", err)
	}
	return writeManifest(filepath.Join(folder, CompareFile), "compare manifest", c)
}

// CompareCSVName is the name of one file of the CSV pair:
// <backend>_<host>_<date>_<label>-before.csv (before true, A's runs) or -after.csv.
func CompareCSVName(backend, host, date, label string, before bool) (string, error) {
	if err := CheckCompareLabel(label); err != nil {
		return "", err
	}
	suffix := label + CSVAfterSuffix
	if before {
		suffix = label + CSVBeforeSuffix
	}
	name := benchcsv.Name{Backend: backend, Host: host, Date: date, Suffix: suffix}.String()
	n, err := benchcsv.ParseName(name)
	if err != nil {
		return "", err
	}
	if n.Backend != backend || n.Host != host || n.Date != date || n.Suffix != suffix || n.Single != "" || n.VLM {
		return "", fmt.Errorf("%s does not read back as the CSV of %s_%s on %s labelled %s", safetext.Quote(name), backend, host, date, label)
	}
	return name, nil
}

// MaxCompareLabelBytes bounds a label: it is part of two file names.
const MaxCompareLabelBytes = 64

var compareLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+-]*$`)

// CheckCompareLabel says whether label can name a CSV pair: letters, digits and . + -
// (no _ and no /, which the harness names use as separators), starting with a letter
// or digit, at most 64 bytes.
func CheckCompareLabel(label string) error {
	if len(label) == 0 || len(label) > MaxCompareLabelBytes || !compareLabel.MatchString(label) {
		return fmt.Errorf("compare label %s: give 1 to %d letters, digits, '.', '+' or '-', starting with a letter or digit (e.g. pr-1900)", safetext.Quote(label), MaxCompareLabelBytes)
	}
	return nil
}

// Bounds of a compare manifest: a session far beyond any budget is not one.
const (
	maxCompareModels  = 256
	maxCompareMetrics = 16
	maxCompareRuns    = 100000
	maxCompareRepeats = 10000
	maxCompareBytes   = 32 << 20
)

var hostTagRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+-]*$`)

var compareVerdicts = []abstat.Verdict{abstat.Faster, abstat.Slower, abstat.NoChange, abstat.TooNoisy, abstat.TooFew}

var compareTests = []string{abstat.TestMannWhitney, abstat.TestWelch, abstat.TestNone}

var compareStates = []SessionState{SessionRunning, SessionComplete, SessionFailed, SessionInterrupted}

// Validate checks what a compare manifest holds against what a runner writes: a known
// kind and state, two full SHAs, a label and names that make harness file names, every
// file it names one path element of the folder (the side folders exactly a and b),
// models and metrics named once, runs of known models and sides with one finite
// positive reading per metric, results with known verdicts and tests and finite
// figures, and counts that agree with the runs.
func (c *Compare) Validate() error {
	if c.Kind != CompareBench && c.Kind != CompareProfile {
		return fmt.Errorf("kind %s: a runner writes %s or %s", safetext.Quote(string(c.Kind)), CompareBench, CompareProfile)
	}
	for _, s := range []struct{ side, sha string }{{"A", c.ShaA}, {"B", c.ShaB}} {
		if !isFullSHA(s.sha) {
			return fmt.Errorf("commit %s is %s, not a full 40-hex-digit SHA", s.side, safetext.Quote(s.sha))
		}
	}
	if err := CheckCompareLabel(c.Label); err != nil {
		return err
	}
	if !slices.Contains(benchcsv.Backends, c.Backend) {
		return fmt.Errorf("backend %s: want one of %s", safetext.Quote(c.Backend), strings.Join(benchcsv.Backends, ", "))
	}
	if len(c.Host) > 64 || !hostTagRE.MatchString(c.Host) || strings.HasSuffix(c.Host, "_vlm") {
		return fmt.Errorf("host %s is not a hardware tag (letters, digits, '.', '+', '-')", safetext.Quote(c.Host))
	}
	if _, err := time.Parse(time.DateOnly, c.Date); err != nil {
		return fmt.Errorf("date %s is not YYYY-MM-DD", safetext.Quote(c.Date))
	}
	if !slices.Contains(compareStates, c.State) {
		return fmt.Errorf("state %s: a runner writes running, complete, failed or interrupted", safetext.Quote(string(c.State)))
	}
	if c.Start < 0 || c.Cap < 0 || c.MaxRedo < 0 || c.Start > maxCompareRepeats || c.Cap > maxCompareRepeats || c.MaxRedo > maxCompareRepeats {
		return fmt.Errorf("start %d, cap %d, redos %d: want 0 to %d each", c.Start, c.Cap, c.MaxRedo, maxCompareRepeats)
	}
	if !finite(c.Options.Alpha) || !finite(c.Options.SamePct) {
		return errors.New("the options hold a number that is not finite")
	}
	if err := c.validateMetrics(); err != nil {
		return err
	}
	models, err := c.validateModels()
	if err != nil {
		return err
	}
	if err := c.validateRuns(models); err != nil {
		return err
	}
	if c.Rejected < 0 || c.Rejected > maxCompareRuns || c.Planned < 0 || c.Planned > maxCompareRuns {
		return fmt.Errorf("rejected %d, planned %d: want 0 to %d", c.Rejected, c.Planned, maxCompareRuns)
	}
	return c.validateFiles(models)
}

func (c *Compare) validateMetrics() error {
	if len(c.Metrics) == 0 || len(c.Metrics) > maxCompareMetrics {
		return fmt.Errorf("%d metrics: want 1 to %d", len(c.Metrics), maxCompareMetrics)
	}
	seen := map[string]bool{}
	for i, m := range c.Metrics {
		if err := checkLabelText(m.Name); err != nil {
			return fmt.Errorf("metric %d: %v", i+1, err)
		}
		if seen[m.Name] {
			return fmt.Errorf("metric %s is listed twice", safetext.Quote(m.Name))
		}
		seen[m.Name] = true
		if m.Direction != abstat.HigherIsBetter.String() && m.Direction != abstat.LowerIsBetter.String() {
			return fmt.Errorf("metric %s: direction %s is not %q or %q", safetext.Quote(m.Name), safetext.Quote(m.Direction), abstat.HigherIsBetter, abstat.LowerIsBetter)
		}
	}
	return nil
}

// validateModels checks the models and their results and returns them by name.
func (c *Compare) validateModels() (map[string]*CompareModel, error) {
	if len(c.Models) == 0 || len(c.Models) > maxCompareModels {
		return nil, fmt.Errorf("%d models: want 1 to %d", len(c.Models), maxCompareModels)
	}
	models := map[string]*CompareModel{}
	for i := range c.Models {
		m := &c.Models[i]
		if err := checkModelName(m.Model); err != nil {
			return nil, fmt.Errorf("model %d: %v", i+1, err)
		}
		if models[m.Model] != nil {
			return nil, fmt.Errorf("model %s is listed twice", safetext.Quote(m.Model))
		}
		models[m.Model] = m
		if len(m.Results) != 0 && len(m.Results) != len(c.Metrics) {
			return nil, fmt.Errorf("model %s has %d results for %d metrics", safetext.Quote(m.Model), len(m.Results), len(c.Metrics))
		}
		if m.Done && len(m.Results) == 0 {
			return nil, fmt.Errorf("model %s is done but has no results", safetext.Quote(m.Model))
		}
		for k, r := range m.Results {
			if r.Metric != c.Metrics[k].Name {
				return nil, fmt.Errorf("model %s: result %d is of %s, not of metric %s", safetext.Quote(m.Model), k+1, safetext.Quote(r.Metric), safetext.Quote(c.Metrics[k].Name))
			}
			if err := checkResult(r.Result); err != nil {
				return nil, fmt.Errorf("model %s, %s: %v", safetext.Quote(m.Model), r.Metric, err)
			}
			if r.Look < 0 || r.Look > 64 {
				return nil, fmt.Errorf("model %s, %s: look %d", safetext.Quote(m.Model), r.Metric, r.Look)
			}
		}
	}
	return models, nil
}

func checkResult(r abstat.Result) error {
	if !slices.Contains(compareVerdicts, r.Verdict) {
		return fmt.Errorf("verdict %s is not one abstat gives", safetext.Quote(string(r.Verdict)))
	}
	if !slices.Contains(compareTests, r.Test) {
		return fmt.Errorf("test %s is not one abstat runs", safetext.Quote(r.Test))
	}
	if r.NA < 0 || r.NB < 0 || r.NA > maxCompareRepeats || r.NB > maxCompareRepeats {
		return fmt.Errorf("counts %d and %d: want 0 to %d", r.NA, r.NB, maxCompareRepeats)
	}
	for _, f := range []struct {
		key string
		x   float64
	}{{"median_a", r.MedianA}, {"median_b", r.MedianB}, {"change_pct", r.ChangePct}, {"estimate_pct", r.EstimatePct},
		{"lo_pct", r.LoPct}, {"hi_pct", r.HiPct}, {"level", r.Level}, {"p", r.P}, {"adjusted_p", r.AdjustedP}, {"alpha", r.Alpha}} {
		if !finite(f.x) || math.Abs(f.x) > maxFigure {
			return fmt.Errorf("%s is %v, not a figure a comparison gives", f.key, f.x)
		}
	}
	for _, f := range []struct {
		key string
		x   float64
	}{{"p", r.P}, {"adjusted_p", r.AdjustedP}, {"level", r.Level}, {"alpha", r.Alpha}} {
		if f.x < 0 || f.x > 1 {
			return fmt.Errorf("%s is %v, not in 0..1", f.key, f.x)
		}
	}
	if r.MedianA < 0 || r.MedianB < 0 {
		return errors.New("a median is negative")
	}
	if r.LoPct > r.HiPct {
		return fmt.Errorf("the interval %v to %v is reversed", r.LoPct, r.HiPct)
	}
	if len(r.Why) > 4096 || len(r.Direction) > 64 {
		return errors.New("the explanation or direction is longer than a comparison writes")
	}
	return nil
}

func (c *Compare) validateRuns(models map[string]*CompareModel) error {
	if len(c.Runs) > maxCompareRuns {
		return fmt.Errorf("%d runs: at most %d", len(c.Runs), maxCompareRuns)
	}
	type key struct {
		model string
		side  CompareSide
	}
	next := map[key]int{}
	for i, r := range c.Runs {
		if models[r.Model] == nil {
			return fmt.Errorf("run %d is of model %s, which the compare does not list", i+1, safetext.Quote(r.Model))
		}
		if r.Side != SideA && r.Side != SideB {
			return fmt.Errorf("run %d: side %s is not A or B", i+1, safetext.Quote(string(r.Side)))
		}
		k := key{r.Model, r.Side}
		if r.I != next[k] {
			return fmt.Errorf("run %d: repeat %d of %s on %s follows %d repeats: the runs are not in the order they ran", i+1, r.I, r.Side, safetext.Quote(r.Model), next[k])
		}
		next[k]++
		if len(r.Values) != len(c.Metrics) {
			return fmt.Errorf("run %d has %d readings for %d metrics", i+1, len(r.Values), len(c.Metrics))
		}
		for j, v := range r.Values {
			if !finite(v) || v <= 0 || v > maxFigure {
				return fmt.Errorf("run %d: %s is %v, not a finite positive reading", i+1, c.Metrics[j].Name, v)
			}
		}
		if r.Rejected < 0 || r.Rejected > maxCompareRepeats {
			return fmt.Errorf("run %d: %d rejections", i+1, r.Rejected)
		}
		if r.Run != "" {
			if c.Kind != CompareProfile {
				return fmt.Errorf("run %d names a profile run in a %s compare", i+1, c.Kind)
			}
			if err := CheckRunName(r.Run); err != nil {
				return fmt.Errorf("run %d: %v", i+1, err)
			}
		}
	}
	for name, m := range models {
		if m.NA != next[key{name, SideA}] || m.NB != next[key{name, SideB}] {
			return fmt.Errorf("model %s counts %d and %d runs, but the runs hold %d and %d", safetext.Quote(name), m.NA, m.NB, next[key{name, SideA}], next[key{name, SideB}])
		}
	}
	return nil
}

func (c *Compare) validateFiles(models map[string]*CompareModel) error {
	if (c.CSVBefore == "") != (c.CSVAfter == "") {
		return errors.New("the CSV pair is half named: give both files or neither")
	}
	if c.CSVBefore != "" {
		for _, f := range []struct {
			name   string
			before bool
		}{{c.CSVBefore, true}, {c.CSVAfter, false}} {
			want, err := CompareCSVName(c.Backend, c.Host, c.Date, c.Label, f.before)
			if err != nil {
				return err
			}
			if f.name != want {
				return fmt.Errorf("CSV %s: the compare's file is %s", safetext.Quote(f.name), want)
			}
		}
	}
	if c.GuardLog != "" && c.GuardLog != GuardLogFile {
		return fmt.Errorf("guard log %s: the compare's is %s", safetext.Quote(c.GuardLog), GuardLogFile)
	}
	if c.HostInfo != "" && c.HostInfo != HostInfoFile {
		return fmt.Errorf("host facts %s: the compare's are %s", safetext.Quote(c.HostInfo), HostInfoFile)
	}
	switch c.Kind {
	case CompareBench:
		if c.DirA != "" || c.DirB != "" || len(c.Diffs) > 0 {
			return errors.New("a bench compare names profile folders or differences")
		}
	case CompareProfile:
		if c.DirA != "" && c.DirA != CompareDirA || c.DirB != "" && c.DirB != CompareDirB {
			return fmt.Errorf("side folders %s and %s: a profile compare's are %s and %s", safetext.Quote(c.DirA), safetext.Quote(c.DirB), CompareDirA, CompareDirB)
		}
	}
	seen := map[string]bool{}
	for i, d := range c.Diffs {
		if models[d.Model] == nil {
			return fmt.Errorf("difference %d is of model %s, which the compare does not list", i+1, safetext.Quote(d.Model))
		}
		if seen[d.Model] {
			return fmt.Errorf("model %s has two differences", safetext.Quote(d.Model))
		}
		seen[d.Model] = true
		if d.JSON != d.Model+DiffJSONSuffix {
			return fmt.Errorf("difference of %s: its file is %s%s, not %s", safetext.Quote(d.Model), d.Model, DiffJSONSuffix, safetext.Quote(d.JSON))
		}
		if d.Markdown != "" && d.Markdown != d.Model+DiffMarkdownSuffix {
			return fmt.Errorf("difference of %s: its page is %s%s, not %s", safetext.Quote(d.Model), d.Model, DiffMarkdownSuffix, safetext.Quote(d.Markdown))
		}
	}
	return nil
}

// checkModelName: a model is a folder name under the models root, so it must be one
// path element (it also names the difference files).
func checkModelName(name string) error {
	if name == "." || name == ".." {
		return fmt.Errorf("model name %s is not a folder name", safetext.Quote(name))
	}
	if err := CheckRunName(name); err != nil {
		return fmt.Errorf("model name %s: one printable path element, not starting with a dot, at most %d bytes", safetext.Quote(name), MaxRunNameBytes)
	}
	return nil
}

// checkLabelText bounds a short printable name.
func checkLabelText(s string) error {
	if s == "" || len(s) > 64 || safetext.Clean(s) != s {
		return fmt.Errorf("name %s: give 1 to 64 printable characters", safetext.Quote(s))
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func isFullSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ReadCompare reads a compare manifest as a compare job writes it, bounded in size.
// Keys it does not know are ignored (a newer runner may add some); a file that is not
// a manifest, or one that fails Validate, is an error that names the file. A missing
// file gives an error that wraps fs.ErrNotExist.
func ReadCompare(path string) (Compare, error) {
	b, err := infile.ReadFile(path, maxCompareBytes)
	if err != nil {
		return Compare{}, fmt.Errorf("reading the compare manifest: %w", err)
	}
	bad := func(format string, a ...any) (Compare, error) {
		return Compare{}, fmt.Errorf("%s is not a manifest of a compare session: %s", path, fmt.Sprintf(format, a...))
	}
	var probe any
	if err := json.Unmarshal(b, &probe); err != nil {
		return bad("%v", err)
	}
	if _, ok := probe.(map[string]any); !ok {
		return bad("want a JSON object")
	}
	var c Compare
	if err := json.Unmarshal(b, &c); err != nil {
		return bad("%v", err)
	}
	if err := c.Validate(); err != nil {
		return bad("%v", err)
	}
	return c, nil
}

// ReadCompareFolder reads dir/compare.json and checks the folder against it: every
// file it names is a regular file in dir (not a link), and the side folders it names
// are directories in dir (not links). A file the manifest names that is missing is an
// error only for the manifest's own kind of file that must be there: the CSV pair and
// the differences; the guard's log and the host facts may be absent from a session
// that failed early.
func ReadCompareFolder(dir string) (Compare, error) {
	c, err := ReadCompare(filepath.Join(dir, CompareFile))
	if err != nil {
		return Compare{}, err
	}
	optional := map[string]bool{GuardLogFile: true, GuardLogFile + GuardEventsSuffix: true, HostInfoFile: true}
	for _, f := range c.Files()[1:] {
		fi, err := os.Lstat(filepath.Join(dir, f))
		switch {
		case errors.Is(err, fs.ErrNotExist) && optional[f]:
			continue
		case err != nil:
			return Compare{}, fmt.Errorf("the compare names %s: %w", f, err)
		case !fi.Mode().IsRegular():
			return Compare{}, fmt.Errorf("the compare's %s is %s, not a regular file", f, infile.Kind(fi.Mode()))
		}
	}
	for _, d := range []string{c.DirA, c.DirB} {
		if d == "" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, d))
		if err != nil {
			return Compare{}, fmt.Errorf("the compare names the folder %s: %w", d, err)
		}
		if !fi.IsDir() {
			return Compare{}, fmt.Errorf("the compare's %s is %s, not a folder", d, infile.Kind(fi.Mode()))
		}
	}
	return c, nil
}

// CompareName classifies a top-level name of a compare results folder: dir true for
// the side folders a and b (each a profile results folder, see ProfileName), false for
// a file of the compare (its manifest, the CSV pair, the guard's log and events, the
// host facts, a model's differences). Any other name is an error.
func CompareName(name string) (dir bool, err error) {
	switch name {
	case CompareDirA, CompareDirB:
		return true, nil
	case CompareFile, GuardLogFile, GuardLogFile + GuardEventsSuffix, HostInfoFile:
		return false, nil
	}
	if stem, ok := strings.CutSuffix(name, ".csv"); ok && (strings.HasSuffix(stem, CSVBeforeSuffix) || strings.HasSuffix(stem, CSVAfterSuffix)) {
		if n, err := benchcsv.ParseName(name); err == nil && n.Suffix != "" && n.Single == "" {
			return false, nil
		}
	}
	for _, s := range []string{DiffJSONSuffix, DiffMarkdownSuffix} {
		if m, ok := strings.CutSuffix(name, s); ok && m != "" && checkModelName(m) == nil {
			return false, nil
		}
	}
	return false, fmt.Errorf("%s: %s", safetext.Quote(name), CompareLayout)
}
