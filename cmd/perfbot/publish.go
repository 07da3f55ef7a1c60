package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/bot/report"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/patch/patchrun"
	"github.com/lablup/perfbot/runner/results"
)

func init() {
	register(command{name: "publish", summary: "commit a profile's results and report, open the PR, update the epic ranking", run: runPublish})
}

const publishUsage = `--results DIR --repo DIR [--dry-run DIR] [--config FILE] [--github-repo OWNER/NAME] [--base SHA]
           [--branch NAME] [--base-branch NAME] [--remote NAME] [--check-run-id N] [--status-comment-id N]
           [--trigger-comment-id N] [--issue N] [--epic N] [--bot-login LOGIN] [--author-name NAME]
           [--author-email EMAIL] [--app-id N --installation-id N --app-key-file FILE] [--python FILE]
           [--verify-timeout DURATION] [--json]
   or: perfbot publish --compare DIR --repo DIR [--dry-run DIR] [--issue N] [--workflow-run URL] and the flags above
   or: perfbot publish --results BISECTION --repo DIR [--dry-run DIR] [--issue N] [--workflow-run URL] and the flags above
       (a folder holding bisect.json: its outcome as one comment on --issue, edited in place)

examples:
  perfbot publish --results out/benchmarks/rocm_profiles --repo mlxcel --github-repo lablup/mlxcel --issue 12
  perfbot publish --compare out/compare --repo mlxcel --github-repo lablup/mlxcel --issue 12 --check-run-id 77`

// publishOptions are the flags of `perfbot publish`.
type publishOptions struct {
	results, repo, dryRun, configPath    string
	base, branch, baseBranch, remote     string
	githubRepo, botLogin, authorName     string
	authorEmail, python                  string
	checkRun, statusComment, triggerCmnt int64
	issue, epic                          int
	verifyTimeout                        time.Duration
	json                                 bool
	appID, installationID                int64
	appKeyFile                           string
	compare, workflowRun                 string
}

// marks are the request's check run, status comment and trigger comment the flags
// name: the end of the publication finishes them.
func (o publishOptions) marks() publish.Marks {
	return publish.Marks{CheckRunID: o.checkRun, StatusCommentID: o.statusComment, TriggerCommentID: o.triggerCmnt}
}

func runPublish(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o publishOptions
	fs := newFlags("publish", publishUsage, stderr)
	fs.StringVar(&o.results, "results", "", "`DIR` written by perfbot run profile: the <gfx>_<commit> results folder or its parent")
	fs.StringVar(&o.repo, "repo", "", "clone of the target repository holding the profiled commit (its checkout is not touched); when the results have gemm_tests.json but no gemm_patch.json, the patch is prepared and verified here first, in a scratch worktree (it runs the clone's checker and verify commands)")
	fs.StringVar(&o.dryRun, "dry-run", "", "write the pull request, comments and check run as files into this folder instead of GitHub; push only to a remote on this machine")
	fs.StringVar(&o.configPath, "config", "", "perfbot.yml (default: <repo>/"+config.DefaultPath+" when present, else the defaults)")
	fs.StringVar(&o.base, "base", "", "pinned base commit (default: the profiled commit from session.json)")
	fs.StringVar(&o.branch, "branch", "", "bot branch (default: the request's own, <branches.profile>-pr-N or -issue-N for --issue N, else branches.profile)")
	targetFlags(fs, &o)
	fs.StringVar(&o.python, "python", "python3", "Python that runs the repo's checker when the patch is prepared here (no gemm_patch.json)")
	fs.Int64Var(&o.checkRun, "check-run-id", 0, "check run created at acceptance (App mode); completed at the end")
	fs.Int64Var(&o.statusComment, "status-comment-id", 0, "status comment to finish in place")
	fs.Int64Var(&o.triggerCmnt, "trigger-comment-id", 0, "comment that asked for the run; gets rocket or confused")
	fs.IntVar(&o.issue, "issue", 0, "issue or pull request the command came from")
	fs.IntVar(&o.epic, "epic", 0, "epic issue for the ranking comment (default: epic of the configuration)")
	fs.DurationVar(&o.verifyTimeout, "verify-timeout", 10*time.Minute, "time limit per verification command when the patch is prepared here")
	compareFlags(fs, &o)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if o.compare != "" {
		return runPublishCompare(ctx, o, stdout, stderr)
	}
	if o.results != "" && isBisection(o.results) {
		return runPublishBisect(ctx, o, stdout, stderr)
	}
	if o.results == "" || o.repo == "" {
		return usageError("--results and --repo are required (usage: perfbot publish %s)", publishUsage)
	}
	if o.checkRun < 0 || o.statusComment < 0 || o.triggerCmnt < 0 || o.issue < 0 || o.epic < 0 {
		return usageError("ids and issue numbers must be positive")
	}
	cfg, err := loadPublishConfig(o)
	if err != nil {
		return usageError("%v", err)
	}
	po := publish.Options{
		Target: publish.Target{
			ResultsDir: o.results, RepoDir: o.repo, Config: cfg, Branch: o.branch,
			BaseBranch: o.baseBranch, Remote: o.remote,
			Author:    gitpub.Identity{Name: o.authorName, Email: o.authorEmail},
			ServerURL: os.Getenv("GITHUB_SERVER_URL"),
		},
		Base:  o.base,
		Marks: o.marks(),
		Issue: o.issue, Epic: o.epic,
	}
	if po.Prepared, err = prepareHere(ctx, o, cfg, stderr); err != nil {
		return err
	}
	var c *gh.Client
	if po.Repo, c, po.GitToken, err = publishTarget(ctx, o); err != nil {
		return err
	}
	po.Sink = publishSink(c, po.Repo, o.dryRun)
	sum, perr := publish.Publish(ctx, po)
	return publishDone(o, "publish", sum.StepSummary, sum, sum.Results != "", func() { printPublishSummary(stdout, sum, o.dryRun, perr != nil) }, perr, stdout, stderr)
}

