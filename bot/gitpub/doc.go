// Package gitpub owns the git half of publishing: it builds ONE commit on top of a
// pinned base commit holding the report page, the results folder and the patched
// sources, and force-pushes it with a lease to the bot branch, so a rerun of the same
// results changes nothing and a newer profile replaces the older one. It drives the real
// `git` binary with plumbing (no checkout is touched, no hooks run, no user config is
// needed) and keeps a failed push's commit reachable under refs/perfbot/. A publisher
// without a checkout reads the few files it needs of the pinned commit (the
// configuration, the attribution rules) from the git objects with ReadBlob: regular
// files only, size-bounded, never through a working tree.
//
// It must not talk to the GitHub API (opening or updating the pull request belongs to
// another package), must never write to the default branch or any branch the
// configuration did not name, must not commit profiler traces (they go to the workflow
// artifacts), and must never put a token in argv, URLs, logs or errors.
package gitpub
