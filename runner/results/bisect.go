package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// BisectFile is the manifest of a bisection folder (docs/nightly.md, "Bisection on
// the GPU host"); the folder also holds guard.log with its events and hostinfo.json.
const BisectFile = "bisect.json"

// Bisection outcomes, as runner/changepoint names them.
const (
	BisectFound         = "found"
	BisectUndecided     = "undecided"
	BisectNotReproduced = "not reproduced"
)

// Bisect is perfbot's manifest of one bisection on the GPU host (bisect.json): the
// range (Good, the last known good commit, and Bad, the first known bad one), the one
// model and metric it was measured on, every commit of the range, every measurement in
// the order it ran, and the outcome. A bisection that stopped early (State failed or
// interrupted) keeps every reading it took and the outcome so far.
type Bisect struct {
	// Good and Bad are full 40-hex-digit SHAs; Commits the first-parent history from
	// Good to Bad, oldest first, both included.
	Good    string    `json:"good"`
	Bad     string    `json:"bad"`
	Model   string    `json:"model"`  // the model's folder name
	Metric  string    `json:"metric"` // "decode tok/s"
	Commits []string  `json:"commits"`
	Backend string    `json:"backend"`
	Host    string    `json:"host"`
	GFX     string    `json:"gfx,omitempty"`
	Date    string    `json:"date"`
	Started time.Time `json:"started"`
	// Finished is set when the bisection ended.
	Finished time.Time `json:"finished,omitzero"`
	// State is running, complete (the bisection ended: Outcome says how), failed
	// (Error says why) or interrupted (cancelled by SIGINT/SIGTERM; Error says where).
	State SessionState `json:"state"`
	Error string       `json:"error,omitempty"`
	// Params are the bisection's knobs (runner/changepoint's BisectParams).
	Params BisectParams `json:"params"`
	// Steps are the measurements in the order they ran; Runs the readings in all and
	// Rejected the attempts the guard refused (each redone).
	Steps    []BisectMeasurement `json:"steps"`
	Runs     int                 `json:"runs"`
	Rejected int                 `json:"rejected"`
	// Outcome is the bisection's answer; nil while it runs or when it stopped before
	// its first measurement.
	Outcome  *BisectOutcome `json:"outcome,omitempty"`
	GuardLog string         `json:"guard_log,omitempty"`
	HostInfo string         `json:"hostinfo,omitempty"`
	// Culprit is the folder (CulpritDir) below the bisection folder of the profile A/B
	// of the first bad commit (B) against its parent (A), a compare session with its
	// port-impact diff; empty with CulpritReason when none ran.
	Culprit       string `json:"culprit,omitempty"`
	CulpritReason string `json:"culprit_reason,omitempty"`
}

// CulpritDir is the folder below a bisection folder that holds the profile A/B of the
// first bad commit against its parent.
const CulpritDir = "culprit"

// BisectParams are the knobs of the bisection.
type BisectParams struct {
	ErrorRate    float64 `json:"error_rate"`
	EndRuns      int     `json:"end_runs"`
	Start        int     `json:"start"`
	Step         int     `json:"step"`
	MaxPerCommit int     `json:"max_per_commit"`
	Budget       int     `json:"budget"`
	EndAlpha     float64 `json:"end_alpha"`
	MinSigmaPct  float64 `json:"min_sigma_pct"`
}

// BisectMeasurement is one measurement: a commit's build run Readings times in a row.
type BisectMeasurement struct {
	Commit   string    `json:"commit"`
	Readings []float64 `json:"readings"`
}

// BisectOutcome is how the bisection ended: the most likely first bad commit and its
// parent (empty when the change was not reproduced), its posterior probability, the
// ends' difference, why, and per measured commit the posterior probability that it
// is at the bad level.
type BisectOutcome struct {
	Outcome    string  `json:"outcome"` // found, undecided or not reproduced
	FirstBad   string  `json:"first_bad,omitempty"`
	LastGood   string  `json:"last_good,omitempty"`
	Confidence float64 `json:"confidence"`
	EndsP      float64 `json:"ends_p"`
	ChangePct  float64 `json:"change_pct"`
	Why        string  `json:"why"`
	// Posterior holds, for every measured commit in range order, P(bad) and the side
	// the most likely first bad commit puts it on.
	Posterior []BisectPosterior `json:"posterior,omitempty"`
}

