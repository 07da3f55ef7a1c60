package changepoint

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/lablup/perfbot/internal/mathx"
	"github.com/lablup/perfbot/runner/abstat"
)

// Point is one night of one (host, model, metric): its value, the repeats it is the
// median of, and the commit measured.
type Point struct {
	// Date is the night, YYYY-MM-DD (creep looks back CreepDays from the newest one);
	// Confirmed and Accepted name changes by the Date of their first night.
	Date   string `json:"date"`
	Commit string `json:"commit,omitempty"`
	// Value is the night's value; when 0 it is the median of Repeats.
	Value   float64   `json:"value,omitempty"`
	Repeats []float64 `json:"repeats,omitempty"`
}

// V is the night's value: Value, or the median of Repeats when Value is 0.
func (p Point) V() float64 {
	if p.Value != 0 || len(p.Repeats) == 0 {
		return p.Value
	}
	return mathx.Median(p.Repeats)
}

// Params are the knobs of Detect (docs/nightly.md gives the defaults' figures).
type Params struct {
	Direction abstat.Direction `json:"direction"`
	// MinSegment is the fewest nights either side of a split the segmentation makes
	// (confirmed changes cut the history whatever the count).
	MinSegment int `json:"min_segment"`
	// Alpha is the level of the split test after its Bonferroni correction; RankAlpha the
	// level of the Mann-Whitney filter.
	Alpha     float64 `json:"alpha"`
	RankAlpha float64 `json:"rank_alpha"`
	// MinChangePct is the smallest change, in percent of the level before it, that makes a
	// split or a suspicion.
	MinChangePct float64 `json:"min_change_pct"`
	// MinSigmaPct floors the noise, in percent.
	MinSigmaPct float64 `json:"min_sigma_pct"`
	// SuspectZ is the |z| of the newest nights against the current segment that makes a
	// suspected change; MaxTail the most newest nights tried; MinRef the fewest nights of
	// the current segment they are compared with.
	SuspectZ float64 `json:"suspect_z"`
	// RangeZ2 bounds the nights a change may have started on: every split whose z^2 is
	// within RangeZ2 of the best one's (a support interval of the profile likelihood,
	// whose logarithm is z^2/2).
	RangeZ2 float64 `json:"range_z2"`
	MaxTail int     `json:"max_tail"`
	MinRef  int     `json:"min_ref"`
	// SamePct: a later segment within SamePct of the level before a regression (or
	// better) closes it.
	SamePct float64 `json:"same_pct"`
	// CreepDays is how far back the best segment is looked for; CreepPct the gap between
	// it and the current segment that is reported as creep.
	CreepDays int     `json:"creep_days"`
	CreepPct  float64 `json:"creep_pct"`
	// Confirmed are the first nights (dates) of changes the A/B re-measure confirmed: the
	// history is always cut there. Accepted are the first nights of regressions a
	// maintainer accepted as the new normal.
	Confirmed []string `json:"confirmed,omitempty"`
	Accepted  []string `json:"accepted,omitempty"`
}

// DefaultParams are the defaults for decode tok/s (higher is better).
func DefaultParams() Params {
	return Params{
		Direction: abstat.HigherIsBetter, MinSegment: 4, Alpha: 0.001, RankAlpha: 0.01,
		MinChangePct: 2, MinSigmaPct: 0.5, SuspectZ: 3, RangeZ2: 6, MaxTail: 6, MinRef: 2,
		SamePct: 2, CreepDays: 90, CreepPct: 5,
	}
}