// prepareHere prepares the grouped_gemm gate patch on the maintainer's own clone when
// the results have the numeric tests' outcome but no prepared patch (the GPU job's
// patch step did not run, or the results come from `perfbot run`): the patch is applied
// in a scratch worktree of the profiled commit and the configured verification runs
// there, as the patch job does on the runner. It runs the clone's checker and verify
// commands: the maintainer trusts their own checkout, which a publish job never does.
// nil when there is nothing to prepare.
func prepareHere(ctx context.Context, o publishOptions, cfg config.Config, stderr io.Writer) (*patch.Prepared, error) {
	dir, err := publish.ResultsFolder(o.results)
	if err != nil {
		return nil, nil // Publish says what is wrong with the folder
	}
	if _, err := os.Lstat(filepath.Join(dir, patch.PreparedFile)); err == nil {
		return nil, nil
	}
	b, err := infile.ReadFile(filepath.Join(dir, results.GemmTestsFile), 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the numeric tests' outcome: %w", err)
	}
	outcome, err := patch.ParseOutcome(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, results.GemmTestsFile), err)
	}
	commit := o.base
	if commit == "" {
		if s, err := results.ReadSession(filepath.Join(dir, results.SessionFile)); err == nil {
			commit = s.Commit
		}
	}
	if commit == "" {
		_, commit, _ = strings.Cut(filepath.Base(dir), "_")
	}
	fmt.Fprintf(stderr, "perfbot publish: %s has %s but no %s: preparing the grouped_gemm gate patch here, in a scratch worktree of %s at %s (this runs the clone's checker and verify commands)\n",
		dir, results.GemmTestsFile, patch.PreparedFile, o.repo, commit)
	p, err := patchrun.Prepare(ctx, patchrun.PrepareOptions{RepoDir: o.repo, Commit: commit, Outcome: outcome, Verify: cfg.Verify,
		Python: o.python, VerifyTimeout: o.verifyTimeout})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// publishTarget is the repository on GitHub, a client of it (nil for a dry run) and the
// token git pushes with, from the flags and the environment.
func publishTarget(ctx context.Context, o publishOptions) (gh.Repo, *gh.Client, string, error) {
	var r gh.Repo
	if o.githubRepo != "" {
		var err error
		if r, err = gh.ParseRepo(o.githubRepo); err != nil {
			return r, nil, "", usageError("--github-repo: %v", err)
		}
	}
	token := strings.TrimSpace(os.Getenv("GITHUB_TOKEN"))
	if o.dryRun != "" {
		return r, nil, token, nil
	}
	if r.Owner == "" {
		return r, nil, "", usageError("give --github-repo owner/name (or set GITHUB_REPOSITORY), or --dry-run DIR")
	}
	c, err := publishClient(ctx, o, token, r)
	if err != nil {
		return r, nil, "", err
	}
	// git pushes as the same identity: an App's installation token opens bot PRs whose
	// CI runs (GITHUB_TOKEN's events start no workflows).
	if token, err = c.GitToken(ctx); err != nil {
		return r, nil, "", fmt.Errorf("getting a token for git: %w", err)
	}
	return r, c, token, nil
}

