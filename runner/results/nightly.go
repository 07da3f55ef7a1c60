package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/baseline"
	"github.com/lablup/perfbot/runner/benchcsv"
	"github.com/lablup/perfbot/runner/hostinfo"
)

// Suffixes of the files that go with a nightly run's CSV, named after its stem
// (rocm_strixhalo-gfx1151_2026-10-08): the guard's evidence and perfbot's manifest.
const (
	GuardLogSuffix = ".guard.log"
	NightlySuffix  = ".nightly.json"
)

var nightlyManifest = regexp.MustCompile(`^[A-Za-z0-9._+-]+` + regexp.QuoteMeta(NightlySuffix) + `$`)

// IsNightlyManifest says name is a nightly manifest's: <stem>.nightly.json, the stem of
// letters, digits and ._+- only.
func IsNightlyManifest(name string) bool { return nightlyManifest.MatchString(name) }

// NightlyLayout says what a nightly results folder holds, for an error about a name
// that is not of it.
const NightlyLayout = "a nightly results folder holds one <stem>.nightly.json, the harness CSVs it names, <stem>.guard.log and <stem>.guard.log.jsonl, and the folders confirm-<model> and bisect-<model> its manifest names (docs/nightly.md)"

// Sweep names.
const (
	SweepMlxcel = "mlxcel"
	SweepMlxLM  = "mlx-lm"
)

// SweepStatus is how one harness sweep of a nightly ended.
type SweepStatus string

// Sweep statuses.
const (
	SweepOK          SweepStatus = "ok"
	SweepFailed      SweepStatus = "failed" // the harness exited non-zero or wrote no CSV
	SweepGuardGaveUp SweepStatus = SweepStatus(StatusGuardGaveUp)
	SweepNotRun      SweepStatus = SweepStatus(StatusNotRun)
	SweepInterrupted SweepStatus = SweepStatus(StatusInterrupted)
)

