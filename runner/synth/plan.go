package synth

import (
	"strings"

	"github.com/lablup/perfbot/runner/results"
)

// Tuning constants of the timeline.
const (
	refCtx        = 576  // context at which the attention durations hold (512 prompt + 64)
	ctxBase       = 512  // attention cost that does not grow with the context
	boundaryShare = 0.10 // share of a step's host gap spent at its start (token readback, next graph)
	tempShare     = 0.55 // sampler tail share (%) with temperature only (published 0.4-0.7)
	topPShare     = 2.4  // with top-p (published 1.2-3.8)
	cacheStep     = 256  // the KV cache grows by this many positions
)

// plan holds the step templates of one run, tuned to the published figures.
type plan struct {
	m        *model
	cat      *catalog
	step     []op // a decode step: forward pass and the run's sampling tail
	grow     []op // the same at a position where the KV cache grows
	prefill  []op // the prompt's forward pass and the first token's sampling
	bodyLen  int  // dispatches of step before the sampling tail
	fill     op   // the runtime's buffer fill while the weights load
	straddle op   // what --straddlers leaves in flight across the decode cut

	gapUnit  float64 // ns of host gap per unit of gap weight
	boundary float64 // mean host gap before the first dispatch of a step
}

func newPlan(m *model, s results.Sampling, prompt int, change *Change) (*plan, error) {
	p := &plan{m: m, cat: newCatalog()}

	// Tune on the greedy step: the published figures are greedy runs.
	b := &builder{c: p.cat, t: m.dtype}
	m.forward(b, false)
	m.sampler(b, results.Greedy)
	greedy := b.ops
	factors := [numGroups]float64{1, 1, 1, 1, 1}
	if m.shareSSM > 0 {
		total := m.gpuMsTok * 1e6 * 128 / 127
		var sum [numGroups]float64
		for _, o := range greedy {
			sum[o.group] += o.dur
		}
		tSSM, tMoE, tQMV := total*m.shareSSM/100, total*m.shareMoE/100, total*m.shareQMV/100
		factors[gSSM] = tSSM / sum[gSSM]
		factors[gMoE] = tMoE / sum[gMoE]
		factors[gQMV] = tQMV / sum[gQMV]
		rest := (total - tSSM - tMoE - tQMV) / (sum[gRest] + sum[gSampler])
		factors[gRest], factors[gSampler] = rest, rest
	}
	scaleGroups(greedy, factors)
	setGapWeights(greedy)
	var w float64
	for _, o := range greedy[1:] {
		w += o.gapW
	}
	gStep := m.gapMsTok * 1e6 * 128 / 127
	p.boundary = gStep * boundaryShare
	p.gapUnit = gStep * (1 - boundaryShare) / w

	build := func(growth bool) ([]op, int) {
		b := &builder{c: p.cat, t: m.dtype}
		m.forward(b, growth)
		body := len(b.ops)
		m.sampler(b, s)
		scaleGroups(b.ops, factors)
		if s.Temperature > 0 {
			share := tempShare
			if s.TopP < 1 {
				share = topPShare
			}
			var fwd, tail float64
			for _, o := range b.ops[:body] {
				fwd += o.dur
			}
			for _, o := range b.ops[body:] {
				tail += o.dur
			}
			f := share / (100 - share) * fwd / tail
			for i := body; i < len(b.ops); i++ {
				b.ops[i].dur *= f
			}
		}
		setGapWeights(b.ops)
		return b.ops, body
	}
	var growBody int
	p.grow, growBody = build(true)
	p.step, p.bodyLen = build(false)
	if !change.Empty() {
		var err error
		if p.grow, _, err = p.plant(change, p.grow, growBody); err != nil {
			return nil, err
		}
		if p.step, p.bodyLen, err = p.plant(change, p.step, p.bodyLen); err != nil {
			return nil, err
		}
		if d := change.Decode; d > 0 {
			p.gapUnit /= d
			p.boundary /= d
		}
	}
	p.prefill = p.buildPrefill(prompt)
	p.fill = op{k: p.cat.k(nFill, "copy"), dur: 167_000, grid: [3]int64{1 << 20, 1, 1}}
	p.straddle = op{k: p.cat.k(sub(nCopyS, m.dtype), "copy"), grid: [3]int64{4096, 1, 1}}
	return p, nil
}

