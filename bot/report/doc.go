// Package report owns the Markdown documents perfbot publishes: the profile report page,
// the pull request body, the epic ranking comment (with its hidden history), the status
// comment, the check run summary and the job step summary, and the view models some of
// them are made of from runner values (the nightly verdict rows and counts, the epic's
// units, the guard's evidence per section, the attribution rules in use, the numeric
// tests' section: views.go; the report page's rows, checks and prose from a results
// folder's values: page.go; the baseline page's from a nightly's: baselinepage.go; the
// A/B compare's comment and check run from abstat's results and portdiff's
// differences: compare.go; a bisection's comment, with the culprit's port impact from
// the same template part: bisect.go). It fills the embedded
// templates of package templates with plain values, escapes every piece of untrusted
// text (kernel names, model names, error output) so that it can never break a table or
// inject markup, and validates a rendered document by parsing it back with goldmark.
//
// It must not read result folders, run processes, talk to git or to GitHub, or compute
// figures of its own: numbers arrive from the summaries and the ranking and are only
// formatted here. Its data are plain values and the results folder's types
// (runner/results); it imports no runner code that runs anything (job, guard, proc,
// patch).
package report
