// Package bot is the GitHub side of perfbot: webhook inbox, commands, permissions,
// dispatch, comments, check runs and pull requests live in its sub-packages. Everything
// that talks to the GitHub API is here; nothing here runs a GPU job.
package bot