func scaleGroups(ops []op, f [numGroups]float64) {
	for i := range ops {
		ops[i].dur *= f[ops[i].group]
	}
}

// setGapWeights sets the host gap weight of each dispatch: the host falls behind the GPU
// on runs of tiny kernels and catches up during long ones, and the sampling tail costs
// more host work per dispatch.
func setGapWeights(ops []op) {
	for i := range ops {
		if i == 0 {
			ops[i].gapW = 0
			continue
		}
		w := 0.15 + 1/(1+ops[i-1].dur/5000)
		if ops[i].role == roleSamplerTail {
			w *= 1.5
		}
		ops[i].gapW = w
	}
}

// buildPrefill turns the decode forward pass into the prompt's: GEMVs become GEMMs
// (hipBLASLt after a dequantization, or MLX's quantized WMMA kernel), attention becomes
// the flash kernel, everything else gets longer with the prompt. The lm_head still runs
// on the last position only. The whole pass is then scaled to the model's prefill speed.
func (p *plan) buildPrefill(prompt int) []op {
	m := p.m
	pf := float64(prompt)
	b := &builder{c: p.cat, t: m.dtype}
	abbr := "BBS"
	if m.dtype == "__half" {
		abbr = "HHS"
	}
	for _, o := range p.step[:p.bodyLen] {
		class := p.cat.kernels[o.k].class
		switch {
		case o.flags&fLMHead != 0:
			b.ops = append(b.ops, o)
		case class == "qmv":
			w := float64(o.rows * o.cols)
			if m.prefillGEMM == "cijk" {
				b.add(nDequant, "dequantize", roleUnattributed, w*0.01, ew(o.rows*o.cols))
				name := nCijk64
				if o.rows > o.cols {
					name = nCijk80
				}
				b.add(strings.ReplaceAll(name, "$TS", abbr), "gemm", roleUnattributed, w*pf*6e-5, o.rows/80*128*(int64(prompt)+127)/128)
			} else {
				b.add(nQMMDense, "qmm", roleUnattributed, w*pf*1.2e-4, o.rows/64*128*(int64(prompt)+63)/64)
			}
		case class == "gather_qmv":
			i := b.add(nGatherQMV, "gather_qmv", roleUnattributed, o.dur*min(pf, 128)/5, o.grid[0])
			b.ops[i].grid[1] = min(int64(prompt)*o.grid[1], 65535)
		case class == "sdpa":
			b.add(nFlash, "sdpa", roleUnattributed, o.dur*95*(pf/512)*(pf/512), o.grid[0]*((int64(prompt)+63)/64))
		case class == "rope":
			name := nRopeBF16
			if m.dtype == "__half" {
				name = nRopeFreqs
			}
			b.add(name, "rope", roleUnattributed, o.dur*(1+pf/16), o.grid[0]*int64(prompt))
		default:
			i := len(b.ops)
			b.ops = append(b.ops, o)
			b.ops[i].dur = o.dur * (1 + pf/48)
			b.ops[i].grid[0] = min(o.grid[0]*int64(prompt), 1<<31-256)
			b.ops[i].flags = 0
		}
	}
	var sum float64
	for _, o := range b.ops {
		sum += o.dur
	}
	f := pf / m.prefillTokS * 1e9 * 0.96 / sum
	for i := range b.ops {
		b.ops[i].dur *= f
		b.ops[i].role = roleUnattributed
	}
	b.ops = append(b.ops, p.step[p.bodyLen:]...)
	setGapWeights(b.ops)
	return b.ops
}
