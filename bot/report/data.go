package report

import (
	"github.com/lablup/perfbot/runner/results"
)

// Kind names one document perfbot renders.
type Kind string

// The documents, one template each.
const (
	Page        Kind = "page"         // data: PageData
	PRBody      Kind = "pr"           // data: PRData
	Epic        Kind = "epic"         // data: EpicData
	Status      Kind = "status"       // data: StatusData
	StepSummary Kind = "step-summary" // data: SummaryData
	CheckRun    Kind = "check-run"    // data: SummaryData
	// The nightly baseline's documents.
	BaselinePage    Kind = "baseline-page"    // data: BaselinePageData
	BaselinePR      Kind = "baseline-pr"      // data: BaselinePRData
	Tracking        Kind = "baseline-comment" // data: TrackingData
	RegressionIssue Kind = "regression-issue" // data: RegressionData
	// The step summary of the Action's host jobs.
	JobSummary Kind = "job-summary" // data: JobSummaryData
)

// Kinds lists every document kind.
var Kinds = []Kind{Page, PRBody, Epic, Status, StepSummary, CheckRun, BaselinePage, BaselinePR, Tracking, RegressionIssue, JobSummary}

// Hidden markers that let the bot find its own comments and bodies again.
const (
	EpicMarker   = "<!-- perfbot:port-ranking -->"
	StatusMarker = "<!-- perfbot:status -->"
	PRMarker     = "<!-- perfbot:rocm-profile -->"
)

// Limits of the places the documents go.
const (
	// MaxStepSummary is GitHub's bound on one step's summary (1 MiB).
	MaxStepSummary = 1 << 20
	// MaxCheckRunSummary is GitHub's bound on a check run's summary (65535 characters).
	MaxCheckRunSummary = 65535
	// MaxComment is GitHub's bound on a comment or pull request body (65536 characters).
	MaxComment = 65536
)

// Link is a link with untrusted text; URL is a full URL or a repo-relative path.
type Link struct {
	Text string
	URL  string
}

// Row is one label/value line of a two-column table.
type Row struct {
	Label string
	Value string
}

// GuardRow summarises the guard's evidence for one section (a run's plain or profiled
// phase, or the numeric tests).
type GuardRow struct {
	Section          string
	Attempts         int
	Rejected         int
	Samples          int
	ContendedSamples int
	IdleResets       int
	HolderResets     int    // idle resets caused by another GPU process
	CompilerResets   int    // idle resets caused by a compiler
	Waited           string // from the start of the wait to the idle window, e.g. "2m9s"
	Outcome          string
}

// RunState is a run of the session that did not produce a summary.
type RunState struct {
	Name   string
	Status string
	Detail string
}

// RulesUnit is one port unit of the attribution rules as the report shows it.
type RulesUnit struct {
	ID        string
	EpicItem  int
	Port      string
	Roles     []string
	Fractions []string // "moe_expert_gemv 0: a fused kernel still reads the weights"
}

// Rules says which attribution rules the analysis and the ranking used.
type Rules struct {
	Name    string
	Digest  string // sha256 of the rules file, "" for the shipped rules
	Classes []string
	Roles   []string
	Units   []RulesUnit
}

// Gemm is the outcome of the gather_mm numeric tests and what the patcher did with it.
type Gemm struct {
	OverlayCommit string
	Tests         []results.TestResult
	Decision      string
	Changed       []string // repo paths the patch changed
	Problem       string   // why the patch was not applied, if it was not
}

// WindowRow is one run's decode window checks; figures arrive formatted, from numbers
// (they are not escaped), Run and Reading are text.
type WindowRow struct {
	Run      string
	PerToken string // dispatches per generated token, as the summary has it
	Layers   string // the model's layer count, or "unknown"
	Steps    string // decode steps in the window, or "—"
	PerStep  string // dispatches per step ("495 (495 to 559)")
	PerLayer string // dispatches per step and layer
	Reading  string
}

// BandwidthRow is one run's roofline view; figures arrive formatted, from numbers
// (they are not escaped), Run and Basis are text.
type BandwidthRow struct {
	Run          string
	WeightsGB    string // weights read per decode step, GB, or "unknown"
	TokS         string // the decode rate used, with which run it is
	AchievedGBps string
	PeakGBps     string // or "unknown"
	PctOfPeak    string
	Basis        string // how the weights were counted, or why they are unknown
}

// PageData fills the report page.
type PageData struct {
	GFX      string
	Date     string // YYYY-MM-DD
	Commit   string // full SHA of the profiled commit
	Models   []string
	Sampling []string
	// Env is the environment table (from hostinfo.json).
	Env []Row
	// Method describes what ran, one sentence or command per entry.
	Method     []Row
	Guard      []GuardRow
	GuardNotes []string
	Runs       []*results.Summary
	FailedRuns []RunState
	// Window are the decode window's sanity checks, Bandwidth the roofline view, with
	// PeakNote saying where the device's peak comes from.
	Window    []WindowRow
	Bandwidth []BandwidthRow
	PeakNote  string
	Rules     Rules
	UnitIDs   []string // the columns of the port unit share table
	RankingMD string   // runner/rank's Markdown, trusted
	// Chart is the SVG chart committed beside the page (GPU ms/token by port unit);
	// nil when there is none.
	Chart       *Link
	Gemm        *Gemm
	GemmNotRun  string // why there is no Gemm: the tests were not run, or left no outcome
	Files       []Link
	Reproduce   []string // shell lines
	ReproduceBy string   // the comment that reproduces the run
}

