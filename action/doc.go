// Package action is the entry point of perfbot as a GitHub Actions step: it turns the
// step's inputs into a job for runner and its results into outputs and a step summary.
// It owns the Actions runtime contract (GITHUB_OUTPUT and friends), not the analysis.
package action
