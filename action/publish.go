package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/gitpub"
	"github.com/lablup/perfbot/bot/intake"
	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/results"
)

// Verdicts of the publish job.
const (
	VerdictSuccess = "success" // pushed, pull request and comments written
	VerdictDraft   = "draft"   // published as a draft pull request (verification failed)
	VerdictFailure = "failure"
)

// publishFolder is where a dry run writes the GitHub side, under the step's root.
const publishFolder = "dry-run"

// publish publishes a profile's results folder through bot/publish as `perfbot
// publish` does (or an A/B compare's, as `perfbot publish --compare` does) (the commit on the bot branch, the pull request, the epic ranking
// comment, the status comment, check run and reaction), or a nightly baseline's folder
// as `perfbot baseline publish` does. With the results input it publishes what the GPU
// job left in its artifact, from a job of its own that never checks out or runs the
// pinned commit (publishResults); without it, what the host jobs of this same job left.
func (s *step) publish(ctx context.Context) error {
	if s.in.Results != "" {
		return s.publishResults(ctx)
	}
	commit, _, err := s.checkout(ctx)
	if err != nil {
		return err
	}
	repo := &gitpub.Publisher{Dir: s.workspace, Remote: "origin"}
	cfg, err := s.configAt(ctx, repo, commit)
	if err != nil {
		return err
	}
	folder, err := s.resultsFolder(cfg.Results.Profiles, commit)
	if err != nil {
		nightly := filepath.Join(s.root, filepath.FromSlash(cfg.Results.Benchmarks))
		if found, _ := filepath.Glob(filepath.Join(nightly, "*"+results.NightlySuffix)); len(found) == 0 {
			return fmt.Errorf("%w; nor a nightly baseline in %s: run job: profile or job: bench earlier in the same job", err, nightly)
		}
		dest, err := s.destination(ctx)
		if err != nil {
			return err
		}
		return s.publishBaseline(ctx, cfg, nightly, s.workspace, "", dest)
	}
	dest, err := s.destination(ctx)
	if err != nil {
		return err
	}
	return s.publishProfile(ctx, cfg, folder, s.workspace, commit, dest)
}

// publishResults publishes the results folder the workflow downloaded (the results
// input) in a job that holds the publishing secret: nothing of the target repository
// is checked out or run. The repository is cloned bare (blobs on demand) into
// RUNNER_TEMP, the pinned commit fetched, its configuration read from the git objects,
// and the artifact copied through a strict validation before anything reads it.
func (s *step) publishResults(ctx context.Context) error {
	ref := s.in.Ref
	src, err := filepath.Abs(s.in.Results)
	if err != nil {
		return fmt.Errorf("input results: %w", err)
	}
	fi, err := os.Lstat(src)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("input results: %s is not a folder: give the folder the workflow downloaded the GPU job's results artifact into", src)
	}
	dest, err := s.destination(ctx)
	if err != nil {
		return err
	}
	kind := artifactProfile
	switch {
	case hasNightlyManifest(src):
		kind = artifactNightly
	case intake.IsBisect(src):
		kind = artifactBisect
	case intake.IsCompare(src):
		kind = artifactCompare
	}
	cfg, folder, repoDir, cleanup, err := s.takeResults(ctx, src, ref, kind, dest)
	defer cleanup()
	switch {
	case err != nil && kind == artifactNightly:
		return err
	case err != nil:
		return s.failProfile(ctx, dest, err)
	case kind == artifactNightly:
		return s.publishBaseline(ctx, cfg, folder, repoDir, ref, dest)
	case kind == artifactCompare:
		return s.publishCompare(ctx, cfg, folder, repoDir, dest)
	case kind == artifactBisect:
		return s.publishBisect(ctx, cfg, folder, repoDir, dest)
	}
	return s.publishProfile(ctx, cfg, folder, repoDir, ref, dest)
}

// artifactKind is what the GPU job's artifact holds.
type artifactKind int

const (
	artifactProfile artifactKind = iota // a profile's <gfx>_<commit> folder
	artifactNightly                     // a nightly bench's folder
	artifactCompare                     // an A/B compare's <gfx>_<A8>_<B8> folder
	artifactBisect                      // a bisection folder (bisect.json)
)

