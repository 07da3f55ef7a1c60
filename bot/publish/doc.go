// Package publish owns the last step of a profile: from a results folder written by
// the runner it ranks the port units, applies the grouped_gemm gate patch to the repo
// checkout and verifies the patched tree, renders the report page, commits the page,
// the results folder and the patched sources as one commit on the bot branch (through
// bot/gitpub), then makes the GitHub writes through bot/gh: the one pull request of the
// branch (a draft that says why when verification failed), the epic ranking comment
// with its history, the status comment, the check run and the trigger's reaction.
// With a dry run the GitHub writes become files in a folder and the push goes only to
// a remote on this machine.
//
// It orchestrates: it must not compute figures (the summaries and runner/rank do), lay
// out documents (bot/report does), build commits or speak HTTP itself (bot/gitpub and
// bot/gh do), modify the caller's checkout, or commit traces. It runs git only to make
// a scratch worktree of the base commit and, in a dry run, to point the local bot
// branch at the commit. Every write is idempotent: the same results again change nothing.
package publish