// Validate says what is wrong with the parameters.
func (p Params) Validate() error {
	switch {
	case p.MinSegment < 2 || p.MinSegment > 1000:
		return fmt.Errorf("the minimum segment is %d nights: give 2 to 1000", p.MinSegment)
	case !(p.Alpha > 0 && p.Alpha < 0.5) || !(p.RankAlpha > 0 && p.RankAlpha <= 1):
		return fmt.Errorf("the split levels are %v and %v: give 0 < alpha < 0.5 and 0 < rank alpha <= 1", p.Alpha, p.RankAlpha)
	case !(p.MinChangePct >= 0 && p.MinChangePct < 90) || !(p.MinSigmaPct > 0 && p.MinSigmaPct < 50):
		return fmt.Errorf("the minimum change (%v %%) or the noise floor (%v %%) is out of range", p.MinChangePct, p.MinSigmaPct)
	case !(p.SuspectZ > 0 && p.SuspectZ < 100) || !(p.RangeZ2 >= 0 && p.RangeZ2 < 1000) || p.MaxTail < 1 || p.MaxTail > 1000 || p.MinRef < 1:
		return fmt.Errorf("the suspicion rule (z %v, tail %d, reference %d) is out of range", p.SuspectZ, p.MaxTail, p.MinRef)
	case !(p.SamePct >= 0 && p.SamePct < 50) || p.CreepDays < 1 || !(p.CreepPct > 0 && p.CreepPct < 90):
		return fmt.Errorf("the closing margin (%v %%) or the creep rule (%d days, %v %%) is out of range", p.SamePct, p.CreepDays, p.CreepPct)
	}
	return nil
}

// Segment is a run of nights at one level: points[Start:End].
type Segment struct {
	Start int    `json:"start"`
	End   int    `json:"end"` // exclusive
	First string `json:"first"`
	Last  string `json:"last"` // dates of its first and last night
	// Level is the median of its nights' values; SpreadPct the robust standard deviation
	// of its values (1.4826 x MAD) in percent of the level.
	Level     float64 `json:"level"`
	SpreadPct float64 `json:"spread_pct"`
}

// Nights is the segment's number of nights.
func (s Segment) Nights() int { return s.End - s.Start }

// Kind says whether a change is a regression or an improvement under the direction.
type Kind string

const (
	Regression  Kind = "regression"
	Improvement Kind = "improvement"
)

// State is where a regression stands.
type State string

const (
	Open     State = "open"
	Closed   State = "closed"   // a later segment is back at the level before it
	Accepted State = "accepted" // a maintainer accepted the new level
)

// Change is where a segment starts.
type Change struct {
	// Index is the first night at the new level; Date its date.
	Index int    `json:"index"`
	Date  string `json:"date"`
	// From and To bound the nights the change may have started on (Index is the most
	// likely); LastGood and FirstBad are the commits of the night before From and of
	// night To: the range that did it, to re-measure and bisect (equal when the change
	// came without a new commit, e.g. from the host).
	RangeFrom int     `json:"range_from"`
	RangeTo   int     `json:"range_to"`
	LastGood  string  `json:"last_good"`
	FirstBad  string  `json:"first_bad"`
	From      float64 `json:"from"` // the levels of the segments either side
	To        float64 `json:"to"`
	ChangePct float64 `json:"change_pct"` // To / From - 1, percent
	Kind      Kind    `json:"kind"`
	// Z is the split statistic in standard errors (0 for a confirmed cut the data alone
	// would not make).
	Z         float64 `json:"z"`
	Confirmed bool    `json:"confirmed"` // named in Params.Confirmed
	// State is set for regressions; ClosedAt is the first night of the segment that
	// closed it (-1 when none).
	State    State `json:"state,omitempty"`
	ClosedAt int   `json:"closed_at"`
}

// Status is the judgement of the newest nights.
type Status string

const (
	NoChange            Status = "no change"
	SuspectedRegression Status = "suspected regression"
	SuspectedImprove    Status = "suspected improvement"
	TooFewNights        Status = "too few nights"
)

