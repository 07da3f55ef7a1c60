package results

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/internal/infile"
)

// SessionState is how far a profile session or a nightly run got (the manifests'
// "state").
type SessionState string

// Session states.
const (
	SessionRunning     SessionState = "running"     // in the manifest while the job is going on
	SessionComplete    SessionState = "complete"    // every run (or step) was tried
	SessionFailed      SessionState = "failed"      // stopped early: the manifest's error says why
	SessionInterrupted SessionState = "interrupted" // stopped by SIGINT/SIGTERM
)

// BuildStatus is how the build step of a session ended.
type BuildStatus string

// Build statuses.
const (
	BuildOK      BuildStatus = "ok"
	BuildFailed  BuildStatus = "failed"
	BuildSkipped BuildStatus = "skipped" // the job used what was built already
)

// RunStatus is how one run of the session ended.
type RunStatus string

// Run statuses. Only StatusOK runs have a summary.
const (
	StatusOK             RunStatus = "ok"
	StatusGuardGaveUp    RunStatus = "guard_gave_up"   // no clean attempt: wait budget spent or every attempt contended
	StatusBenchCrashed   RunStatus = "bench_crashed"   // the bench (or the profiler) exited non-zero
	StatusAnalysisFailed RunStatus = "analysis_failed" // the runs went fine but their files could not be analyzed
	StatusNotRun         RunStatus = "not_run"         // never started: no build, no model dir, an earlier fatal stop
	StatusInterrupted    RunStatus = "interrupted"     // stopped by SIGINT/SIGTERM
	StatusRunning        RunStatus = "running"         // in the manifest while the run is going on
)

// RunStatuses lists every status a manifest may hold.
var RunStatuses = []RunStatus{StatusOK, StatusGuardGaveUp, StatusBenchCrashed, StatusAnalysisFailed, StatusNotRun, StatusInterrupted, StatusRunning}

// Failed says the run did not produce its results.
func (s RunStatus) Failed() bool { return s != StatusOK && s != StatusRunning }

// Session is perfbot's manifest of one profile session (session.json): what was asked,
// on which commit, and how each run ended, with the files it left.
type Session struct {
	Commit        string    `json:"commit"`
	GFX           string    `json:"gfx"`
	Folder        string    `json:"folder"`
	OverlayCommit string    `json:"overlay_commit,omitempty"`
	Date          string    `json:"date"` // YYYY-MM-DD of the start, host time
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished,omitzero"`
	// State is running, complete (every run was tried), failed (the session stopped
	// early: Error says why) or interrupted.
	State    SessionState `json:"state"`
	Error    string       `json:"error,omitempty"`
	Models   []string     `json:"models"`
	Sampling []string     `json:"sampling"`
	Shape    Shape        `json:"shape"`
	Profiler []string     `json:"profiler_flags"`
	Build    Build        `json:"build"`
	Runs     []RunRecord  `json:"runs"`
	GuardLog string       `json:"guard_log"`
	HostInfo string       `json:"hostinfo"`
}

// Shape is the bench's workload of the session.
type Shape struct {
	Prompt   int `json:"prompt"`
	Generate int `json:"generate"`
	Warmup   int `json:"warmup"`
}

// Build is the bench build step.
type Build struct {
	Command []string    `json:"command"`
	Status  BuildStatus `json:"status"` // ok, failed, skipped
	Reason  string      `json:"reason,omitempty"`
	Seconds float64     `json:"seconds,omitempty"`
	Log     string      `json:"log,omitempty"` // in the traces folder
}

// RunRecord is one run: a model at one sampling setting.
type RunRecord struct {
	Name     string    `json:"name"`
	Model    string    `json:"model"`
	ModelDir string    `json:"model_dir"`
	Sampling string    `json:"sampling"`
	Status   RunStatus `json:"status"`
	Reason   string    `json:"reason,omitempty"`
	Plain    *Phase    `json:"plain,omitempty"`
	Profiled *Phase    `json:"profiled,omitempty"`
	// Files are the run's files in the results folder.
	Files []string `json:"files,omitempty"`
	// Traces is the run's folder under the traces root; ProfilerFiles are the files
	// the profiler left there.
	Traces        string   `json:"traces,omitempty"`
	ProfilerFiles []string `json:"profiler_files,omitempty"`
	// Summary figures, for a reader of the manifest alone.
	DecodeDispatches  int     `json:"decode_dispatches,omitempty"`
	GPUMsPerToken     float64 `json:"gpu_ms_per_token,omitempty"`
	HostGapMsPerToken float64 `json:"host_gap_ms_per_token,omitempty"`
}

// Phase is one guarded command of a run (the plain or the profiled bench) or of a
// nightly (a sweep, a re-measure).
type Phase struct {
	Label    string  `json:"label"`
	ExitCode int     `json:"exit_code"`
	Verdict  string  `json:"verdict"`
	Attempts int     `json:"attempts"`
	WaitSecs float64 `json:"wait_secs"`
	RunSecs  float64 `json:"run_secs,omitempty"`
	Log      string  `json:"log,omitempty"` // the cleaned log in the results folder
}

// Save writes the manifest to folder/session.json, atomically.
func (s *Session) Save(folder string) error {
	return writeManifest(filepath.Join(folder, SessionFile), "session manifest", s)
}

func statusList() string {
	names := make([]string, len(RunStatuses))
	for i, st := range RunStatuses {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}

var hexCommit = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

// maxSessionBytes bounds a session manifest: a few kilobytes per run.
const maxSessionBytes = 16 << 20

// ReadSession reads a session manifest as the profile job writes it. Keys it does not
// know are ignored (a newer runner may add some); a file that is not a manifest, or
// holds a value no runner writes, is an error that names the file. A missing file gives
// an error that wraps fs.ErrNotExist.
func ReadSession(path string) (Session, error) {
	b, err := infile.ReadFile(path, maxSessionBytes)
	if err != nil {
		return Session{}, fmt.Errorf("reading the session manifest: %w", err)
	}
	var s Session
	bad := func(format string, a ...any) (Session, error) {
		return Session{}, fmt.Errorf("%s is not a manifest of `perfbot run profile`: %s: publish the results folder the runner wrote, or remove the file",
			path, fmt.Sprintf(format, a...))
	}
	var probe any
	if err := json.Unmarshal(b, &probe); err != nil {
		return bad("%v", err)
	}
	if _, ok := probe.(map[string]any); !ok {
		return bad("want a JSON object")
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return bad("%v", err)
	}
	if err := s.Validate(); err != nil {
		return bad("%v", err)
	}
	return s, nil
}

// Validate checks what a manifest read from a results folder holds against what a
// runner writes: a commit SHA, a YYYY-MM-DD date, and runs with run names (one path
// element each) and known statuses.
func (s *Session) Validate() error {
	if s.Commit != "" && !hexCommit.MatchString(s.Commit) {
		return fmt.Errorf("commit %q is not a git commit SHA", s.Commit)
	}
	if s.Date != "" {
		if _, err := time.Parse(time.DateOnly, s.Date); err != nil {
			return fmt.Errorf("date %q is not YYYY-MM-DD", s.Date)
		}
	}
	for i, r := range s.Runs {
		if r.Name == "" {
			return fmt.Errorf("run %d has no name", i+1)
		}
		if err := CheckRunName(r.Name); err != nil {
			return fmt.Errorf("run %d: %v", i+1, err)
		}
		if !slices.Contains(RunStatuses, r.Status) {
			return fmt.Errorf("run %s has status %q; a runner writes one of %s", r.Name, r.Status, statusList())
		}
	}
	return nil
}
