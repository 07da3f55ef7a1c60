// Package abrun holds the decisions of one A/B session on the GPU host (docs/ab.md, "The
// GPU session"): which side and which repeat runs next, what happens when the guard
// rejects a run, when to stop adding runs, what the whole session may cost, and what
// is reported while it runs. How one run is executed (the sandbox, the guard, the
// harness) is the caller's: it comes in through Measurer.
//
// A session compares two commits, A and B, over a set of models. Both commits are
// checked out in their own worktree (Prepare) and both are built (BuildBoth) before the
// first measured run, so no compiler runs between measured runs. Each model is then
// measured in ABBA blocks (A B, then B A, then A B ...): drift of the host (heat,
// clocks, background load) hits both sides alike, and a steady drift does not favour
// the side that always runs second, as it would in a plain A B A B order. A run the
// guard rejects is redone at the same position, a bounded number of times, so the
// order is kept. The session starts with Spec.Start repeats per side and adds runs,
// up to Spec.Cap, while runner/abstat's Plan finds the comparison inconclusive; at the
// end Holm's correction is applied across the models and metrics. A session whose
// worst case (every model at the cap) would exceed the budget is refused before it
// starts, with the estimate. Progress goes to a callback at most once per
// Session.Every (a minute by default), on an injectable clock.
//
// A session that checks out one commit at a time (a bisection) adds each with
// AddCheckout, under the same checks.
//
// It runs nothing itself except git for the worktrees (internal/gitrun), and works on
// plain numbers otherwise; the statistics are runner/abstat's.
package abrun