// Judgement is the newest nights against the current segment.
type Judgement struct {
	Status Status `json:"status"`
	// Index is the first night of the suspected change (-1 when there is none); Tail the
	// number of newest nights it covers.
	Index int `json:"index"`
	Tail  int `json:"tail"`
	// RangeFrom and RangeTo bound the nights it may have started on; LastGood is the
	// commit of the night before RangeFrom, FirstBad the commit of night RangeTo: the
	// A/B re-measures them and a bisection searches between them.
	RangeFrom int     `json:"range_from"`
	RangeTo   int     `json:"range_to"`
	LastGood  string  `json:"last_good,omitempty"`
	FirstBad  string  `json:"first_bad,omitempty"`
	Reference Segment `json:"reference"` // the nights of the current segment before the tail
	ChangePct float64 `json:"change_pct"`
	Z         float64 `json:"z"`
	// FromSegmentation: the suspected change is the start of the current segment, found
	// by the segmentation and not yet confirmed.
	FromSegmentation bool   `json:"from_segmentation,omitempty"`
	Why              string `json:"why"`
}

// Suspected says the newest nights suggest a change to confirm.
func (j Judgement) Suspected() bool {
	return j.Status == SuspectedRegression || j.Status == SuspectedImprove
}

// Creep is the current segment against the best one of the last CreepDays.
type Creep struct {
	Best    Segment `json:"best"`
	Current Segment `json:"current"`
	// GapPct is how much worse the current level is than the best, in percent of the
	// best (0 when the current segment is the best).
	GapPct   float64 `json:"gap_pct"`
	Creeping bool    `json:"creeping"`
}

// Result is the analysis of one history.
type Result struct {
	Segments []Segment `json:"segments"`
	Changes  []Change  `json:"changes"`
	// SigmaPct is the night-to-night noise used, in percent.
	SigmaPct float64   `json:"sigma_pct"`
	Newest   Judgement `json:"newest"`
	Creep    Creep     `json:"creep"`
}

// Current is the last segment.
func (r Result) Current() Segment { return r.Segments[len(r.Segments)-1] }

// Open lists the open regressions.
func (r Result) Open() []Change {
	var out []Change
	for _, c := range r.Changes {
		if c.State == Open {
			out = append(out, c)
		}
	}
	return out
}

// Detect analyses points (oldest first).
func Detect(points []Point, p Params) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	if len(points) == 0 {
		return Result{}, errors.New("no nights to analyse")
	}
	x := make([]float64, len(points))
	for i, pt := range points {
		v := pt.V()
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return Result{}, fmt.Errorf("night %d (%s) has the value %v: give finite positive values", i+1, pt.Date, v)
		}
		for _, r := range pt.Repeats {
			if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
				return Result{}, fmt.Errorf("night %d (%s) has the repeat %v: give finite positive values", i+1, pt.Date, r)
			}
		}
		x[i] = math.Log(v)
	}
	d := &detector{p: p, pts: points, x: x, pre: prefix(x)}
	// Cut at the confirmed changes first.
	cuts := []int{0}
	for i := 1; i < len(points); i++ {
		if slices.Contains(p.Confirmed, points[i].Date) && points[i].Date != points[i-1].Date {
			cuts = append(cuts, i)
		}
	}
	cuts = append(cuts, len(points))
	d.sigma = d.noise(cuts)
	zs := map[int]float64{}
	bounds := []int{0}
	for i := 0; i+1 < len(cuts); i++ {
		if i > 0 {
			bounds = append(bounds, cuts[i])
		}
		d.split(cuts[i], cuts[i+1], &bounds, zs)
	}
	slices.Sort(bounds)
	bounds = append(bounds, len(points))
	res := Result{SigmaPct: pctOfLog(d.sigma)}
	for i := 0; i+1 < len(bounds); i++ {
		res.Segments = append(res.Segments, d.segment(bounds[i], bounds[i+1]))
	}
	for i := 1; i < len(res.Segments); i++ {
		a, b := res.Segments[i-1], res.Segments[i]
		lo, hi := d.rangeAround(a.Start, b.End, b.Start, 0)
		c := Change{
			Index: b.Start, Date: points[b.Start].Date, RangeFrom: lo, RangeTo: hi, LastGood: points[lo-1].Commit, FirstBad: points[hi].Commit,
			From: a.Level, To: b.Level, ChangePct: (b.Level/a.Level - 1) * 100, Z: zs[b.Start],
			Confirmed: slices.Contains(p.Confirmed, points[b.Start].Date), ClosedAt: -1,
		}
		c.Kind = Improvement
		if worse(c.ChangePct, p.Direction) {
			c.Kind = Regression
			c.State = Open
			if slices.Contains(p.Accepted, c.Date) {
				c.State = Accepted
			} else {
				for _, later := range res.Segments[i+1:] {
					if back(later.Level, a.Level, p) {
						c.State, c.ClosedAt = Closed, later.Start
						break
					}
				}
			}
		}
		res.Changes = append(res.Changes, c)
	}
	res.Newest = d.judge(res)
	res.Creep = d.creep(res.Segments)
	return res, nil
}

