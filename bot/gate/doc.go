// Package gate decides what one issue_comment event asks of perfbot, with the rules of
// docs/commands.md: ignore what is not a command or comes from a bot, refuse tampered
// edits, unknown commands, commenters below the configured permission and pull requests
// from forks, and pin the commit SHA of an accepted run (both commits of a compare: B,
// and A from base= or the pull request's merge base with its target branch; both ends
// of a bisection, on the default branch, the good one an ancestor of the bad one, the
// range and the runs it needs within the config's limits). The bot
// server and the Action's gate job both call Decide, so the two paths cannot drift
// apart.
//
// It asks GitHub only through the small GitHub interface (bot/gh implements it). It
// must not post anything (reactions, replies, dispatches are the caller's), keep state
// between events, or trust the payload's author_association.
package gate