// BisectPosterior is one measured commit's place.
type BisectPosterior struct {
	Commit string  `json:"commit"`
	Runs   int     `json:"runs"`
	PBad   float64 `json:"p_bad"`
	Side   string  `json:"side"` // good or bad
}

// Bounds of a bisection manifest.
const (
	// MaxBisectCommits is the most commits a bisection range may hold.
	MaxBisectCommits = 1024
	maxBisectRuns    = 100000
	maxBisectBytes   = 16 << 20
	maxBisectWhy     = 4096
)

var bisectOutcomes = []string{BisectFound, BisectUndecided, BisectNotReproduced}

// Save writes the manifest to folder/bisect.json, atomically, after Validate.
func (b *Bisect) Save(folder string) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("the bisection manifest: %w", err)
	}
	return WriteJSON(folder, BisectFile, "bisection manifest", b)
}

// Validate checks what a bisection manifest holds against what a runner writes: full
// SHAs, a range of 2 to MaxBisectCommits distinct commits from Good to Bad, a model
// that is a folder name, a known state and outcome, measurements of commits of the
// range with finite positive readings that add up to Runs, an outcome whose commits
// are adjacent in the range, and probabilities in [0, 1].
func (b *Bisect) Validate() error {
	for _, s := range []struct{ what, sha string }{{"good", b.Good}, {"bad", b.Bad}} {
		if !isFullSHA(s.sha) {
			return fmt.Errorf("the %s commit is %s, not a full 40-hex-digit SHA", s.what, safetext.Quote(s.sha))
		}
	}
	if err := checkModelName(b.Model); err != nil {
		return err
	}
	if err := checkLabelText(b.Metric); err != nil {
		return fmt.Errorf("metric: %v", err)
	}
	n := len(b.Commits)
	if n < 2 || n > MaxBisectCommits || b.Commits[0] != b.Good || b.Commits[n-1] != b.Bad {
		return fmt.Errorf("%d commits in range: want 2 to %d, from the good commit to the bad one", n, MaxBisectCommits)
	}
	index := make(map[string]int, n)
	for i, c := range b.Commits {
		if !isFullSHA(c) {
			return fmt.Errorf("commit %d of the range is %s, not a full SHA", i+1, safetext.Quote(c))
		}
		if _, dup := index[c]; dup {
			return fmt.Errorf("commit %s is twice in the range", c)
		}
		index[c] = i
	}
	if len(b.Host) > 64 || !hostTagRE.MatchString(b.Host) || b.Backend == "" || checkLabelText(b.Backend) != nil {
		return fmt.Errorf("backend %s, host %s: want a backend and a hardware tag", safetext.Quote(b.Backend), safetext.Quote(b.Host))
	}
	if _, err := time.Parse(time.DateOnly, b.Date); err != nil {
		return fmt.Errorf("date %s is not YYYY-MM-DD", safetext.Quote(b.Date))
	}
	if !slices.Contains(compareStates, b.State) {
		return fmt.Errorf("state %s: a runner writes running, complete, failed or interrupted", safetext.Quote(string(b.State)))
	}
	p := b.Params
	if !finite(p.ErrorRate) || !finite(p.EndAlpha) || !finite(p.MinSigmaPct) || p.Budget < 0 || p.Budget > maxBisectRuns ||
		min(p.EndRuns, p.Start, p.Step, p.MaxPerCommit) < 0 || max(p.EndRuns, p.Start, p.Step, p.MaxPerCommit) > maxBisectRuns {
		return errors.New("the parameters are out of range")
	}
	runs := 0
	for i, s := range b.Steps {
		if _, ok := index[s.Commit]; !ok {
			return fmt.Errorf("step %d measured %s, which is not in the range", i+1, safetext.Quote(s.Commit))
		}
		if len(s.Readings) == 0 {
			return fmt.Errorf("step %d has no readings", i+1)
		}
		for _, v := range s.Readings {
			if !finite(v) || v <= 0 {
				return fmt.Errorf("step %d has the reading %v: want finite positive values", i+1, v)
			}
		}
		runs += len(s.Readings)
		if runs > maxBisectRuns {
			return fmt.Errorf("more than %d readings", maxBisectRuns)
		}
	}
	if runs != b.Runs || b.Rejected < 0 || b.Rejected > maxBisectRuns {
		return fmt.Errorf("runs %d, rejected %d: the steps hold %d readings", b.Runs, b.Rejected, runs)
	}
	if b.State == SessionComplete && b.Outcome == nil {
		return errors.New("a complete bisection has no outcome")
	}
	if !bisectText(b.Error) {
		return errors.New("the error is not printable text of at most 4096 bytes")
	}
	for _, f := range []string{b.GuardLog, b.HostInfo} {
		if f != "" && f != GuardLogFile && f != HostInfoFile {
			return fmt.Errorf("the bisection names the file %s: a bisection folder holds %s, %s and %s", safetext.Quote(f), BisectFile, GuardLogFile, HostInfoFile)
		}
	}
	if b.Culprit != "" && b.Culprit != CulpritDir {
		return fmt.Errorf("the culprit's folder is %s: a bisection names %s", safetext.Quote(b.Culprit), CulpritDir)
	}
	if !bisectText(b.CulpritReason) {
		return errors.New("the culprit's reason is not printable text of at most 4096 bytes")
	}
	if b.Culprit != "" && (b.Outcome == nil || b.Outcome.Outcome != BisectFound) {
		return errors.New("a bisection that found no first bad commit names a culprit")
	}
	if b.Outcome != nil {
		return b.Outcome.validate(index)
	}
	return nil
}