// worse says a change of pct percent is a regression under dir.
func worse(pct float64, dir abstat.Direction) bool {
	if dir == abstat.LowerIsBetter {
		return pct > 0
	}
	return pct < 0
}

// back says level is within SamePct of before, or better.
func back(level, before float64, p Params) bool {
	gap := (level/before - 1) * 100
	if p.Direction == abstat.LowerIsBetter {
		return gap <= p.SamePct
	}
	return gap >= -p.SamePct
}

type detector struct {
	p     Params
	pts   []Point
	x     []float64 // logarithms of the values
	pre   []float64 // prefix sums of x
	sigma float64   // noise of one night, in log units
}

func prefix(x []float64) []float64 {
	s := make([]float64, len(x)+1)
	for i, v := range x {
		s[i+1] = s[i] + v
	}
	return s
}

// mean of x[a:b].
func (d *detector) mean(a, b int) float64 { return (d.pre[b] - d.pre[a]) / float64(b-a) }

// noise is the night-to-night standard deviation in log units, from the absolute
// differences of successive nights within each piece, floored at MinSigmaPct.
func (d *detector) noise(cuts []int) float64 {
	var diffs []float64
	for i := 0; i+1 < len(cuts); i++ {
		for j := cuts[i] + 1; j < cuts[i+1]; j++ {
			diffs = append(diffs, math.Abs(d.x[j]-d.x[j-1]))
		}
	}
	floor := math.Log1p(d.p.MinSigmaPct / 100)
	if len(diffs) == 0 {
		return floor
	}
	// The root mean square of the smallest trimKeep of the differences: a step or an
	// odd night is in the largest ones, and the rest estimate the noise with about
	// twice the efficiency of their median, which a history of a few weeks needs.
	slices.Sort(diffs)
	keep := diffs[:max(1, int(math.Ceil(trimKeep*float64(len(diffs)))))]
	ss := 0.0
	for _, v := range keep {
		ss += v * v
	}
	return max(floor, math.Sqrt(ss/float64(len(keep))/trimmedSecondMoment(float64(len(keep))/float64(len(diffs)))/2))
}

// trimKeep is the share of the successive differences the noise is estimated from.
const trimKeep = 0.8

// trimmedSecondMoment is E[Y^2 | Y < q] for Y = |N(0,1)| and q its p quantile:
// (p - 2 q phi(q)) / p, with q = sqrt(2) erfinv(p); 1 for p = 1.
func trimmedSecondMoment(p float64) float64 {
	if p >= 1 {
		return 1
	}
	q := math.Sqrt2 * math.Erfinv(p)
	phi := math.Exp(-q*q/2) / math.Sqrt(2*math.Pi)
	return (p - 2*q*phi) / p
}

// z is the standardised difference of the means of x[a:t] and x[t:b].
func (d *detector) z(a, t, b int) float64 {
	return (d.mean(t, b) - d.mean(a, t)) / (d.sigma * math.Sqrt(1/float64(t-a)+1/float64(b-t)))
}

// bonferroni is the two-sided normal p value of z times m, at most 1.
func bonferroni(z float64, m int) float64 {
	return min(1, math.Erfc(math.Abs(z)/math.Sqrt2)*float64(m))
}

