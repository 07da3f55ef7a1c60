package action

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/strs"
	"github.com/lablup/perfbot/runner/results"
)

// The jobs the `job` input selects.
const (
	JobProfile   = "profile"
	JobGemmTests = "gemm-tests"
	JobPatch     = "patch"
	JobBench     = "bench"
	JobGate      = "gate"
	JobPublish   = "publish"
	JobBisect    = "bisect"
)

// Jobs lists the jobs in the order docs/action.md describes them.
var Jobs = []string{JobProfile, JobGemmTests, JobPatch, JobBench, JobGate, JobPublish, JobBisect}

// InputNames are the inputs of action.yml, in its order.
var InputNames = []string{
	"job", "github-token", "app-id", "app-private-key", "github-api-url", "config", "models", "sampling",
	"ref", "base-ref", "repeats", "label", "request-id", "status-comment-id", "trigger-comment-id", "check-run-id", "epic", "issue", "dry-run", "results",
	"good-ref", "bad-ref",
}

// OutputNames are the outputs of action.yml, in its order: those of the host and
// publish jobs, then the gate's (the GPU job's inputs).
var OutputNames = []string{
	"results-dir", "report-path", "traces-dir", "pr-url", "pr-operation", "ranking", "verdict",
	"request-id", "sha", "models", "sampling", "epic", "trigger-comment-id", "accepted", "base", "repeats",
}

// Bounds of the inputs: every value is read whole, so each has a limit.
const (
	maxInput     = 4096
	maxKeyInput  = 16 << 10 // a PEM private key
	maxListItems = 32
)

var (
	refRE       = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	fullSHARE   = regexp.MustCompile(`^[0-9a-f]{40}$`)
	requestIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	modelRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	pathRE      = regexp.MustCompile(`^[A-Za-z0-9._][A-Za-z0-9._/-]{0,255}$`)
)

// Inputs are the step's inputs, checked for form; what they name (models, the config,
// the commit) is checked by the job that uses them.
type Inputs struct {
	Job      string
	Token    string
	AppID    int64
	AppKey   string
	APIURL   string
	Config   string // relative to the workspace
	Models   []string
	Sampling []string
	Ref      string
	// BaseRef is a compare's base commit (A); "" when the job is not a compare.
	BaseRef string
	// Repeats is a compare's most repeats per side (the cap of its adaptive plan), 0
	// for the config's limits.max_repeats; Label names its CSV pair, "" to derive it
	// from the request (pr-N on a pull request, else the two short SHAs).
	Repeats          int
	Label            string
	RequestID        string
	StatusCommentID  int64
	TriggerCommentID int64
	CheckRunID       int64
	Epic             int
	// Issue is the issue or pull request the command came from (the dispatch's
	// issue input); 0 takes the issue_comment event's.
	Issue  int
	DryRun bool
	// Results is the folder the publish job reads the GPU job's results from (where
	// the workflow downloaded its artifact); "" means this job's RUNNER_TEMP/perfbot.
	Results string
	// GoodRef and BadRef are a bisection's range: the last known good commit and the
	// first known bad one (full SHAs; BadRef "" means the pinned commit).
	GoodRef string
	BadRef  string
}