// PRData fills the pull request body.
type PRData struct {
	GFX       string
	Date      string
	Commit    string
	Models    []string
	Sampling  []string
	Issue     int // where the command was given; 0 when unknown
	Report    Link
	Runs      []*results.Summary
	Order     string // "#2067, #2065, ..."
	RankingMD string // runner/rank's Markdown, trusted
	// Units are the ranked units for the short ranking table the body shows instead
	// of RankingMD's full one (which stays on the report page, RankingLink); none
	// shows RankingMD.
	Units       []EpicUnit
	RankingLink Link
	// KernelTimeOnly are the runs ranked on kernel time alone (no per-role host gap).
	KernelTimeOnly []string
	// Chart is the report page's SVG chart as an image URL; nil when there is none.
	Chart        *Link
	GemmMD       string // runner/patch's report Markdown, trusted
	VerifyMD     string // runner/patch's verification Markdown, trusted
	Draft        bool
	DraftReasons []string
	Files        []Link
	Notes        []string
	// Requester is who asked (a login), TriggerComment the comment that asked; either
	// may be empty.
	Requester      string
	TriggerComment *Link
	// OffMain says the profiled commit is not on the default branch; nil when it is.
	OffMain *OffMain
	// Withheld is the gate patch shown but not committed; nil when there is none or
	// it is committed.
	Withheld *Withheld
	// Traces is the workflow run's traces artifact, Run the workflow run; either is nil
	// when unknown (a publish outside Actions). The body links the artifact, else the
	// run whose artifacts hold the traces.
	Traces *Link
	Run    *Link
}

// OffMain is a profiled commit that is not in the default branch's history.
type OffMain struct {
	Commit string // the profiled commit, short
	PR     int    // the pull request whose head it is, 0 when not asked on one
	Branch string // the default branch
	Head   string // the default branch's head the results commit is built on, short
}

// Withheld is a gate patch shown rather than committed.
type Withheld struct {
	Why  string // why it is not committed
	Diff string // the unified diff that would apply (untrusted text)
	Cut  bool   // the diff was cut to a bound
}

// EpicUnit is one line of the ranked order in the epic comment.
type EpicUnit struct {
	Rank                  int
	ID                    string
	Port                  string
	Evidence              bool
	BestRun               string
	ReachedSharePct       float64
	RecoverableMsPerToken float64
	RecoverablePctOfWall  float64
	DispatchesRemoved     float64
	FallbackNotReachedPct float64
	Note                  string
	Override              string // the override's reason, when one moved or pinned the unit
}

// HistoryEntry is one earlier ranking kept in the epic comment.
type HistoryEntry struct {
	Key    string   `json:"key"` // results folder and date: one entry per profile
	Date   string   `json:"date"`
	GFX    string   `json:"gfx"`
	Commit string   `json:"commit"`
	Order  []string `json:"order"`
	Report string   `json:"report,omitempty"`
	PR     string   `json:"pr,omitempty"`
}

// EpicData fills the epic ranking comment.
type EpicData struct {
	Current HistoryEntry
	Units   []EpicUnit
	Report  Link
	PR      *Link
	// Changes says what changed since the previous ranking; empty on the first.
	Changes  []string
	Previous *HistoryEntry
	// History holds the kept rankings, newest first, the current one included: the
	// hidden copy keeps all of them, the table shows Earlier.
	History []HistoryEntry
}

// Earlier are the kept rankings other than the current one, newest first.
func (d EpicData) Earlier() []HistoryEntry {
	var out []HistoryEntry
	for _, e := range d.History {
		if e.Key != d.Current.Key {
			out = append(out, e)
		}
	}
	return out
}

// Step is one publishing step and how it went.
type Step struct {
	Name    string
	Outcome string
	Link    *Link
	Error   string
}

// StatusData fills the status comment.
type StatusData struct {
	State   string // queued, waiting, started (the run is in progress), running, publishing, done, cancelled or failed
	Command string // e.g. "/profile rocm"
	Model   int    // running model k of Models
	Models  int
	Detail  string
	Links   []Link
	Steps   []Step
	Errors  []string
}

// SummaryData fills the job step summary and the check run summary.
type SummaryData struct {
	GFX       string
	Date      string
	Commit    string
	DryRun    bool
	Runs      []*results.Summary
	Order     string
	RankingMD string
	Report    Link
	PR        *Link
	Draft     bool
	Verified  bool
	Steps     []Step
	Errors    []string
	Gemm      *Gemm // the grouped_gemm test outcomes, when the run had them
	// OffMain says the profiled commit is not on the default branch (nil when it is),
	// Withheld that the gate patch was therefore shown, not committed.
	OffMain  *OffMain
	Withheld bool
}

// JobSummaryData fills the step summary of a host job of the Action (profile,
// gemm-tests, bench): the headline figures of each run and the ranking, the test
// outcomes, or the nightly's sweeps and verdicts.
type JobSummaryData struct {
	Job        string // profile, gemm-tests, bench
	GFX        string
	Date       string
	Commit     string
	Verdict    string
	Folder     string // the results folder's name
	Runs       []*results.Summary
	FailedRuns []RunState
	RankingMD  string
	Gemm       *Gemm
	Lines      []Row // what each step gave (the bench job's sweeps and models)
	Errors     []string
}