// keep applies the rank and size filters to a split between the nights in and out.
func (d *detector) keep(in, out []float64) bool {
	change := math.Expm1(mean(in)-mean(out)) * 100
	if math.Abs(change) < d.p.MinChangePct {
		return false
	}
	return abstat.MannWhitney(out, in).P <= d.p.RankAlpha
}

// split segments x[a:b] recursively, adding the start of every new segment to bounds.
func (d *detector) split(a, b int, bounds *[]int, zs map[int]float64) {
	m := d.p.MinSegment
	if b-a < 2*m {
		return
	}
	best, bz := -1, 0.0
	for t := a + m; t <= b-m; t++ {
		if z := d.z(a, t, b); math.Abs(z) > math.Abs(bz) {
			best, bz = t, z
		}
	}
	cands := b - a - 2*m + 1
	if best >= 0 && bonferroni(bz, cands) <= d.p.Alpha && d.keep(d.x[best:b], d.x[a:best]) {
		*bounds = append(*bounds, best)
		zs[best] = bz
		d.split(a, best, bounds, zs)
		d.split(best, b, bounds, zs)
		return
	}
	// A dip or bump that came back: the best pair of splits, the middle against the rest.
	if b-a < 3*m {
		return
	}
	t1, t2, pz := -1, -1, 0.0
	pairs := 0
	total := d.pre[b] - d.pre[a]
	for s := a + m; s <= b-2*m; s++ {
		for e := s + m; e <= b-m; e++ {
			pairs++
			nIn := float64(e - s)
			nOut := float64(b-a) - nIn
			in := (d.pre[e] - d.pre[s]) / nIn
			out := (total - (d.pre[e] - d.pre[s])) / nOut
			z := (in - out) / (d.sigma * math.Sqrt(1/nIn+1/nOut))
			if math.Abs(z) > math.Abs(pz) {
				t1, t2, pz = s, e, z
			}
		}
	}
	if t1 < 0 || bonferroni(pz, pairs) > d.p.Alpha {
		return
	}
	rest := append(slices.Clone(d.x[a:t1]), d.x[t2:b]...)
	if !d.keep(d.x[t1:t2], rest) {
		return
	}
	*bounds = append(*bounds, t1, t2)
	zs[t1], zs[t2] = pz, -pz
	d.split(a, t1, bounds, zs)
	d.split(t1, t2, bounds, zs)
	d.split(t2, b, bounds, zs)
}

// rangeAround is the first and last split s of x[a:b], from <= s < b, whose z has the
// sign of the split at t and a square within RangeZ2 of its square.
func (d *detector) rangeAround(a, b, t, from int) (lo, hi int) {
	zt := d.z(a, t, b)
	lo, hi = t, t
	for s := max(a+1, from); s < b; s++ {
		z := d.z(a, s, b)
		if z*zt > 0 && z*z >= zt*zt-d.p.RangeZ2 {
			lo, hi = min(lo, s), max(hi, s)
		}
	}
	return lo, hi
}

func (d *detector) segment(a, b int) Segment {
	vals := make([]float64, b-a)
	for i := range vals {
		vals[i] = d.pts[a+i].V()
	}
	s := Segment{Start: a, End: b, First: d.pts[a].Date, Last: d.pts[b-1].Date, Level: median(vals)}
	dev := make([]float64, len(vals))
	for i, v := range vals {
		dev[i] = math.Abs(v - s.Level)
	}
	s.SpreadPct = 1.4826 * median(dev) / s.Level * 100
	return s
}

