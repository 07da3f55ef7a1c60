// Package abstat owns the statistics of an A/B comparison (docs/ab.md): given the
// repeats of one metric under A and under B, it says whether B is faster, slower, not
// significantly different, or cannot be called (too few repeats, or too noisy to rule
// out a change of interest), with the test that decided, its p value, the medians and
// the relative change of the medians with a confidence interval.
//
// The test is chosen by the number of repeats: the Mann-Whitney U test (exact p, like
// benchstat) with the Hodges-Lehmann interval read off the same exact distribution when
// both sides have 5 or more, Welch's t test on the logarithms with its t interval when
// the smaller side has 3 or 4, and no test below 3. Holm's step-down correction turns a
// set of comparisons (several models or metrics of one A/B) into calls that keep the
// chance of any false call within alpha. Plan is the adaptive-repeats rule: it says how
// many runs to add while a comparison is inconclusive and under the cap, and spends
// alpha across its looks so that looking again does not raise the false-call rate.
//
// It works on plain numbers: it must not read files (callers such as runner/baseline
// pass the repeats in), run anything, or format reports beyond its one-line texts.
package abstat
