// Package changepoint owns the change-point analysis of one (host, model, metric) history
// of nightly readings (docs/nightly.md, "Change points"): it splits the history into
// segments of stable performance, names the nights where the level changed with the
// commit range that did it (last good .. first bad), judges the newest nights against the
// current segment only, compares the current segment with the best one of the last 90
// days (slow creep), keeps the state of each regression (open, closed when a later
// segment is back at the level before it, accepted by a maintainer), and bisects a commit
// range with an adaptive number of repeats per commit.
//
// # Method
//
// The history is first cut at every change the caller says was confirmed (the A/B
// re-measure of last good against first bad called it): a confirmed change always starts
// a new segment, so the old level is never part of the current one and a lasting step is
// neither absorbed nor reported twice. Each piece is then split by binary segmentation on
// the logarithms of the nightly values (Vostrikova 1981; the split search of E-Divisive
// means as MongoDB and Apache Otava use it, with a mean-shift statistic instead of the
// energy distance): the split that maximises the standardised difference of the means
// either side is kept when three filters agree, as Otava keeps an E-Divisive candidate
// only when a t test agrees:
//
//   - the z statistic, with the noise of the whole history, is significant at Alpha after
//     a Bonferroni correction over every split position tried (a closed form instead of a
//     permutation test: the same history always gives the same segments, and thousands of
//     simulated histories run in seconds);
//   - the Mann-Whitney U test of runner/abstat on the nights either side agrees at
//     RankAlpha (one odd night cannot make a split: heavy-tailed GPU noise);
//   - the change is at least MinChangePct.
//
// When no single split is significant, the best pair of splits (a dip or a bump that
// came back, which a single split averages away) is tried with the same filters. Each
// split leaves at least MinSegment nights either side.
//
// The noise is one estimate for the whole history: the root mean square of the smallest
// 80 % of the absolute differences of successive nights of the same piece, scaled to a
// normal standard deviation, floored at MinSigmaPct (a step or an odd night is among the
// largest differences; their median would be half as efficient). Successive differences
// do not see level changes, and GPU noise is a property of the model and host, not of
// the level.
//
// The newest nights are judged against the current segment alone (Result.Newest): for
// the last k = 1 .. MaxTail nights, the mean of the tail against the mean of the rest of
// the segment, in standard errors; the largest |z| of at least SuspectZ, and a change of
// at least MinChangePct, is a suspected change whose most likely first night is the
// first of the tail, and whose range is every split whose z^2 is within RangeZ2 of the
// best (a support interval: a noisy night next to the step does not hide the commit that
// did it). The threshold is deliberately loose (a large step shows on its first night): a
// suspicion is only a reason to re-measure the commit before the range against the last
// commit of the range as an interleaved A/B (runner/abstat's adaptive plan), and only a
// confirmed A/B makes it a change (Params.Confirmed). bench/changepoint.sh measures the
// whole loop.
//
// Why not the others: a band over the last N nights (runner/baseline) absorbs a lasting
// step once the window holds both levels; E-Divisive with permutations needs several
// nights after a step (Otava's README admits missing the first regressed runs) and is
// random; FD.io's jumpavg (minimum description length) needs no parameters but has no
// false-alarm rate to tune against the A/B that confirms. Here the segmentation gives the
// history its segments and the tail test gives the fast first alarm.
//
// # Bisection
//
// Bisect finds the first bad commit of a range whose ends differ (Welch's test or the
// Mann-Whitney U test of runner/abstat on the ends' runs, or on the A/B's samples
// passed in: an odd run of heavy-tailed noise can hide a step from Welch's test, not
// from the ranks). It is a probabilistic bisection (Horstein; the noisy binary search of
// Karp and Kleinberg): after every few runs it computes, for every commit of the range,
// the posterior probability that it is the first bad one, from every run so far at once,
// then measures the commit whose chance of being bad is nearest one half: a new commit
// gets Start runs, one measured before Step more. It stops when one commit reaches
// 1 - ErrorRate, or when the budget (or every commit's cap) is spent, naming the most
// likely commit as undecided. A cancelled context stops it before its next measurement
// with the result so far (undecided); it changes nothing else. Unlike a midpoint test
// decided once (Wald's sequential ratio per midpoint, CSIT's "the side that describes
// the data best", Pinpoint's rank test at each midpoint), a commit classified wrongly
// early is revisited when later runs contradict it, and no run is spent on a side that
// is already plain.
//
// The likelihood of the runs (BisectParams.Likelihood) is robust by default: each run
// is around the good level before the culprit and the bad level from it on, either
// Student's t with 3 degrees of freedom or normal, with even odds (the runs decide which
// fits, all of them at once); the two levels and the scale are integrated out over a
// grid that follows the runs, so the uncertainty of the ends counts, an odd run of
// heavy-tailed GPU noise (another tenant waking up) weighs little, and normal noise
// loses nothing. The grid costs about runs x grid points logarithms a step: a few
// milliseconds for 32 commits, tens for 1024 commits and 300 runs
// (BenchmarkBisectPosterior), nothing next to a GPU run. The normal likelihood (levels
// and noise integrated out in closed form, odd runs clipped at 4 robust deviations) is
// kept for comparison. bench/changepoint.sh measures both on the same readings.
//
// It works on plain numbers: it must not read files, run anything (the caller's measure
// function does), format reports beyond its texts, or talk to GitHub.
package changepoint