func (o *BisectOutcome) validate(index map[string]int) error {
	if !slices.Contains(bisectOutcomes, o.Outcome) {
		return fmt.Errorf("outcome %s: want found, undecided or not reproduced", safetext.Quote(o.Outcome))
	}
	if o.Outcome == BisectNotReproduced {
		if o.FirstBad != "" || o.LastGood != "" {
			return errors.New("a change not reproduced names a first bad commit")
		}
	} else {
		hi, okHi := index[o.FirstBad]
		lo, okLo := index[o.LastGood]
		if !okHi || !okLo || lo != hi-1 {
			return fmt.Errorf("the first bad commit %s and the last good one %s are not neighbours of the range", safetext.Quote(o.FirstBad), safetext.Quote(o.LastGood))
		}
	}
	if !(o.Confidence >= 0 && o.Confidence <= 1) || !(o.EndsP >= 0 && o.EndsP <= 1) || !finite(o.ChangePct) {
		return fmt.Errorf("confidence %v, ends' p %v, change %v %%: want probabilities and a finite change", o.Confidence, o.EndsP, o.ChangePct)
	}
	if !bisectText(o.Why) {
		return errors.New("the outcome's why is not printable text of at most 4096 bytes")
	}
	last := -1
	for _, p := range o.Posterior {
		i, ok := index[p.Commit]
		if !ok || i <= last {
			return fmt.Errorf("the posterior of %s: not a commit of the range in range order", safetext.Quote(p.Commit))
		}
		last = i
		if !(p.PBad >= 0 && p.PBad <= 1) || p.Runs < 1 || p.Runs > maxBisectRuns || p.Side != "good" && p.Side != "bad" {
			return fmt.Errorf("the posterior of %s: P(bad) %v, %d runs, side %s", p.Commit, p.PBad, p.Runs, safetext.Quote(p.Side))
		}
	}
	return nil
}

// ReadBisect reads a bisection manifest as a bisect job writes it, bounded in size;
// a file that is not one, or fails Validate, is an error naming the file. A missing
// file gives an error that wraps fs.ErrNotExist.
func ReadBisect(path string) (Bisect, error) {
	data, err := infile.ReadFile(path, maxBisectBytes)
	if err != nil {
		return Bisect{}, fmt.Errorf("reading the bisection manifest: %w", err)
	}
	bad := func(format string, a ...any) (Bisect, error) {
		return Bisect{}, fmt.Errorf("%s is not a manifest of a bisection: %s", path, fmt.Sprintf(format, a...))
	}
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		return bad("%v", err)
	}
	if _, ok := probe.(map[string]any); !ok {
		return bad("want a JSON object")
	}
	var b Bisect
	if err := json.Unmarshal(data, &b); err != nil {
		return bad("%v", err)
	}
	if err := b.Validate(); err != nil {
		return bad("%v", err)
	}
	return b, nil
}

// bisectText says s is valid UTF-8 of printable characters (spaces included) and at
// most maxBisectWhy bytes: an error or a why that a page may show.
func bisectText(s string) bool {
	if len(s) > maxBisectWhy || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}
