// Package gitpub owns the git half of publishing: it builds ONE commit on top of a
// base commit the caller names (the default branch's head for a results pull request,
// so it carries only the bot's files) holding the report page, the results folder and
// the patched sources, and force-pushes it with a lease to the bot branch, so a rerun of
// the same results changes nothing and a newer profile replaces the older one. A branch
// that keeps its history (the Pages branch of the trend page) gets Append instead: one
// commit over the branch's head, pushed only while the head is still the one built on.
//
// Each request has its own bot branch (BranchName: prefix-pr-N, prefix-issue-N, the
// prefix itself for the nightly; siblings of the configured name, never below it, as
// git cannot hold both a and a/b). For the caller it reads the remote: a branch's head
// (BranchHead, DefaultBranchHead), whether a commit is in a history (IsAncestor, right
// in shallow clones too) and the bot branches (ListBranches); it deletes a stale bot
// branch only while it points at the commit seen and only when it is the bot's
// (DeleteBranch).
//
// It drives the real `git` binary with plumbing (no checkout is touched, no hooks run,
// no user config is needed) and keeps a failed push's commit reachable under
// refs/perfbot/. A publisher without a checkout reads the few files it needs of the
// pinned commit (the configuration, the attribution rules) from the git objects with
// ReadBlob: regular files only, size-bounded, never through a working tree.
//
// It must not talk to the GitHub API (opening or updating the pull request belongs to
// another package), must never write to or delete the default branch or any branch the
// configuration did not name (or a request's branch under one), must not commit
// profiler traces (they go to the workflow artifacts), and must never put a token in
// argv, URLs, logs or errors.
package gitpub