// takeResults makes what publishResults publishes from: a bare clone of the repository
// without file contents (removed by cleanup) with the pinned commit fetched, the
// configuration read from its git objects, and the artifact's checked copy, which stays
// in RUNNER_TEMP/perfbot for the job's later steps (the results-dir output).
//
// For a compare, the manifest's B must be the pinned commit, and A's commit is fetched
// too: publishing reads A's attribution rules from it and builds the CSV pair's commit
// on it.
func (s *step) takeResults(ctx context.Context, src, ref string, kind artifactKind, dest publishDest) (cfg config.Config, folder, repoDir string, cleanup func(), err error) {
	cleanup = func() {}
	if err = os.MkdirAll(s.root, 0o755); err != nil {
		return
	}
	scratch, err := os.MkdirTemp(s.root, "clone-")
	if err != nil {
		err = fmt.Errorf("making a scratch folder: %w", err)
		return
	}
	cleanup = func() { os.RemoveAll(scratch) }
	url, err := s.repoURL()
	if err != nil {
		return
	}
	token := dest.gitToken
	if dest.dryRun != "" {
		token = s.in.Token // a dry run reads the repository with the workflow's token
	}
	var repo *gitpub.Publisher
	err = s.rt.Quiet("perfbot: fetch the pinned commit", func(w io.Writer) error {
		var err error
		if repo, err = gitpub.Clone(ctx, url, filepath.Join(scratch, "repo.git"), gitpub.CloneOptions{Token: token, Filter: "blob:none"}); err != nil {
			return err
		}
		if err := repo.Fetch(ctx, ref); err != nil {
			return err
		}
		fmt.Fprintf(w, "cloned %s without file contents and fetched %s; nothing of it is checked out\n", url, ref)
		return nil
	})
	if err != nil {
		return
	}
	if cfg, err = s.configAt(ctx, repo, ref); err != nil {
		return
	}
	keep, err := os.MkdirTemp(s.root, "results-")
	if err != nil {
		err = fmt.Errorf("making a folder for the results: %w", err)
		return
	}
	if folder, err = importResults(ctx, src, filepath.Join(keep, "checked"), kind); err != nil {
		err = fmt.Errorf("input results: %w", err)
		return
	}
	if kind == artifactCompare {
		var c results.Compare
		if c, err = results.ReadCompare(filepath.Join(folder, results.CompareFile)); err != nil {
			err = fmt.Errorf("input results: %w", err)
			return
		}
		if !strings.HasPrefix(c.ShaB, strings.ToLower(ref)) {
			err = fmt.Errorf("input results: the compare is of B %s, not of the pinned commit %s: the artifact is not this request's", c.ShaB, ref)
			return
		}
		err = s.rt.Quiet("perfbot: fetch the compare's base commit", func(w io.Writer) error {
			if err := repo.Fetch(ctx, c.ShaA); err != nil {
				return fmt.Errorf("fetching A's commit: %w", err)
			}
			fmt.Fprintf(w, "fetched A %s (its attribution rules, the base of the CSV pair's commit); nothing of it is checked out\n", c.ShaA)
			return nil
		})
		if err != nil {
			return
		}
		// The compare's settings (the threshold that fails its check run) are A's: the
		// commit the pull request is measured against, not the pull request's own
		// head, which could loosen its own threshold.
		if cfg, err = s.configAt(ctx, repo, c.ShaA); err != nil {
			return
		}
	}
	if kind == artifactBisect {
		err = s.fetchCulpritParent(ctx, repo, folder)
		if err != nil {
			return
		}
	}
	return cfg, folder, repo.Dir, cleanup, nil
}

// fetchCulpritParent fetches the parent of a bisection's first bad commit: publishing
// reads its attribution rules to diff the culprit's two profiles. A bisection that
// found none needs nothing more.
func (s *step) fetchCulpritParent(ctx context.Context, repo *gitpub.Publisher, folder string) error {
	b, err := results.ReadBisect(filepath.Join(folder, results.BisectFile))
	if err != nil {
		return fmt.Errorf("input results: %w", err)
	}
	if b.Outcome == nil || b.Outcome.LastGood == "" || b.Culprit == "" {
		return nil
	}
	return s.rt.Quiet("perfbot: fetch the culprit's parent", func(w io.Writer) error {
		if err := repo.Fetch(ctx, b.Outcome.LastGood); err != nil {
			return fmt.Errorf("fetching the culprit's parent: %w", err)
		}
		fmt.Fprintf(w, "fetched %s (its attribution rules, for the culprit's port impact); nothing of it is checked out\n", b.Outcome.LastGood)
		return nil
	})
}