// publishDone writes the step summary and prints the summary (JSON with --json, else
// print when there is something to print). A publishing error is printed first, so the
// reason leads and the summary below it reads as what was done before it stopped.
func publishDone(o publishOptions, cmd, stepSummary string, sum any, printable bool, print func(), perr error, stdout, stderr io.Writer) error {
	if perr != nil {
		fmt.Fprintf(stderr, "perfbot %s: publishing: %v\n", cmd, perr)
	}
	if stepSummary != "" {
		if err := appendStepSummary(stepSummary); err != nil {
			fmt.Fprintf(stderr, "perfbot %s: %v\n", cmd, err)
		}
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else if printable {
		print()
	}
	if perr != nil {
		return &exitError{code: 1} // explained above
	}
	return nil
}

// targetFlags registers the flags both publishing commands share: where the commit goes,
// who makes it, how to authenticate, and --json.
func targetFlags(fs *flag.FlagSet, o *publishOptions) {
	fs.StringVar(&o.baseBranch, "base-branch", "", "branch the pull request merges into (default: the repository's default branch)")
	fs.StringVar(&o.remote, "remote", "origin", "remote of --repo to push to")
	fs.StringVar(&o.githubRepo, "github-repo", os.Getenv("GITHUB_REPOSITORY"), "target repository on GitHub, owner/name (default $GITHUB_REPOSITORY)")
	fs.StringVar(&o.botLogin, "bot-login", os.Getenv("PERFBOT_BOT_LOGIN"), "login of the token's account, e.g. github-actions[bot] (default $PERFBOT_BOT_LOGIN; looked up when empty)")
	fs.StringVar(&o.authorName, "author-name", "perfbot[bot]", "commit author name")
	fs.StringVar(&o.authorEmail, "author-email", "perfbot[bot]@users.noreply.github.com", "commit author email")
	fs.BoolVar(&o.json, "json", false, "print the summary as JSON")
	fs.Int64Var(&o.appID, "app-id", envInt("PERFBOT_APP_ID"), "GitHub App id: publish as the App installation instead of GITHUB_TOKEN (default $PERFBOT_APP_ID)")
	fs.Int64Var(&o.installationID, "installation-id", envInt("PERFBOT_INSTALLATION_ID"), "the App's installation id on the repository (default $PERFBOT_INSTALLATION_ID)")
	fs.StringVar(&o.appKeyFile, "app-key-file", os.Getenv("PERFBOT_APP_PRIVATE_KEY_FILE"), "the App's private key, PEM (default $PERFBOT_APP_PRIVATE_KEY_FILE)")
}

// publishClient authenticates as the App installation when an App id is given (its
// installation on repo looked up when no id is given), else with the token.
func publishClient(ctx context.Context, o publishOptions, token string, repo gh.Repo) (*gh.Client, error) {
	cred := gh.Credentials{Token: token, AppID: o.appID, InstallationID: o.installationID, Repo: repo}
	if o.appID == 0 {
		if strings.TrimSpace(token) == "" {
			return nil, usageError("no GitHub token (set GITHUB_TOKEN, give --app-id with --installation-id and --app-key-file, or use --dry-run DIR)")
		}
	} else {
		if o.installationID <= 0 || o.appKeyFile == "" {
			return nil, usageError("--app-id needs --installation-id and --app-key-file")
		}
		key, err := os.ReadFile(o.appKeyFile)
		if err != nil {
			return nil, fmt.Errorf("reading the App's private key: %w", err)
		}
		cred.PrivateKeyPEM = key
	}
	c, err := gh.Connect(ctx, cred, gh.Options{BaseURL: os.Getenv("GITHUB_API_URL"), Login: o.botLogin})
	if err != nil && o.appID == 0 {
		return nil, usageError("%v", err)
	}
	return c, err
}

// envInt reads a numeric default from the environment (0 when unset or not a number).
func envInt(name string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(os.Getenv(name)), 10, 64)
	return n
}

