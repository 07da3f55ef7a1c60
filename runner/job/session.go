package job

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/results"
)

// Names of the session files in the results folder (the publisher reads them).
const (
	SessionFile  = "session.json"
	HostInfoFile = "hostinfo.json"
	GuardLogFile = "guard.log"
	// GemmTestsFile is where the workflow puts the numeric tests' outcome.
	GemmTestsFile = "gemm_tests.json"
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
	State    string      `json:"state"`
	Error    string      `json:"error,omitempty"`
	Models   []string    `json:"models"`
	Sampling []string    `json:"sampling"`
	Shape    Shape       `json:"shape"`
	Profiler []string    `json:"profiler_flags"`
	Build    Build       `json:"build"`
	Runs     []RunRecord `json:"runs"`
	GuardLog string      `json:"guard_log"`
	HostInfo string      `json:"hostinfo"`
}

// Shape is the bench's workload of the session.
type Shape struct {
	Prompt   int `json:"prompt"`
	Generate int `json:"generate"`
	Warmup   int `json:"warmup"`
}

func shapeOf(s config.Shape) Shape {
	return Shape{Prompt: s.Prompt, Generate: s.Generate, Warmup: s.Warmup}
}

// Build is the bench build step.
type Build struct {
	Command []string `json:"command"`
	Status  string   `json:"status"` // ok, failed, skipped
	Reason  string   `json:"reason,omitempty"`
	Seconds float64  `json:"seconds,omitempty"`
	Log     string   `json:"log,omitempty"` // in the traces folder
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

// Phase is one guarded command of a run (the plain or the profiled bench).
type Phase struct {
	Label    string  `json:"label"`
	ExitCode int     `json:"exit_code"`
	Verdict  string  `json:"verdict"`
	Attempts int     `json:"attempts"`
	WaitSecs float64 `json:"wait_secs"`
	RunSecs  float64 `json:"run_secs,omitempty"`
	Log      string  `json:"log,omitempty"` // the cleaned log in the results folder
}

// ProfileReport is what Profile did.
type ProfileReport struct {
	// Folder is the results folder, OutDir/<results.profiles>/<gfx>_<commit8>; "" when
	// the session stopped before it knew the GPU and commit.
	Folder  string
	Session Session
}

// Failed returns the runs that did not produce results.
func (r ProfileReport) Failed() []RunRecord {
	var out []RunRecord
	for _, run := range r.Session.Runs {
		if run.Status.Failed() {
			out = append(out, run)
		}
	}
	return out
}

// OnlyGuardGaveUp says every failed run failed because the guard gave up (a busy
// host: worth retrying later), and at least one did.
func (r ProfileReport) OnlyGuardGaveUp() bool {
	failed := r.Failed()
	for _, run := range failed {
		if run.Status != StatusGuardGaveUp {
			return false
		}
	}
	return len(failed) > 0
}

func (s *Session) save(folder string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the session manifest: %w", err)
	}
	if err := results.WriteFileAtomic(filepath.Join(folder, SessionFile), append(b, '\n')); err != nil {
		return fmt.Errorf("writing the session manifest: %w", err)
	}
	return nil
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

// ReadSession reads a session manifest as Profile writes it. Keys it does not know are
// ignored (a newer runner may add some); a file that is not a manifest, or holds a value
// no runner writes, is an error that names the file. A missing file gives an error that
// wraps fs.ErrNotExist.
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
	if s.Commit != "" && !hexCommit.MatchString(s.Commit) {
		return bad("commit %q is not a git commit SHA", s.Commit)
	}
	if s.Date != "" {
		if _, err := time.Parse(time.DateOnly, s.Date); err != nil {
			return bad("date %q is not YYYY-MM-DD", s.Date)
		}
	}
	for i, r := range s.Runs {
		if r.Name == "" {
			return bad("run %d has no name", i+1)
		}
		if err := results.CheckRunName(r.Name); err != nil {
			return bad("run %d: %v", i+1, err)
		}
		if !slices.Contains(RunStatuses, r.Status) {
			return bad("run %s has status %q; a runner writes one of %s", r.Name, r.Status, statusList())
		}
	}
	return s, nil
}
