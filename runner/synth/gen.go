package synth

import (
	"hash/fnv"
	"math/rand/v2"
)

// disp is one generated dispatch, handed to the visitor in start order.
type disp struct {
	start, end int64
	k          int32
	role       role
	decode     bool // placed in the decode window (the truth's roles apply to it)
	grid       [3]int64
}

// marks are the bench's phase marks and timings, on the boot-time clock of the trace.
type marks struct {
	warmupStart, measuredStart, decodeStart, measuredEnd int64
	prefillNs                                            int64
	loadWallNs                                           int64
}

// gen lays dispatches on the timeline. The same seed and options always give the same
// dispatches, so the run can be generated several times (marks, clock choice, writing)
// without holding it in memory.
type gen struct {
	p      *plan
	o      *Options
	rng    *rand.Rand
	visit  func(*disp)
	d      disp
	cursor int64 // end of the GPU's work so far: the next dispatch starts after it plus a gap

	lastStart, lastEnd int64
}

const seedStream = 0x7065726662 // second PCG word: keeps the timeline stream apart from the shuffle's

// stream derives a PCG stream word from a purpose constant, the model and the sampling,
// so that runs of several models written with one seed still differ (times, thread ids).
func stream(o *Options, purpose uint64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(o.Model + "/" + o.Sampling.Tag()))
	return purpose ^ h.Sum64()
}

// run lays out the whole process once (load, warmup, measured prefill, decode), hands
// every dispatch to visit in start order and returns the phase marks.
func (p *plan) run(o *Options, visit func(*disp)) marks {
	g := &gen{p: p, o: o, rng: rand.New(rand.NewPCG(uint64(o.Seed), stream(o, seedStream))), visit: visit}
	var mk marks
	t0 := (100_000+g.rng.Int64N(800_000))*1_000_000_000 + g.rng.Int64N(1_000_000_000)
	mk.loadWallNs = 150_000_000 + g.rng.Int64N(100_000_000)

	// The runtime clears a buffer while the weights load.
	g.cursor, g.lastStart = t0+30_000_000+g.rng.Int64N(60_000_000), t0
	g.emit(&p.fill, 0, false, refCtx, false)

	mk.warmupStart = t0 + mk.loadWallNs + 2_000_000 + g.rng.Int64N(3_000_000)
	g.cursor = mk.warmupStart + 1_000_000 + g.rng.Int64N(1_000_000)
	if o.Warmup > 0 {
		g.seq(p.prefill, o.Prompt, 0, false)
		for s := 0; s < o.Warmup-1; s++ {
			g.step(o.Prompt+s, -1, false)
		}
	}

	mk.measuredStart = g.cursor + 20_000_000 + g.rng.Int64N(40_000_000)
	g.cursor = mk.measuredStart + 1_000_000 + g.rng.Int64N(2_000_000)
	g.seq(p.prefill, o.Prompt, 0, false)
	firstEnd := g.cursor // the first token's arg_reduce_final
	mk.prefillNs = firstEnd + 100_000 + g.rng.Int64N(100_000) - mk.measuredStart

	// The bench reads the first token, starts its decode timer, builds the next graph.
	mk.decodeStart = firstEnd + 20_000_000 + g.rng.Int64N(30_000_000)
	y := max(g.jitter(p.boundary), 100_000)
	if k := int64(o.Straddlers); k > 0 {
		// In flight across the cut: started in the idle gap, done before the first
		// decode dispatch.
		for i := range k {
			start := mk.decodeStart - 200_000*(k-i)/(k+1)
			end := mk.decodeStart + y/2*(i+1)/(k+1) + 1
			g.emitAt(&p.straddle, start, end, false)
		}
	}
	g.cursor = mk.decodeStart
	for s := range o.Tokens - 1 {
		first := int64(-1)
		if s == 0 {
			first = y
		}
		g.step(o.Prompt+s, first, true)
	}
	mk.measuredEnd = g.cursor + max(g.jitter(p.boundary), 50_000)
	return mk
}

// step is one forward pass at position pos (0-based); the cache grows when pos reaches
// its capacity, a multiple of cacheStep.
func (g *gen) step(pos int, firstGap int64, decode bool) {
	ops := g.p.step
	if pos%cacheStep == 0 {
		ops = g.p.grow
	}
	g.seq(ops, pos+1, firstGap, decode)
}

func (g *gen) seq(ops []op, ctx int, firstGap int64, decode bool) {
	for i := range ops {
		o := &ops[i]
		var gap int64
		if i == 0 {
			gap = firstGap
			if gap < 0 {
				gap = g.jitter(g.p.boundary)
			}
		} else {
			gap = g.jitter(o.gapW * g.p.gapUnit)
		}
		g.emit(o, gap, i > 0, ctx, decode)
	}
}

// jitter returns a host gap around mean (uniform in [0.5, 1.5) of it).
func (g *gen) jitter(mean float64) int64 { return int64(mean*(0.5+g.rng.Float64()) + 0.5) }

func (g *gen) emit(o *op, gap int64, mayOverlap bool, ctx int, decode bool) {
	start := g.cursor + gap
	if mayOverlap && g.o.Overlap > 0 && g.rng.Float64() < g.o.Overlap {
		if span := g.lastEnd - g.lastStart; span > 4 {
			start = g.lastStart + 1 + int64(float64(span-2)*(0.2+0.6*g.rng.Float64()))
		}
	}
	d := o.dur
	if o.flags&fCtx != 0 {
		d *= (float64(ctx) + ctxBase) / (refCtx + ctxBase)
	}
	if g.o.Noise > 0 {
		f := min(max(1+g.o.Noise*g.rng.NormFloat64(), 0.5), 2)
		if g.rng.Float64() < 0.0005 { // a rare slow dispatch (preemption, clock ramp)
			f *= 1.5 + 1.5*g.rng.Float64()
		}
		d *= f
	}
	dur := max(int64(d+0.5), 400)
	g.emitAt(o, start, start+dur, decode)
}

func (g *gen) emitAt(o *op, start, end int64, decode bool) {
	if start <= g.lastStart { // starts are strictly increasing: the analysis sorts by them
		end += g.lastStart + 1 - start
		start = g.lastStart + 1
	}
	g.d = disp{start: start, end: end, k: o.k, role: o.role, decode: decode, grid: o.grid}
	if g.visit != nil {
		g.visit(&g.d)
	}
	g.lastStart, g.lastEnd = start, end
	g.cursor = max(g.cursor, end)
}