// readInputs reads and checks every input. Secrets are masked before anything else is
// written. Each problem names its input; all are reported at once.
func readInputs(r *Runtime) (Inputs, error) {
	var in Inputs
	r.Mask(r.Input("github-token"))
	r.Mask(r.Input("app-private-key"))

	var errs []error
	bad := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("input %s: %s", name, fmt.Sprintf(format, a...)))
	}
	get := func(name string) string {
		v := r.Input(name)
		limit := maxInput
		if name == "app-private-key" {
			limit = maxKeyInput
		}
		if len(v) > limit {
			bad(name, "%d bytes, more than the %d this input may hold", len(v), limit)
			return ""
		}
		return v
	}
	id := func(name string) int64 {
		v := get(name)
		if v == "" {
			return 0
		}
		// 0 is "none", as the server's dispatch sends it.
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			bad(name, "want a positive number (or 0 for none), got %q", clip(v))
			return 0
		}
		return n
	}

	in.Job = get("job")
	switch {
	case in.Job == "":
		bad("job", "missing: give one of %s", strings.Join(Jobs, ", "))
	case !contains(Jobs, in.Job):
		bad("job", "%q is not a job: give one of %s", clip(in.Job), strings.Join(Jobs, ", "))
	}
	in.Token = get("github-token")
	in.AppKey = get("app-private-key")
	if strings.ContainsAny(in.Token, " \t\r\n") {
		bad("github-token", "the token holds whitespace: pass the token alone")
	}
	in.AppID = id("app-id")
	if (in.AppID != 0) != (in.AppKey != "") {
		bad("app-id", "app-id and app-private-key go together: give both (App mode) or neither (github-token)")
	}
	in.APIURL = get("github-api-url")
	in.Config = get("config")
	if in.Config != "" && (!pathRE.MatchString(in.Config) || !filepath.IsLocal(filepath.FromSlash(in.Config))) {
		bad("config", "%q is not a path inside the checkout: give it relative to the repository root, e.g. %s", clip(in.Config), config.DefaultPath)
	}
	in.Models = list(get("models"))
	if len(in.Models) > maxListItems {
		bad("models", "%d names, more than %d", len(in.Models), maxListItems)
		in.Models = nil
	}
	for _, m := range in.Models {
		if !modelRE.MatchString(m) {
			bad("models", "%q is not a model name of the config (letters, digits, _ and -)", clip(m))
		}
	}
	in.Sampling = list(get("sampling"))
	if len(in.Sampling) > maxListItems {
		bad("sampling", "%d settings, more than %d", len(in.Sampling), maxListItems)
		in.Sampling = nil
	}
	for _, s := range in.Sampling {
		if _, err := results.ParseSampling(s); err != nil {
			bad("sampling", "%v", err)
		}
	}
	in.Ref = get("ref")
	if in.Ref != "" && !refRE.MatchString(in.Ref) {
		bad("ref", "%q is not a commit SHA (7 to 40 hex digits): the run is pinned to a commit", clip(in.Ref))
	}
	in.BaseRef = get("base-ref")
	switch {
	case in.BaseRef == "":
	case !refRE.MatchString(in.BaseRef):
		bad("base-ref", "%q is not a commit SHA (7 to 40 hex digits): a compare is pinned to its base commit", clip(in.BaseRef))
	case in.Job != JobProfile && in.Job != JobBench:
		bad("base-ref", "applies to the profile and bench jobs only (a compare), not %s", in.Job)
	}
	if v := get("repeats"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n < config.MinRepeats || n > config.MaxRepeats:
			bad("repeats", "want a whole number from %d to %d (at most the config's limits.max_repeats), got %q", config.MinRepeats, config.MaxRepeats, clip(v))
		case in.BaseRef == "":
			bad("repeats", "applies to a compare only: give base-ref too")
		default:
			in.Repeats = n
		}
	}
	if in.Label = get("label"); in.Label != "" {
		switch {
		case results.CheckCompareLabel(in.Label) != nil:
			bad("label", "%q names no CSV pair: give 1 to %d letters, digits, '.', '+' or '-', starting with a letter or digit (e.g. pr-1900)", clip(in.Label), results.MaxCompareLabelBytes)
			in.Label = ""
		case in.BaseRef == "":
			bad("label", "applies to a compare only: give base-ref too")
		}
	}
	in.RequestID = get("request-id")
	if in.RequestID != "" && !requestIDRE.MatchString(in.RequestID) {
		bad("request-id", "%q: want up to 64 letters, digits, '.', '_' or '-'", clip(in.RequestID))
	}
	in.StatusCommentID = id("status-comment-id")
	in.TriggerCommentID = id("trigger-comment-id")
	in.CheckRunID = id("check-run-id")
	if e := id("epic"); e > 1<<31-1 {
		bad("epic", "%d is not an issue number", e)
	} else {
		in.Epic = int(e)
	}
	if n := id("issue"); n > 1<<31-1 {
		bad("issue", "%d is not an issue number", n)
	} else {
		in.Issue = int(n)
	}
	switch v := strings.ToLower(get("dry-run")); v {
	case "", "false":
	case "true":
		in.DryRun = true
	default:
		bad("dry-run", "want true or false, got %q", clip(v))
	}
	in.Results = get("results")
	switch {
	case in.Results == "":
	case in.Job != JobPublish:
		bad("results", "applies to the publish job only, not %s", in.Job)
	case strings.ContainsFunc(in.Results, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		bad("results", "the folder's path holds a control character")
	case len(in.Ref) != 40:
		bad("ref", "publishing results from another job needs the pinned commit's full SHA (40 hex digits), got %q", clip(in.Ref))
	}
	for _, r := range []struct {
		name string
		p    *string
	}{{"good-ref", &in.GoodRef}, {"bad-ref", &in.BadRef}} {
		*r.p = get(r.name)
		switch {
		case *r.p == "":
		case !fullSHARE.MatchString(*r.p):
			bad(r.name, "%q is not a full commit SHA (40 hex digits): a bisection is pinned to its range", clip(*r.p))
		case in.Job != JobBisect:
			bad(r.name, "applies to the bisect job only, not %s", in.Job)
		}
	}
	if in.Job == JobBisect {
		switch {
		case in.GoodRef == "":
			bad("good-ref", "missing: the bisect job needs the last known good commit")
		case len(in.Models) != 1:
			bad("models", "the bisect job measures one model: give exactly one, got %d", len(in.Models))
		case len(in.Sampling) > 0:
			bad("sampling", "a bisection measures the harness's decode speed: leave sampling empty")
		}
	}
	switch {
	case in.Job == JobBench && in.BaseRef != "" && len(in.Sampling) > 0:
		bad("sampling", "a bench compare measures the harness's decode and prefill: leave sampling empty")
	case in.Job == JobBench && in.BaseRef == "" && (len(in.Models) > 0 || len(in.Sampling) > 0):
		bad("models", "the bench job runs the repository's harnesses over all their models: leave models and sampling empty")
	}
	if in.DryRun && in.Job != JobPublish && in.Job != JobGate {
		bad("dry-run", "applies to the publish and gate jobs only, not %s", in.Job)
	}
	return in, errors.Join(errs...)
}

// list splits a comma- or space-separated list.
func list(s string) []string {
	return strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' })
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// clip shortens a value quoted in an error; the annotation escapes it.
func clip(s string) string { return strs.Clip(s, 80, "...") }

// insideCheckout resolves a repo-relative path in the checkout, refusing one that leaves
// it, also through a symlink. A path that does not exist resolves to "" with no error.
func insideCheckout(root, rel string) (string, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("%s is not a path inside the checkout", rel)
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("resolving %s in the checkout: %w", rel, err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolving the checkout: %w", err)
	}
	if relTo, err := filepath.Rel(realRoot, real); err != nil || !filepath.IsLocal(relTo) {
		return "", fmt.Errorf("%s leads outside the checkout (to %s): the config must be a file of the repository", rel, real)
	}
	return real, nil
}