// Nightly is perfbot's manifest of one nightly baseline run (<stem>.nightly.json): what
// ran, how the guard saw it, the CSVs and their checks, the comparison with the
// history and the re-measures. The publisher reads it; the next night reads its model
// durations for the ETA.
type Nightly struct {
	Date     string    `json:"date"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// State is running, complete (every step was tried), failed or interrupted.
	State     SessionState  `json:"state"`
	Error     string        `json:"error,omitempty"`
	Commit    string        `json:"commit"`
	GFX       string        `json:"gfx"`
	Host      string        `json:"host"` // the hardware tag of the file names
	Stem      string        `json:"stem"`
	ModelsDir string        `json:"models_dir"`
	HostInfo  hostinfo.Info `json:"hostinfo"`
	Build     Build         `json:"build"`
	Sweeps    []Sweep       `json:"sweeps"`
	// CSVs are the harness files of this run in the folder, the re-measures included.
	CSVs     []string           `json:"csvs"`
	GuardLog string             `json:"guard_log"`
	Problems []benchcsv.Problem `json:"problems,omitempty"`
	// Tenants lists what the guard saw besides the run: rejected attempts with the
	// foreign GPU processes and compilers, and idle waits another process reset.
	Tenants    []string         `json:"tenants,omitempty"`
	Comparison *baseline.Report `json:"comparison,omitempty"`
	Remeasures []Remeasure      `json:"remeasures,omitempty"`
	// Bisects are the bisections of tonight's confirmed regressions.
	Bisects []NightBisect `json:"bisects,omitempty"`
}

// Sweep is one harness run over every model.
type Sweep struct {
	Name    string   `json:"name"` // mlxcel or mlx-lm
	Command []string `json:"command"`
	// Status is ok, failed (the harness exited non-zero or wrote no CSV),
	// guard_gave_up, not_run or interrupted.
	Status SweepStatus `json:"status"`
	Reason string      `json:"reason,omitempty"`
	Phase  *Phase      `json:"phase,omitempty"`
	CSVs   []string    `json:"csvs,omitempty"`
	Models []ModelTime `json:"models,omitempty"`
	Log    string      `json:"log,omitempty"` // the harness's output, in the logs folder
}

// ModelTime is how long one model of a sweep took, start to the next model's start.
type ModelTime struct {
	Model   string  `json:"model"`
	Seconds float64 `json:"seconds"`
	Result  string  `json:"result,omitempty"` // "35.41 tok/s", "skipped"
}

// Remeasure is the single-model run of a suspect.
type Remeasure struct {
	Model   string           `json:"model"`
	CSV     string           `json:"csv,omitempty"`
	Phase   *Phase           `json:"phase,omitempty"`
	Decode  float64          `json:"decode_tok_s,omitempty"`
	Verdict baseline.Verdict `json:"verdict"`
	// Reason is why there is no reading (Decode 0), or with one why it is not an A/B
	// (the single re-run's fallback) or why the A/B did not confirm the suspect.
	Reason string `json:"reason,omitempty"`
	// Confirm is the folder, below the nightly folder (ConfirmDirPrefix + model), of the
	// interleaved A/B that re-measured this suspect: a compare session (compare.json)
	// of the last good commit (A) against the first bad one (B). Empty when the suspect
	// was re-measured by a single re-run of tonight's commit (Decode), because the last
	// good commit was not known.
	Confirm string `json:"confirm,omitempty"`
	// Since is the first night (YYYY-MM-DD) of the change this re-measure was of, when
	// the change-point analysis made the suspicion (it may be an earlier night than
	// tonight); empty when the noise band made it (tonight's alone). A confirmed
	// re-measure (a regression or an improvement) cuts the history at that night for
	// the nights after it (ConfirmedChanges).
	Since string `json:"since,omitempty"`
}

// Folders below a nightly folder (docs/nightly.md): the A/B that confirms a suspect,
// and the bisection of a confirmed regression.
const (
	ConfirmDirPrefix = "confirm-"
	BisectDirPrefix  = "bisect-"
)

// NightBisect is the bisection a nightly ran for one confirmed regression whose commit
// range held more than one commit: Dir is its bisection folder (BisectDirPrefix +
// model, with bisect.json) below the nightly folder, empty with Reason when it did not
// run (the budget, no range, an error).
type NightBisect struct {
	Model  string `json:"model"`
	Good   string `json:"good"` // the last good commit, full SHA
	Bad    string `json:"bad"`  // the first bad commit, full SHA
	Dir    string `json:"dir,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// CSV returns the sweep's main file: the first it wrote, or "".
func (s Sweep) CSV() string {
	if len(s.CSVs) == 0 {
		return ""
	}
	return s.CSVs[0]
}

// Sweep returns the sweep of that name.
func (n *Nightly) Sweep(name string) (Sweep, bool) {
	for _, s := range n.Sweeps {
		if s.Name == name {
			return s, true
		}
	}
	return Sweep{}, false
}

// Durations are a sweep's model times by model name.
func (n *Nightly) Durations(sweep string) map[string]float64 {
	out := map[string]float64{}
	if s, ok := n.Sweep(sweep); ok {
		for _, m := range s.Models {
			out[m.Model] = m.Seconds
		}
	}
	return out
}

// Save writes the manifest to folder/<stem>.nightly.json, atomically; the folders it
// names below it are checked first.
func (n *Nightly) Save(folder string) error {
	if err := n.validateNested(); err != nil {
		return fmt.Errorf("the nightly manifest: %w", err)
	}
	return writeManifest(filepath.Join(folder, n.Stem+NightlySuffix), "nightly manifest", n)
}

// maxManifestBytes bounds a manifest read back: a few hundred kilobytes at most.
const maxManifestBytes = 16 << 20

// ReadNightly reads a nightly manifest as the nightly job writes it.
func ReadNightly(path string) (Nightly, error) {
	var n Nightly
	b, err := infile.ReadFile(path, maxManifestBytes)
	if err != nil {
		return n, fmt.Errorf("reading the nightly manifest: %w", err)
	}
	if err := json.Unmarshal(b, &n); err != nil {
		return n, fmt.Errorf("%s is not a manifest of `perfbot run bench`: %v", path, err)
	}
	if _, err := benchcsv.ParseName(n.Stem + ".csv"); err != nil {
		return n, fmt.Errorf("%s is not a manifest of `perfbot run bench`: its stem %q is not a harness name", path, n.Stem)
	}
	if err := n.validateNested(); err != nil {
		return n, fmt.Errorf("%s is not a manifest of `perfbot run bench`: %v", path, err)
	}
	return n, nil
}

// manifestsBefore lists the names of the nightly manifests in dir (regular files) of
// pair dated before date, oldest first; at most baseline.MaxHistoryFiles, the newest.
func manifestsBefore(dir, pair, date string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), NightlySuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if n, err := benchcsv.ParseName(stem + ".csv"); err == nil && n.Pair() == pair && n.Date < date {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out[max(0, len(out)-baseline.MaxHistoryFiles):]
}

// LastNight finds the newest manifest in dir of the same backend and host dated before
// date, so that tonight's progress can give an ETA from its model times. ok is false
// when there is none.
func LastNight(dir, pair, date string) (Nightly, bool) {
	names := manifestsBefore(dir, pair, date)
	if len(names) == 0 {
		return Nightly{}, false
	}
	n, err := ReadNightly(filepath.Join(dir, names[len(names)-1]))
	return n, err == nil
}

// ConfirmedChanges lists, by model, the first nights of the changes that the nightly
// manifests in dir of pair, dated before date, confirmed by their re-measure (a
// regression or an improvement): the change-point analysis of the next nights cuts the
// history there, as the publish does from the regression issues. A re-measure without
// Since was of its own night. Manifests that cannot be read are left out; at most
// baseline.MaxHistoryFiles are read.
func ConfirmedChanges(dir, pair, date string) map[string][]string {
	out := map[string][]string{}
	for _, name := range manifestsBefore(dir, pair, date) {
		stem := strings.TrimSuffix(name, NightlySuffix)
		m, err := ReadNightly(filepath.Join(dir, name))
		if err != nil || m.Stem != stem {
			continue
		}
		for _, rm := range m.Remeasures {
			if rm.Verdict != baseline.Regression && rm.Verdict != baseline.Improvement {
				continue
			}
			if since := cmp.Or(rm.Since, m.Date); since < date && !slices.Contains(out[rm.Model], since) {
				out[rm.Model] = append(out[rm.Model], since)
			}
		}
	}
	for _, d := range out {
		slices.Sort(d)
	}
	return out
}