// publishBisect publishes a bisection folder from the clone repoDir through
// bot/publish.PublishBisect: the outcome (the first bad commit, its pull request, the
// culprit's port impact) as one comment on the issue or pull request that asked (the
// issue input, else the event's), the status comment, the check run and the reaction.
// Nothing is committed.
func (s *step) publishBisect(ctx context.Context, cfg config.Config, folder, repoDir string, dest publishDest) error {
	bo := publish.BisectOptions{
		Target: s.target(folder, repoDir, cfg, dest),
		Marks:  s.marks(),
		Issue:  s.issue(), WorkflowRun: s.workflowRun(ctx),
	}
	sum, perr := quietly(ctx, s.rt, "perfbot: publish the bisection", publish.PublishBisect, bo, func(w io.Writer, sum publish.BisectSummary) {
		fmt.Fprintf(w, "bisection of %s from %s to %s: %s; its comment: %s\n", sum.Model, sum.Good, sum.Bad, sum.Outcome, sum.Comment)
	})
	return s.published(perr, sum.Ending, "results-dir", folder)
}

// target is where a publication of the results folder from the clone repoDir goes:
// this repository on dest, pushed with dest's token; cfg is the configuration the
// results are judged by.
func (s *step) target(folder, repoDir string, cfg config.Config, dest publishDest) publish.Target {
	return publish.Target{
		ResultsDir: folder, RepoDir: repoDir, Config: cfg, Repo: s.repo, ServerURL: s.serverURL,
		Sink: dest.sink(s.repo), GitToken: dest.gitToken,
	}
}

// marks are the request's check run, status comment and comment that asked, as the
// inputs name them: the end of a publication finishes them.
func (s *step) marks() publish.Marks {
	return publish.Marks{CheckRunID: s.in.CheckRunID, StatusCommentID: s.in.StatusCommentID, TriggerCommentID: s.in.TriggerCommentID}
}

// workflowRun is the link of this workflow run, "" when unknown.
func (s *step) workflowRun(ctx context.Context) string {
	for _, l := range s.runLinks(ctx, nil) {
		if l.Text == "workflow run" {
			return l.URL
		}
	}
	return ""
}

// published ends a publish: the outputs kv and the verdict (failure when publishing
// failed), and the step summary.
func (s *step) published(perr error, e publish.Ending, kv ...string) error {
	verdict := VerdictSuccess
	if perr != nil || e.Conclusion != "success" {
		verdict = VerdictFailure
	}
	errs := []error{perr, s.setOutputs(append(kv, "verdict", verdict)...)}
	if e.StepSummary != "" {
		errs = append(errs, s.rt.Summary(e.StepSummary))
	}
	return errors.Join(errs...)
}

// publishCompare publishes an A/B compare's folder from the clone repoDir (holding A's
// and B's commits) through bot/publish.PublishCompare: the CSV pair's pull request,
// the compare comment on the pull request that asked (the issue input, else the
// event's), the status comment, the check run (neutral unless the config's
// compare.fail_slower_pct fails it) and the reaction. The configuration is A's
// commit's (takeResults), so a pull request cannot change the threshold it is judged by.
func (s *step) publishCompare(ctx context.Context, cfg config.Config, folder, repoDir string, dest publishDest) error {
	co := publish.CompareOptions{
		Target: s.target(folder, repoDir, cfg, dest),
		Marks:  s.marks(),
		PR:     s.issue(), WorkflowRun: s.workflowRun(ctx),
	}
	sum, perr := quietly(ctx, s.rt, "perfbot: publish the compare", publish.PublishCompare, co, func(w io.Writer, sum publish.CompareSummary) {
		logPublished(w, "A/B "+sum.Kind+" compare "+sum.Label, sum.Git, sum.PR)
		fmt.Fprintf(w, "compare comment: %s\n", sum.Comment)
	})
	for _, f := range sum.Failing {
		s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: slower than compare.fail_slower_pct allows", Message: f})
	}
	return s.published(perr, sum.Ending, "results-dir", folder, "pr-url", sum.PR.URL, "pr-operation", sum.PR.Action)
}

