package synth

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lablup/perfbot/runner/results"
)

// group is what a dispatch's duration is tuned with: the published shares of the hybrid
// models are met by scaling each group to its share of the step.
type group uint8

const (
	gRest group = iota
	gQMV
	gMoE
	gSSM
	gSampler
	numGroups
)

const (
	fCtx    uint8 = 1 << iota // attention: the duration grows with the context length
	fLMHead                   // the lm_head GEMV (the widest grid of the window)
)

// op is one dispatch of a step template.
type op struct {
	k     int32
	role  role
	group group
	flags uint8
	dur   float64 // mean duration in ns (attention: at the reference context)
	grid  [3]int64
	rows  int64 // weight shape of a GEMV: prefill turns it into a GEMM
	cols  int64
	gapW  float64 // host gap weight before this dispatch
}

// builder appends the dispatches of one forward pass.
type builder struct {
	c   *catalog
	t   string // model dtype as MLX spells it in names
	ops []op
}

func (b *builder) add(tmpl, class string, r role, dur float64, gx int64) int {
	k := b.c.k(sub(tmpl, b.t), class)
	g := gRest
	switch {
	case class == "qmv":
		g = gQMV
	case r >= roleMoEExpertGEMV && r <= roleMoEGatherIndices:
		g = gMoE
	case r == roleSSMStep:
		g = gSSM
	case r == roleSamplerTail:
		g = gSampler
	}
	wg := b.c.kernels[k].wg
	gx = max(wg, (gx+wg-1)/wg*wg)
	b.ops = append(b.ops, op{k: k, role: r, group: g, dur: dur, grid: [3]int64{gx, 1, 1}})
	return len(b.ops) - 1
}

// ew is the work-items of an elementwise kernel over n values (4 per thread).
func ew(n int64) int64 { return (n + 3) / 4 }

// gemv is the duration of a 4-bit GEMV: a launch cost plus a cost per weight.
type gemv struct{ a, b float64 }

func (g gemv) dur(rows, cols int64) float64 { return g.a + g.b*float64(rows*cols) }

// calibrate returns the GEMV model whose average over one step (the per-layer shapes
// times layers, plus the lm_head) is avg: the published profile gives only the average.
func calibrate(perLayer [][2]int64, layers int, lmHead [2]int64, avg float64) gemv {
	const a = 4000
	n := float64(len(perLayer)*layers + 1)
	var elems float64
	for _, s := range perLayer {
		elems += float64(s[0]*s[1]) * float64(layers)
	}
	elems += float64(lmHead[0] * lmHead[1])
	return gemv{a: a, b: (avg*n - a*n) / elems}
}

// bandwidth is the GEMV model of the invented models: about 180 GB/s over 4-bit weights
// with their scales; their durations are then tuned to the published shares.
var bandwidth = gemv{a: 3500, b: 0.5625 / 180}

func (b *builder) qmv(rows, cols int64, g gemv) {
	i := b.add(nQMV, "qmv", roleUnattributed, g.dur(rows, cols), rows*32)
	b.ops[i].rows, b.ops[i].cols = rows, cols
}

func (b *builder) lmHead(rows, cols int64, g gemv) {
	b.qmv(rows, cols, g)
	b.ops[len(b.ops)-1].flags |= fLMHead
}

func (b *builder) gatherQMV(rows, cols, active int64, dur float64) {
	i := b.add(nGatherQMV, "gather_qmv", roleMoEExpertGEMV, dur, rows*32)
	b.ops[i].grid[1] = active
	b.ops[i].rows, b.ops[i].cols = rows*active, cols
}

func (b *builder) sdpa(heads int64, dur float64) {
	i := b.add(nSDPA, "sdpa", roleUnattributed, dur, heads*128)
	b.ops[i].flags |= fCtx
}

// embed is the quantized embedding lookup that opens every step: the packed rows, their
// scales and biases, then the dequantization.
func (b *builder) embed(hidden int64, rowsU, rowsT, deq float64) {
	b.add(nGatherRowsU, "gather_scatter", roleUnattributed, rowsU, hidden/8)
	b.add(nGatherRows, "gather_scatter", roleUnattributed, rowsT, hidden/64)
	b.add(nGatherRows, "gather_scatter", roleUnattributed, rowsT, hidden/64)
	b.add(nDequant, "dequantize", roleUnattributed, deq, ew(hidden))
}

