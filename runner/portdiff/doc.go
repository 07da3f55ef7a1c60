// Package portdiff compares two decode profiles of one run (A before a change, B
// after): the per-token figures of the decode window (wall, GPU, host gap,
// dispatches), each port unit's kernel time, host gap and dispatches per token
// attributed with the same rules and the same role figures as the ranking
// (runner/attrib, runner/rank), the time A's ranking said the unit's port could
// recover next to the time B actually recovered, and the kernels whose time changed,
// appeared or vanished (from the decode kernels CSVs). `perfbot diff` renders it.
//
// It reads the summaries and kernels CSVs of runner/results and the rules handed to
// it; it must not read traces, rank anything itself (it asks runner/rank), run
// processes or talk to GitHub.
package portdiff