// failProfile finishes a profile's publish that could not start: the status comment,
// the check run and the reaction say why (bot/publish.Fail), the verdict is failure.
func (s *step) failProfile(ctx context.Context, dest publishDest, cause error) error {
	po := publish.Options{
		Target: publish.Target{
			Config: config.Default(), Repo: s.repo, ServerURL: s.serverURL,
			Sink: dest.sink(s.repo),
		},
		Marks: s.marks(),
		Issue: s.issue(),
	}
	sum, err := publish.Fail(ctx, po, cause)
	errs := []error{err, s.setOutputs("verdict", VerdictFailure)}
	if sum.StepSummary != "" {
		errs = append(errs, s.rt.Summary(sum.StepSummary))
	}
	return errors.Join(errs...)
}

// repoURL is where publishResults clones the repository from.
func (s *step) repoURL() (string, error) {
	if u := s.rt.Getenv(EnvRepoURL); u != "" {
		return u, nil
	}
	server := strings.TrimRight(s.serverURL, "/")
	if server == "" || s.repo.Owner == "" {
		return "", errors.New("GITHUB_SERVER_URL or GITHUB_REPOSITORY is not set: publish needs the repository to clone")
	}
	return server + "/" + s.repo.Owner + "/" + s.repo.Name + ".git", nil
}

// maxConfigBytes bounds the configuration read from the pinned commit.
const maxConfigBytes = 1 << 20

// configAt reads the configuration of commit from the repository's git objects (the
// config input, else .github/perfbot.yml; the defaults when that is absent), never
// from a working tree: a regular file, bounded, parsed by the strict reader.
func (s *step) configAt(ctx context.Context, repo *gitpub.Publisher, commit string) (config.Config, error) {
	path, given := s.in.Config, s.in.Config != ""
	if !given {
		path = config.DefaultPath
	}
	b, err := repo.ReadBlob(ctx, commit, path, maxConfigBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !given:
		return config.Default(), nil
	case err != nil:
		return config.Config{}, fmt.Errorf("reading the configuration: %w", err)
	}
	cfg, err := config.Parse(b, path)
	if err != nil {
		return config.Config{}, fmt.Errorf("loading the config: %w", err)
	}
	return cfg, nil
}

// hasNightlyManifest says whether the downloaded folder is a nightly's (it holds a
// *.nightly.json) rather than a profile's.
func hasNightlyManifest(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), results.NightlySuffix) {
			return true
		}
	}
	return false
}

// publishProfile publishes a profile's results folder from the clone repoDir, pinned
// to commit.
func (s *step) publishProfile(ctx context.Context, cfg config.Config, folder, repoDir, commit string, dest publishDest) error {
	po := publish.Options{
		Target: s.target(folder, repoDir, cfg, dest),
		Base:   commit,
		Marks:  s.marks(),
		Issue:  s.issue(), Epic: s.in.Epic,
		RunLinks: s.runLinks(ctx, dest.client),
	}
	sum, perr := quietly(ctx, s.rt, "perfbot: publish", publish.Publish, po, func(w io.Writer, sum publish.Summary) {
		logPublished(w, sum.Results, sum.Git, sum.PR)
	})

	verdict := VerdictSuccess
	switch {
	case perr != nil || !sum.OK():
		verdict = VerdictFailure
	case sum.Draft:
		verdict = VerdictDraft
	}
	for _, why := range sum.Why {
		s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: draft pull request", Message: why})
	}
	for _, sk := range sum.Skipped {
		s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: file not committed",
			Message: sk + " in the results folder is not a results file perfbot commits; it stays out of the pull request"})
	}
	var rankJSON []byte
	errs := []error{perr}
	if sum.Ranking != nil { // publishing refuses a folder without runs
		var err error
		rankJSON, err = sum.Ranking.JSON()
		errs = append(errs, err)
	}
	errs = append(errs, s.setOutputs("results-dir", folder, "report-path", sum.Report, "pr-url", sum.PR.URL,
		"pr-operation", sum.PR.Action, "ranking", string(rankJSON), "verdict", verdict))
	if sum.StepSummary != "" {
		errs = append(errs, s.rt.Summary(sum.StepSummary))
	}
	return errors.Join(errs...)
}