// join returns the role of a residual Add and the rms_norm right after it (docs/analysis.md
// §5 rule 5): only an attention block's join is "post_attn".
func join(afterAttention bool) role {
	if afterAttention {
		return roleAddRMSJoinPostAttn
	}
	return roleAddRMSJoin
}

// model is one of the four models a synthetic run can be of.
type model struct {
	key         string
	dirBase     string
	modelType   string
	rope        string // rope_scaling type, "" when none
	dtype       string
	vocab       int64
	maxContext  int
	peakGB      float64
	prefillTokS float64
	prefillGEMM string // "cijk" (hipBLASLt after a dequantization) or "qmm"
	// published per-token figures of the greedy run (docs/analysis.md §5 table)
	gpuMsTok, gapMsTok float64
	// shares (%) of ssm_step, the MoE roles and the qmv class to tune the durations to;
	// zero keeps the fixture's durations as they are
	shareSSM, shareMoE, shareQMV float64
	greedy                       [8]float64 // the greedy tail's durations
	addKind                      string     // the kind of the float Add of the logits processor
	forward                      func(b *builder, growth bool)
	config                       map[string]any
}

var models = map[string]*model{
	"llama":           llamaModel(),
	"qwen3-moe":       qwenModel(),
	"granite-hybrid":  graniteModel(),
	"nemotron-hybrid": nemotronModel(),
}