// judge compares the newest nights with the rest of the current segment.
func (d *detector) judge(res Result) Judgement {
	cur := res.Current()
	n := cur.End
	j := Judgement{Status: NoChange, Index: -1}
	bestK, bz := 0, 0.0
	for k := 1; k <= d.p.MaxTail && cur.End-k-cur.Start >= d.p.MinRef; k++ {
		z := d.z(cur.Start, n-k, n)
		change := math.Expm1(d.mean(n-k, n)-d.mean(cur.Start, n-k)) * 100
		if math.Abs(z) >= d.p.SuspectZ && math.Abs(change) >= d.p.MinChangePct && math.Abs(z) > math.Abs(bz) {
			bestK, bz = k, z
		}
	}
	if bestK > 0 {
		i := n - bestK
		j.Index, j.Tail, j.Z = i, bestK, bz
		j.Reference = d.segment(cur.Start, i)
		j.ChangePct = math.Expm1(d.mean(i, n)-d.mean(cur.Start, i)) * 100
		j.RangeFrom, j.RangeTo = d.rangeAround(cur.Start, n, i, cur.Start+d.p.MinRef)
		j.LastGood, j.FirstBad = d.pts[j.RangeFrom-1].Commit, d.pts[j.RangeTo].Commit
		j.Status = SuspectedImprove
		if worse(j.ChangePct, d.p.Direction) {
			j.Status = SuspectedRegression
		}
		j.Why = fmt.Sprintf("the last %d night(s) from %s are %+.2f %% from the %d night(s) of the current segment before them (z = %.2f, noise %.2f %% a night): re-measure %s against %s",
			bestK, d.pts[i].Date, j.ChangePct, i-cur.Start, bz, pctOfLog(d.sigma), orDash(j.LastGood), orDash(j.FirstBad))
		return j
	}
	if len(res.Changes) > 0 {
		if c := res.Changes[len(res.Changes)-1]; !c.Confirmed && c.Index == cur.Start {
			j.Index, j.Tail, j.Z, j.ChangePct = c.Index, cur.Nights(), c.Z, c.ChangePct
			j.Reference = res.Segments[len(res.Segments)-2]
			j.RangeFrom, j.RangeTo = c.RangeFrom, c.RangeTo
			j.LastGood, j.FirstBad = c.LastGood, c.FirstBad
			j.FromSegmentation = true
			j.Status = SuspectedImprove
			if c.Kind == Regression {
				j.Status = SuspectedRegression
			}
			j.Why = fmt.Sprintf("the current segment (%d night(s) from %s) is %+.2f %% from the one before and not yet confirmed: re-measure %s against %s",
				cur.Nights(), c.Date, c.ChangePct, orDash(c.LastGood), orDash(c.FirstBad))
			return j
		}
	}
	j.Reference = cur
	if cur.Nights() < d.p.MinRef+1 {
		j.Status = TooFewNights
		j.Why = fmt.Sprintf("the current segment has %d night(s): the newest is judged against at least %d before it", cur.Nights(), d.p.MinRef)
		return j
	}
	j.Why = fmt.Sprintf("the newest nights are within the noise of the current segment (%d nights from %s, level %.4g)", cur.Nights(), cur.First, cur.Level)
	return j
}

// creep compares the current segment with the best segment that has a night in the
// last CreepDays days before the newest night (the last CreepDays nights when the dates
// are not YYYY-MM-DD).
func (d *detector) creep(segs []Segment) Creep {
	cur := segs[len(segs)-1]
	c := Creep{Best: cur, Current: cur}
	n := len(d.pts)
	from := max(0, n-d.p.CreepDays)
	if last, err := time.Parse(time.DateOnly, d.pts[n-1].Date); err == nil {
		from = n - 1
		limit := last.AddDate(0, 0, -d.p.CreepDays)
		for from > 0 {
			t, err := time.Parse(time.DateOnly, d.pts[from-1].Date)
			if err != nil || t.Before(limit) {
				break
			}
			from--
		}
	}
	for _, s := range segs {
		if s.End <= from {
			continue
		}
		if better(s.Level, c.Best.Level, d.p.Direction) {
			c.Best = s
		}
	}
	c.GapPct = math.Abs(cur.Level/c.Best.Level-1) * 100
	c.Creeping = c.GapPct >= d.p.CreepPct
	return c
}

func better(a, b float64, dir abstat.Direction) bool {
	if dir == abstat.LowerIsBetter {
		return a < b
	}
	return a > b
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func pctOfLog(v float64) float64 { return math.Expm1(v) * 100 }

func mean(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

func median(v []float64) float64 { return mathx.Median(v) }