// issue is the issue or pull request the command came from: the issue input (the
// server's dispatch), else the issue_comment event's.
func (s *step) issue() int {
	if s.in.Issue > 0 {
		return s.in.Issue
	}
	return s.eventIssue()
}

// publishDest is where publishing goes: a dry-run folder, or GitHub through a client
// with the token git pushes with (an App's token opens a pull request whose CI runs).
type publishDest struct {
	dryRun   string
	client   *gh.Client
	gitToken string
}

// sink is where the writes of a publish go: the dry-run folder, or GitHub's repo.
func (d publishDest) sink(repo gh.Repo) publish.Sink {
	if d.client == nil {
		return publish.ToDir(d.dryRun)
	}
	return publish.ToGitHub(d.client, repo)
}

func (s *step) destination(ctx context.Context) (publishDest, error) {
	if s.in.DryRun {
		return publishDest{dryRun: filepath.Join(s.root, publishFolder)}, nil
	}
	if s.repo.Owner == "" {
		return publishDest{}, errors.New("GITHUB_REPOSITORY is not set: publish needs the repository to open the pull request in (or set dry-run: true)")
	}
	c, err := s.client(ctx, s.repo)
	if err != nil {
		return publishDest{}, err
	}
	gitToken, err := c.GitToken(ctx)
	if err != nil {
		return publishDest{}, fmt.Errorf("getting a token for git: %w", err)
	}
	s.rt.Mask(gitToken)
	return publishDest{client: c, gitToken: gitToken}, nil
}

// publishBaseline publishes the nightly baseline the bench job left: the CSVs and page
// on the baseline branch and its pull request, the one tracking comment (on the epic
// input's issue, else the config's epic), and an issue per confirmed regression.
func (s *step) publishBaseline(ctx context.Context, cfg config.Config, folder, repoDir, commit string, dest publishDest) error {
	bo := publish.BaselineOptions{
		Target: s.target(folder, repoDir, cfg, dest),
		Base:   commit,
		Issue:  s.in.Epic,
	}
	sum, perr := quietly(ctx, s.rt, "perfbot: publish the nightly baseline", publish.PublishBaseline, bo, func(w io.Writer, sum publish.BaselineSummary) {
		logPublished(w, sum.Stem, sum.Git, sum.PR)
	})
	return s.published(perr, sum.Ending, "results-dir", folder, "report-path", sum.Page, "pr-url", sum.PR.URL, "pr-operation", sum.PR.Action)
}

// quietly runs pub(ctx, o), a bot/publish call, in the log group title with workflow
// commands stopped (Runtime.Quiet), and says there what it did (say); it returns pub's
// summary and error.
func quietly[O, S any](ctx context.Context, rt *Runtime, title string, pub func(context.Context, O) (S, error), o O, say func(w io.Writer, sum S)) (S, error) {
	var sum S
	err := rt.Quiet(title, func(w io.Writer) (err error) {
		sum, err = pub(ctx, o)
		say(w, sum)
		return err
	})
	return sum, err
}

// logPublished says in the log what a publish did with the branch and the pull request.
func logPublished(w io.Writer, what string, g publish.Git, pr publish.Outcome) {
	fmt.Fprintf(w, "published %s: commit %s on %s (%s), pull request %s %s\n", what, g.Commit, g.Branch, g.Action, pr.Action, pr.URL)
}

// importResults copies the downloaded artifact at src into dst, a fresh folder of this
// job, through bot/intake's strict validation (known names only, no links, size caps,
// every file parsed by perfbot's readers), and returns the copied folder that
// publishing reads. Nothing reads the artifact itself.
func importResults(ctx context.Context, src, dst string, kind artifactKind) (string, error) {
	switch kind {
	case artifactNightly:
		return intake.Nightly(ctx, src, dst, intake.DefaultLimits())
	case artifactCompare:
		return intake.Compare(ctx, src, dst, intake.DefaultLimits())
	case artifactBisect:
		return intake.Bisect(ctx, src, dst, intake.DefaultLimits())
	}
	return intake.Profile(ctx, src, dst, intake.DefaultLimits())
}