// Models lists the model keys --model accepts.
func Models() []string {
	keys := make([]string, 0, len(models))
	for k := range models {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ModelDirName returns the model directory basename of a model key.
func ModelDirName(key string) (string, error) {
	m, ok := models[key]
	if !ok {
		return "", fmt.Errorf("unknown model %q: want one of %s", key, strings.Join(Models(), ", "))
	}
	return m.dirBase, nil
}

// llamaModel: Llama-3.1-8B, 32 dense layers. Names, calls per step and average
// durations are the published profile's; the order is MLX's evaluation order.
func llamaModel() *model {
	const H, I, V, L = 4096, 14336, 128256, 32
	const qkv = H + 2*1024
	m := &model{
		key: "llama", dirBase: "Meta-Llama-3.1-8B-Instruct-4bit", modelType: "llama", rope: "llama3",
		dtype: "__half", vocab: V, maxContext: 131072, peakGB: 20.60, prefillTokS: 1069.4,
		prefillGEMM: "cijk", gpuMsTok: 23.34, gapMsTok: 1.80, addKind: "vv",
		greedy: [8]float64{3057, 2176, 1479, 1571, 982, 1869, 5617, 1934},
	}
	q := calibrate([][2]int64{{qkv, H}, {H, H}, {I, H}, {I, H}, {H, I}}, L, [2]int64{V, H}, 138548)
	m.forward = func(b *builder, growth bool) {
		b.embed(H, 1916, 1457, 1134)
		b.add(nCopyGG, "copy", roleUnattributed, 1851, ew(H))
		for l := 0; l < L; l++ {
			r := roleAddRMSJoin
			if l == 0 {
				r = roleUnattributed
			}
			b.add(nRMS, "rms_norm", r, 4148, 256)
			b.qmv(qkv, H, q)
			if growth { // the KV cache grows by 256 positions: zero-filled K and V
				b.add(nCopyS, "copy", roleUnattributed, 2078, ew(8*128*256))
				b.add(nCopyS, "copy", roleUnattributed, 2078, ew(8*128*256))
			}
			b.add(nRopeSingleFreqs, "rope", roleRopeAppend, 1586, 32*64)
			b.add(nRopeSingleFreqs, "rope", roleRopeAppend, 1586, 8*64)
			b.add(nCopyGG, "copy", roleRopeAppend, 1851, ew(8*128))
			b.add(nCopyGG, "copy", roleRopeAppend, 1851, ew(8*128))
			b.sdpa(32, 15731)
			b.qmv(H, H, q)
			b.add(binary("vv", "Add", "$T", "$T"), "binary", roleAddRMSJoinPostAttn, 2035, ew(H))
			b.add(nRMS, "rms_norm", roleAddRMSJoinPostAttn, 4148, 256)
			b.qmv(I, H, q)
			b.qmv(I, H, q)
			b.add(nSwiGLUHalf, "compiled", roleUnattributed, 2181, ew(I))
			b.qmv(H, I, q)
			b.add(binary("vv", "Add", "$T", "$T"), "binary", roleAddRMSJoin, 2035, ew(H))
		}
		b.add(nRMS, "rms_norm", roleAddRMSJoin, 4148, 256)
		b.lmHead(V, H, q)
	}
	m.config = map[string]any{
		"architectures": []string{"LlamaForCausalLM"}, "model_type": "llama",
		"hidden_size": H, "intermediate_size": I, "num_hidden_layers": L,
		"num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
		"max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
		"rope_scaling": map[string]any{"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
			"original_max_position_embeddings": 8192, "rope_type": "llama3"},
		"vocab_size": V, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
		"bos_token_id": 128000, "eos_token_id": []int{128001, 128008, 128009},
		"quantization": map[string]any{"group_size": 64, "bits": 4},
	}
	return m
}

// qwenModel: Qwen3-30B-A3B, 48 MoE layers (128 experts, 8 active). Names, calls per
// step and average durations are the published profile's.
func qwenModel() *model {
	const H, V, L = 2048, 151936, 48
	const qkv = (32 + 2*4) * 128
	m := &model{
		key: "qwen3-moe", dirBase: "Qwen3-30B-A3B-4bit", modelType: "qwen3_moe",
		dtype: "hip_bfloat16", vocab: V, maxContext: 40960, peakGB: 23.56, prefillTokS: 316.8,
		prefillGEMM: "qmm", gpuMsTok: 13.36, gapMsTok: 3.63, addKind: "ss",
		greedy: [8]float64{3432, 1560, 1103, 1388, 1244, 1851, 9534, 2107},
	}
	q := calibrate([][2]int64{{qkv, H}, {H, 4096}, {128, H}}, L, [2]int64{V, H}, 30685)
	m.forward = func(b *builder, growth bool) {
		b.embed(H, 1518, 1544, 1638)
		b.add(nCopyGG, "copy", roleUnattributed, 1440, ew(H))
		for l := 0; l < L; l++ {
			r := roleAddRMSJoin
			if l == 0 {
				r = roleUnattributed
			}
			b.add(nRMS, "rms_norm", r, 2717, 256)
			b.qmv(qkv, H, q)
			b.add(nRMS, "rms_norm", roleUnattributed, 2717, 32*256) // q_norm
			b.add(nRMS, "rms_norm", roleUnattributed, 2717, 4*256)  // k_norm
			if growth {
				b.add(nCopyS, "copy", roleUnattributed, 1640, ew(4*128*256))
				b.add(nCopyS, "copy", roleUnattributed, 1640, ew(4*128*256))
			}
			b.add(nRopeSingle, "rope", roleRopeAppend, 1381, 32*64)
			b.add(nRopeSingle, "rope", roleRopeAppend, 1381, 4*64)
			b.add(nCopyGG, "copy", roleRopeAppend, 1440, ew(4*128))
			b.add(nCopyGG, "copy", roleRopeAppend, 1440, ew(4*128))
			b.sdpa(32, 12775)
			b.qmv(H, 4096, q)
			b.add(binary("vv", "Add", "$T", "$T"), "binary", roleAddRMSJoinPostAttn, 1859, ew(H))
			b.add(nRMS, "rms_norm", roleAddRMSJoinPostAttn, 2717, 256)
			// router: softmax over 128 experts, top-8 by a block sort, normalized scores
			b.qmv(128, H, q)
			b.add(nSoftmax, "softmax", roleUnattributed, 3693, 256)
			b.add(nBlockSort, "sort", roleUnattributed, 12112, 32)
			b.add(nGatherAxis, "gather_scatter", roleUnattributed, 1560, 8)
			b.add(copyV("$T", f32), "copy", roleUnattributed, 1103, 8)
			b.add(nRowReduce, "reduce", roleUnattributed, 1568, 32)
			b.add(copyV(f32, "$T"), "copy", roleUnattributed, 1244, 8)
			b.add(binary("vs", "Divide", "$T", "$T"), "binary", roleUnattributed, 1506, 8)
			// experts: indices, gate and up GEMVs, SwiGLU, down GEMV, weighted sum
			for range 3 {
				b.add(nArange, "copy", roleMoEGatherIndices, 854, 8)
			}
			b.gatherQMV(768, H, 8, 39380)
			b.gatherQMV(768, H, 8, 39380)
			b.add(nSwiGLUBF16, "compiled", roleMoEActivation, 4568, ew(8*768))
			b.gatherQMV(H, 768, 8, 39380)
			b.add(binary("g", "Multiply", "$T", "$T"), "binary", roleMoEWeightedSum, 1571, ew(8*H))
			b.add(copyV("$T", f32), "copy", roleMoEWeightedSum, 1103, ew(8*H))
			b.add(nColReduce, "reduce", roleMoEWeightedSum, 2094, H)
			b.add(copyV(f32, "$T"), "copy", roleMoEWeightedSum, 1244, ew(H))
			b.add(binary("vv", "Add", "$T", "$T"), "binary", roleAddRMSJoin, 1859, ew(H))
		}
		b.add(nRMS, "rms_norm", roleAddRMSJoin, 2717, 256)
		b.lmHead(V, H, q)
	}
	m.config = map[string]any{
		"architectures": []string{"Qwen3MoeForCausalLM"}, "model_type": "qwen3_moe",
		"hidden_size": H, "intermediate_size": 6144, "moe_intermediate_size": 768,
		"num_hidden_layers": L, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
		"num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": true, "decoder_sparse_step": 1,
		"max_position_embeddings": 40960, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
		"rope_scaling": nil, "vocab_size": V, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
		"quantization": map[string]any{"group_size": 64, "bits": 4},
	}
	return m
}

// ssmStep is the Mamba2 state update without a fused kernel: the dt, decay, input,
// state and output paths and the z gate as MLX ops. None of it is a conv, a copy_gg or a
// Sigmoid-compiled kernel, and it ends on a copy, so rule 2 calls all of it ssm_step.
func ssmStep(b *builder, groups bool) {
	type s struct {
		name, class string
		us          float64
	}
	seq := []s{
		{copyV("$T", f32), "copy", 1.3}, // dt
		{binary("g", "Add", f32, f32), "binary", 1.6},
		{nSoftplus, "compiled", 2.0},
		{binary("vs", "Maximum", f32, f32), "binary", 1.3},
		{binary("vs", "Minimum", f32, f32), "binary", 1.3},
		{binary("vs", "Multiply", f32, f32), "binary", 1.2},
		{copyG(f32), "copy", 1.4},
		{unary("Exp", f32, f32), "unary", 1.3}, // A = -exp(A_log)
		{unary("Negative", f32, f32), "unary", 1.2},
		{binary("g", "Multiply", f32, f32), "binary", 1.6},
		{unary("Exp", f32, f32), "unary", 1.3}, // decay
		{copyG(f32), "copy", 1.5},
		{copyG(f32), "copy", 1.5},
		{copyV("$T", f32), "copy", 1.6}, // x
		{copyG(f32), "copy", 1.8},
		{copyG(f32), "copy", 1.7},
		{copyV("$T", f32), "copy", 1.3}, // B
		{copyG(f32), "copy", 1.7},
		{copyV("$T", f32), "copy", 1.3}, // C
		{copyG(f32), "copy", 1.7},
		{copyG(f32), "copy", 1.6},
		{binary("g", "Multiply", f32, f32), "binary", 1.8},
		{copyG(f32), "copy", 1.6},
		{binary("g", "Multiply", f32, f32), "binary", 4.0}, // dt x B
		{binary("g", "Multiply", f32, f32), "binary", 4.5}, // state decay
		{binary("vv", "Add", f32, f32), "binary", 4.2},
		{binary("vs", "Maximum", f32, f32), "binary", 3.6},
		{copyV(f32, "$T"), "copy", 3.2}, // state into the cache
		{copyG("$T"), "copy", 3.0},
		{copyV("$T", f32), "copy", 3.1},
		{binary("g", "Multiply", f32, f32), "binary", 4.4}, // y = state . C
		{nRowReduce, "reduce", 3.6},
		{copyG(f32), "copy", 1.5},
		{copyV("$T", f32), "copy", 1.1}, // D skip
		{binary("g", "Multiply", f32, f32), "binary", 1.6},
		{binary("vv", "Add", f32, f32), "binary", 1.5},
		{copyV(f32, "$T"), "copy", 1.4},
		{copyG("$T"), "copy", 1.5},
		{copyV("$T", f32), "copy", 1.3}, // z gate: z / (1 + exp(-z))
		{unary("Negative", f32, f32), "unary", 1.2},
		{unary("Exp", f32, f32), "unary", 1.3},
		{binary("sv", "Add", f32, f32), "binary", 1.3},
		{binary("vv", "Divide", f32, f32), "binary", 1.4},
		{copyV("$T", f32), "copy", 1.3},
		{binary("vv", "Multiply", f32, f32), "binary", 1.4},
		{copyV(f32, "$T"), "copy", 1.3},
		{copyG("$T"), "copy", 1.5},
	}
	if groups { // several B/C groups: repeat them to the heads, scale
		extra := []s{{copyG(f32), "copy", 1.7}, {copyG(f32), "copy", 1.7}, {binary("g", "Multiply", f32, f32), "binary", 1.9}}
		seq = append(seq[:21:21], append(extra, seq[21:]...)...)
	}
	for _, o := range seq {
		b.add(o.name, o.class, roleSSMStep, o.us*1000, ew(4096))
	}
}

// mamba2 is one Mamba2 mixer: in_proj, the conv step, the SSM update, the gated norm and
// out_proj. Rule 2 sees the span between the two GEMVs.
func mamba2(b *builder, hidden, inProj, dInner int64, groups bool, gatedTail int) {
	b.qmv(inProj, hidden, bandwidth)
	convDim := inProj - dInner - 64
	b.add(nConv, "conv", roleSSMConv, 3000, convDim)
	b.add(nCopyGG, "copy", roleSSMConv, 1500, ew(3*convDim))
	b.add(nCopyGG, "copy", roleSSMConv, 1500, ew(3*convDim))
	b.add(nSiluBF16, "compiled", roleSSMSilu, 2200, ew(convDim))
	ssmStep(b, groups)
	b.add(nRMS, "rms_norm", roleSSMGatedNorm, 2700, 8*256)
	tail := []struct{ name, class string }{
		{copyG("$T"), "copy"}, {binary("g", "Multiply", "$T", "$T"), "binary"}, {copyV("$T", f32), "copy"},
		{binary("vs", "Multiply", f32, f32), "binary"}, {copyV(f32, "$T"), "copy"}, {copyG("$T"), "copy"},
	}
	for _, t := range tail[:gatedTail] {
		b.add(t.name, t.class, roleSSMGatedNorm, 1500, ew(dInner))
	}
	b.qmv(hidden, dInner, bandwidth)
}

// routedExperts is the expert part of an MoE block after the router: the gather
// indices, the expert GEMVs with their activation in between, and the weighted sum.
func routedExperts(b *builder, hidden, ffn, active int64, act string, gated bool) {
	b.add(nArange, "copy", roleMoEGatherIndices, 900, 8)
	b.add(nArange, "copy", roleMoEGatherIndices, 900, 8)
	up := ffn
	if gated {
		up = 2 * ffn
	}
	b.gatherQMV(up, hidden, active, bandwidth.dur(up*active, hidden))
	b.add(act, "compiled", roleMoEActivation, 3500, ew(active*ffn))
	b.gatherQMV(hidden, ffn, active, bandwidth.dur(hidden*active, ffn))
	b.add(binary("g", "Multiply", "$T", "$T"), "binary", roleMoEWeightedSum, 1600, ew(active*hidden))
	b.add(copyV("$T", f32), "copy", roleMoEWeightedSum, 1200, ew(active*hidden))
	b.add(nColReduce, "reduce", roleMoEWeightedSum, 2100, hidden)
	b.add(copyV(f32, "$T"), "copy", roleMoEWeightedSum, 1250, ew(hidden))
}

// attention is a NoPE attention mixer with a dense KV cache (no rope in either hybrid).
func attention(b *builder, hidden, heads, kvHeads int64, growth bool) {
	b.qmv((heads+2*kvHeads)*128, hidden, bandwidth)
	if growth {
		b.add(nCopyS, "copy", roleUnattributed, 1600, ew(kvHeads*128*256))
		b.add(nCopyS, "copy", roleUnattributed, 1600, ew(kvHeads*128*256))
	}
	b.add(nCopyGG, "copy", roleUnattributed, 1450, ew(kvHeads*128))
	b.add(nCopyGG, "copy", roleUnattributed, 1450, ew(kvHeads*128))
	b.sdpa(heads, 12500)
	b.qmv(hidden, heads*128, bandwidth)
}

// graniteModel: granite-4.0-h-tiny, 40 layers (36 Mamba2, 4 attention), each with a
// 64-expert MoE (6 active) and a shared expert. Invented names and durations, tuned to
// the published figures.
func graniteModel() *model {
	const H, V, L = 1536, 100352, 40
	const dInner, inProj = 3072, 2*3072 + 2*128 + 48
	attn := map[int]bool{5: true, 15: true, 25: true, 35: true}
	m := &model{
		key: "granite-hybrid", dirBase: "granite-4.0-h-tiny-4bit", modelType: "granitemoehybrid",
		dtype: "hip_bfloat16", vocab: V, maxContext: 131072, peakGB: 6.12, prefillTokS: 1450,
		prefillGEMM: "cijk", gpuMsTok: 11.47, gapMsTok: 8.59, addKind: "ss",
		shareSSM: 29.8, shareMoE: 25.4, shareQMV: 24.3,
		greedy: [8]float64{2300, 1300, 1000, 1100, 1000, 1500, 6300, 1900},
	}
	m.forward = func(b *builder, growth bool) {
		b.embed(H, 1500, 1500, 1600)
		b.add(binary("vs", "Multiply", "$T", "$T"), "binary", roleUnattributed, 1300, ew(H)) // embedding multiplier
		for l := 0; l < L; l++ {
			r := roleAddRMSJoin
			if l == 0 {
				r = roleUnattributed
			}
			b.add(nRMS, "rms_norm", r, 2700, 256)
			if attn[l] {
				attention(b, H, 12, 4, growth)
			} else {
				mamba2(b, H, inProj, dInner, false, 6)
			}
			b.add(binary("vv", "Add", "$T", "$T"), "binary", join(attn[l]), 1900, ew(H))
			b.add(nRMS, "rms_norm", join(attn[l]), 2700, 256)
			// router: top-6 of 64 by a block sort, softmax over the chosen scores
			b.qmv(64, H, bandwidth)
			b.add(unary("Negative", "$T", "$T"), "unary", roleUnattributed, 1200, 64)
			b.add(nBlockSort, "sort", roleUnattributed, 9000, 32)
			b.add(nGatherAxis, "gather_scatter", roleUnattributed, 1500, 8)
			b.add(copyV("$T", f32), "copy", roleUnattributed, 1100, 8)
			b.add(nSoftmaxF, "softmax", roleUnattributed, 3500, 256)
			b.add(copyV(f32, "$T"), "copy", roleUnattributed, 1200, 8)
			routedExperts(b, H, 512, 6, nSwiGLUBF16, true)
			b.qmv(2*1024, H, bandwidth) // shared expert
			b.add(nSwiGLUBF16, "compiled", roleUnattributed, 2600, ew(1024))
			b.qmv(H, 1024, bandwidth)
			b.add(binary("vv", "Add", "$T", "$T"), "binary", roleUnattributed, 1900, ew(H))
			b.add(binary("vs", "Multiply", "$T", "$T"), "binary", roleUnattributed, 1400, ew(H)) // residual multiplier
			b.add(binary("vv", "Add", "$T", "$T"), "binary", roleAddRMSJoin, 1900, ew(H))
		}
		b.add(nRMS, "rms_norm", roleAddRMSJoin, 2700, 256)
		b.lmHead(V, H, bandwidth)
	}
	types := make([]string, L)
	for l := range types {
		types[l] = "mamba"
		if attn[l] {
			types[l] = "attention"
		}
	}
	m.config = map[string]any{
		"architectures": []string{"GraniteMoeHybridForCausalLM"}, "model_type": "granitemoehybrid",
		"hidden_size": H, "num_hidden_layers": L, "layer_types": types,
		"num_attention_heads": 12, "num_key_value_heads": 4, "position_embedding_type": "nope",
		"num_local_experts": 64, "num_experts_per_tok": 6, "intermediate_size": 512,
		"shared_intermediate_size": 1024, "mamba_n_heads": 48, "mamba_d_head": 64, "mamba_d_state": 128,
		"mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256,
		"embedding_multiplier": 12.0, "residual_multiplier": 0.22, "attention_multiplier": 0.0078125,
		"logits_scaling": 6.0, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
		"rope_scaling": nil, "vocab_size": V, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
		"quantization": map[string]any{"group_size": 64, "bits": 4},
	}
	return m
}

// nemotronPattern is the block order of the Nemotron-H model: M = Mamba2, E = MoE,
// * = attention (23, 23 and 6).
const nemotronPattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"

// nemotronModel: NVIDIA-Nemotron-3-Nano-30B-A3B, 52 single-mixer blocks. Invented names
// and durations, tuned to the published figures.
func nemotronModel() *model {
	const H, V = 2688, 131072
	const dInner, inProj = 4096, 2*4096 + 2*8*128 + 64
	m := &model{
		key: "nemotron-hybrid", dirBase: "NVIDIA-Nemotron-3-Nano-30B-A3B-4bit", modelType: "nemotron_h",
		dtype: "hip_bfloat16", vocab: V, maxContext: 262144, peakGB: 21.87, prefillTokS: 560,
		prefillGEMM: "cijk", gpuMsTok: 14.28, gapMsTok: 8.93, addKind: "ss",
		shareSSM: 20.0, shareMoE: 29.2, shareQMV: 38.6,
		greedy: [8]float64{2900, 1400, 1050, 1200, 1100, 1650, 8200, 2000},
	}
	m.forward = func(b *builder, growth bool) {
		b.embed(H, 1500, 1500, 1600)
		prev := byte(0)
		for _, c := range []byte(nemotronPattern) {
			r := join(prev == '*')
			if prev == 0 {
				r = roleUnattributed
			}
			b.add(nRMS, "rms_norm", r, 2800, 256)
			switch c {
			case 'M':
				mamba2(b, H, inProj, dInner, true, 3)
			case '*':
				attention(b, H, 32, 2, growth)
			case 'E':
				// sigmoid router with a score correction, top-6 of 128, normalized, scaled
				b.qmv(128, H, bandwidth)
				b.add(copyV("$T", f32), "copy", roleUnattributed, 1100, 32)
				b.add(nRouterSig, "compiled", roleUnattributed, 2000, 32)
				b.add(nBlockSort, "sort", roleUnattributed, 11000, 32)
				b.add(nGatherAxis, "gather_scatter", roleUnattributed, 1500, 8)
				b.add(nRowReduce, "reduce", roleUnattributed, 1550, 32)
				b.add(binary("vs", "Divide", f32, f32), "binary", roleUnattributed, 1450, 8)
				b.add(binary("vs", "Multiply", f32, f32), "binary", roleUnattributed, 1400, 8)
				b.add(copyV(f32, "$T"), "copy", roleUnattributed, 1200, 8)
				routedExperts(b, H, 1856, 6, nRelu2, false)
				b.qmv(3712, H, bandwidth) // shared expert
				b.add(nRelu2, "compiled", roleUnattributed, 2400, ew(3712))
				b.qmv(H, 3712, bandwidth)
				b.add(binary("vv", "Add", "$T", "$T"), "binary", roleUnattributed, 1900, ew(H))
			}
			b.add(binary("vv", "Add", "$T", "$T"), "binary", join(c == '*'), 1900, ew(H))
			prev = c
		}
		b.add(nRMS, "rms_norm", join(prev == '*'), 2800, 256)
		b.lmHead(V, H, bandwidth)
	}
	m.config = map[string]any{
		"architectures": []string{"NemotronHForCausalLM"}, "model_type": "nemotron_h",
		"hidden_size": H, "num_hidden_layers": len(nemotronPattern), "hybrid_override_pattern": nemotronPattern,
		"num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
		"n_routed_experts": 128, "num_experts_per_tok": 6, "moe_intermediate_size": 1856,
		"moe_shared_expert_intermediate_size": 3712, "n_group": 1, "topk_group": 1,
		"norm_topk_prob": true, "routed_scaling_factor": 2.5, "mlp_hidden_act": "relu2",
		"mamba_num_heads": 64, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8,
		"conv_kernel": 4, "mamba_hidden_act": "silu", "max_position_embeddings": 262144,
		"layer_norm_epsilon": 1e-05, "rope_scaling": nil, "vocab_size": V,
		"tie_word_embeddings": false, "torch_dtype": "bfloat16",
		"quantization": map[string]any{"group_size": 64, "bits": 4},
	}
	return m
}

// sampler appends the sampling tail that follows the lm_head: the logits processor and
// the argmax (greedy), or a Gumbel-max categorical draw at the temperature, with a
// full-vocabulary sort, a cumulative sum and a mask for top-p. Every variant ends on
// arg_reduce_final, the last dispatch of a token.
func (m *model) sampler(b *builder, s results.Sampling) {
	d := m.greedy
	vs := float64(m.vocab) / 128256
	v := m.vocab
	add := func(name, class string, dur float64, gx int64) {
		b.add(name, class, roleSamplerTail, dur, gx)
	}
	add(copyV("$T", "$T"), "copy", d[0], ew(v))
	add(nGatherAxis, "gather_scatter", d[1], 256)
	add(copyV("$T", f32), "copy", d[2], 256)
	add(binary(m.addKind, "Add", f32, f32), "binary", d[3], 256)
	add(copyV(f32, "$T"), "copy", d[4], 256)
	add(nScatAxis, "gather_scatter", d[5], 256)
	if s.Temperature == 0 {
		add(nArgPartial, "arg_reduce", d[6], 256*64)
		add(nArgFinal, "arg_reduce", d[7], 256)
		return
	}
	e := func(name, class string, us float64) { add(name, class, us*1000*vs, ew(v)) }
	e(copyV("$T", f32), "copy", 1.5)
	e(copyV(f32, f32), "copy", 1.3)
	e(binary("vs", "Multiply", f32, f32), "binary", 1.4) // 1/T
	e(nLogSumExp, "logsumexp", 5.2)
	e(binary("vs", "Subtract", f32, f32), "binary", 1.4)
	e(copyG(f32), "copy", 1.6)
	e(copyV(f32, "$T"), "copy", 1.0)
	if s.TopP < 1 {
		passes := 0
		for blocks := (v + 2047) / 2048; blocks > 1; blocks = (blocks + 1) / 2 {
			passes++
		}
		e(nSoftmaxF, "softmax", 6.0)
		e(nMBSort, "sort", 22)
		for range passes {
			e(nMBPart, "sort", 3.0)
			e(nMBMerge, "other", 9.0)
		}
		e(nGatherAxF, "gather_scatter", 4.0)
		e(nCumSum, "scan", 7.0)
		e(binary("vs", "Greater", f32, "bool"), "binary", 1.5)
		e(nSelect, "ternary", 1.7)
		e(nScatAxF, "gather_scatter", 4.2)
		e(unary("Log", f32, f32), "unary", 1.6)
	}
	e(nRbits, "random", 1.9) // split the key
	e(copyG(u32), "copy", 1.1)
	e(copyG(u32), "copy", 1.1)
	e(nRbits, "random", 7.8) // bits for the whole vocabulary
	e(binary("vs", "RightShift", u32, u32), "binary", 1.5)
	e(binary("vs", "BitwiseOr", u32, u32), "binary", 1.5)
	e(binary("vs", "Subtract", f32, f32), "binary", 1.4)
	e(binary("vs", "Multiply", f32, f32), "binary", 1.4)
	e(binary("vs", "Add", f32, f32), "binary", 1.4)
	e(binary("vs", "Maximum", f32, f32), "binary", 1.4)
	e(unary("Log", f32, f32), "unary", 1.6)
	e(unary("Negative", f32, f32), "unary", 1.3)
	e(unary("Log", f32, f32), "unary", 1.6)
	e(unary("Negative", f32, f32), "unary", 1.3)
	e(copyG(f32), "copy", 1.5)
	e(unary("IsNaN", f32, "bool"), "unary", 1.3)
	e(nSelect, "ternary", 1.6)
	e(binary("vv", "Add", f32, f32), "binary", 1.5)
	add(nArgPartF, "arg_reduce", 5600*vs, 256*64)
	add(nArgFinalF, "arg_reduce", 1900, 256)
}