func loadPublishConfig(o publishOptions) (config.Config, error) {
	return config.LoadRepo(o.configPath, o.repo, false)
}

// appendStepSummary adds the summary to the Actions job's step summary, when there is one.
func appendStepSummary(md string) error {
	path := os.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	if len(md) > report.MaxStepSummary {
		md = gh.Truncate(md, report.MaxStepSummary)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("writing the step summary: %w", err)
	}
	if _, err := f.WriteString(md); err != nil {
		f.Close()
		return fmt.Errorf("writing the step summary: %w", err)
	}
	return f.Close()
}

func printPublishSummary(w io.Writer, s publish.Summary, dryRun string, failed bool) {
	var b strings.Builder
	b.WriteString(summaryHead(failed, s.Results, s.Date, s.DryRun, dryRun))
	fmt.Fprintf(&b, ": %d run(s)", len(s.Runs))
	if len(s.Order) > 0 {
		fmt.Fprintf(&b, ", ranked port order %s", strings.Join(s.Order, ", "))
	}
	b.WriteString("\n")
	g := s.Git
	switch {
	case g.Error != "":
		fmt.Fprintf(&b, "  commit    not pushed: %s\n", g.Error)
	case g.Commit != "":
		fmt.Fprintf(&b, "  commit    %s on %s: %s (remote %s, pushed %t)\n", g.Commit, g.Branch, g.Action, g.Remote, g.Pushed)
	}
	if s.Report != "" {
		fmt.Fprintf(&b, "  report    %s\n", s.Report)
	}
	if s.Patch != nil {
		fmt.Fprintf(&b, "  patch     %s %s%s\n", s.Patch.Decision, strings.Join(s.Patch.Changed, ", "), errSuffix(s.Patch.Error))
	}
	switch {
	case s.Verify.Passed:
		fmt.Fprintf(&b, "  verify    passed\n")
	case len(s.Verify.Failed) > 0:
		fmt.Fprintf(&b, "  verify    FAILED: %s\n", strings.Join(s.Verify.Failed, "; "))
	case failed:
		// Publishing stopped before the verification: there is no verdict to give.
	default:
		fmt.Fprintf(&b, "  verify    not run\n")
	}
	if s.Draft {
		fmt.Fprintf(&b, "  draft     %s\n", strings.Join(s.Why, "; "))
	}
	printOutcomes(&b, 9, []outcomeRow{{"pr", s.PR}, {"epic", s.Epic}, {"status", s.Status}, {"check run", s.CheckRun}, {"reaction", s.Reaction}}, s.Notes)
	io.WriteString(w, b.String())
}

// summaryHead is the first words of a publishing summary: "published NAME (DATE)", or
// "NOT published NAME" when publishing failed (its error is printed above), with the
// dry-run folder.
func summaryHead(failed bool, name, date string, isDry bool, dryRun string) string {
	head := "published "
	if failed {
		head = "NOT published: "
	}
	head += name
	if date != "" {
		head += " (" + date + ")"
	}
	if isDry {
		head += " (dry run into " + dryRun + ")"
	}
	return head
}

// outcomeRow is one GitHub write of a publishing summary.
type outcomeRow struct {
	name string
	o    publish.Outcome
}

// printOutcomes writes one line per write that happened, then the notes, the names in
// a column width wide.
func printOutcomes(b *strings.Builder, width int, rows []outcomeRow, notes []string) {
	for _, row := range rows {
		if row.o.Action == "" {
			continue
		}
		fmt.Fprintf(b, "  %-*s %s", width, row.name, row.o.Action)
		if row.o.URL != "" {
			fmt.Fprintf(b, " %s", row.o.URL)
		}
		if row.o.Detail != "" {
			fmt.Fprintf(b, " (%s)", row.o.Detail)
		}
		b.WriteString(errSuffix(row.o.Error) + "\n")
	}
	for _, n := range notes {
		fmt.Fprintf(b, "  %-*s %s\n", width, "note", n)
	}
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

// publishSink is where a publish's writes go: GitHub through c, else the dry-run folder.
func publishSink(c *gh.Client, r gh.Repo, dryRun string) publish.Sink {
	if c == nil {
		return publish.ToDir(dryRun)
	}
	return publish.ToGitHub(c, r)
}
