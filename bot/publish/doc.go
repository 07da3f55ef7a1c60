// Package publish owns the last step of a profile: from a results folder written by
// the runner it ranks the port units, renders the report page, commits the page, the
// results folder and the grouped_gemm gate patch the runner prepared (gemm_patch.json:
// the patched sources as data) as one commit on the default branch's head, on the
// request's own bot branch (through bot/gitpub), then makes the GitHub writes through
// bot/gh: the one pull request of the branch (a draft that says why when the patch was
// not applied or its verification failed), the epic ranking comment with its history,
// the status comment, the check run and the trigger's reaction. A profiled commit that
// is not on the default branch gets its patch shown, not committed, and its report also
// on the requesting pull request; the bot branches of closed requests are deleted. With a dry run the GitHub writes become files in a folder and the
// push goes only to a remote on this machine.
//
// Publishing is a plan, then its effects. PlanProfile, PlanBaseline, PlanCompare (an
// A/B compare: the CSV pair, its comment on the pull request, a check run neutral unless
// a threshold fails it) and PlanBisect (a hand-started bisection: its outcome, the first
// bad commit's pull request and the culprit's port impact as one comment on the thread
// that asked; the nightly's own bisections go to their regression issue) read the results (and the few files of the pinned commit they
// need; PlanBaseline also the bot's regression issues, open and closed, whose markers
// and perfbot-accepted labels say which change points were confirmed and accepted) and
// return a Plan: the commit to push and the steps after it, writing nothing. One apply
// runs the steps through a Sink,
// ToGitHub or ToDir (the dry run), each step recording its outcome; the conclusion is
// computed from the failures at the end. A new kind of publication is a new planner
// composing the same steps (PRStep, CommentStep, IssuesStep, StatusStep, CheckRunStep,
// ReactStep, StepSummaryStep). The nightly's trend page (bot/trend) is committed with the
// baseline or, with PagesStep, added as one commit to the Pages branch (trendpub.go).
//
// It runs in the job that holds the publishing secret, so it runs nothing of the target
// repository: the patch and its verification are prepared on the runner that ran the
// pinned commit (runner/patch/patchrun), and the few files it needs of the pinned commit
// (the attribution rules) are read from the git objects, never from a working tree.
//
// It orchestrates: it must not compute figures (the summaries and runner/rank do), lay
// out documents (bot/report does), build commits or speak HTTP itself (bot/gitpub and
// bot/gh do), modify the caller's checkout, or commit traces. It runs git only to pin
// the profiled commit and, in a dry run, to read the default branch's head from the
// clone and point the local bot branch at the commit. Every
// write is idempotent: the same results again change nothing.
package publish
