package synth

// A deliberately plain re-implementation of docs/analysis.md §2-§5 over the written files,
// independent of how the generator placed its dispatches: the truth must agree with it.

import (
	"bufio"
	"encoding/csv"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

type tDisp struct {
	name       string
	start, end int64
	grid       int64
}

// readTraceCSV reads a kernel trace by column name with a lazy-quote reader; first is
// the first data row as read.
func readTraceCSV(t *testing.T, path string) (header []string, rows []tDisp, first []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	r.LazyQuotes = true
	header, err = r.Read()
	if err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(h)] = i
	}
	for _, need := range []string{"kernel_name", "start_timestamp", "end_timestamp", "grid_size_x", "grid_size_y", "grid_size_z"} {
		if _, ok := col[need]; !ok {
			t.Fatalf("%s: no %s column in %v", path, need, header)
		}
	}
	num := func(rec []string, c string) int64 {
		v, err := strconv.ParseInt(rec[col[c]], 10, 64)
		if err != nil {
			t.Fatalf("%s: %s %q: %v", path, c, rec[col[c]], err)
		}
		return v
	}
	r.ReuseRecord = true
	names := map[string]string{} // one string per distinct name
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		g := int64(1)
		for _, c := range []string{"grid_size_x", "grid_size_y", "grid_size_z"} {
			g *= max(1, num(rec, c))
		}
		name, ok := names[rec[col["kernel_name"]]]
		if !ok {
			name = strings.Clone(rec[col["kernel_name"]])
			names[name] = name
		}
		rows = append(rows, tDisp{name: name, start: num(rec, "start_timestamp"), end: num(rec, "end_timestamp"), grid: g})
		if first == nil {
			first = slices.Clone(rec)
		}
	}
	return slices.Clone(header), rows, first
}

type benchInfo struct {
	marks      map[string][2]*int64 // name -> monotonic, boottime (nil when na)
	tokens     int
	prompt     int
	decodeMs   float64
	decodeTokS float64
	prefillMs  float64
	prefillTok float64
}

var (
	phaseRE   = regexp.MustCompile(`^\[phase\] (\w+) monotonic_ns=(\S+) boottime_ns=(\S+)$`)
	decodeRE  = regexp.MustCompile(`^\s*Decode:\s+([0-9.]+) ms \(([0-9.]+) tok/s\)$`)
	prefillRE = regexp.MustCompile(`^\s*Prefill:\s+([0-9.]+) ms \(([0-9.]+) tok/s\)$`)
	genRE     = regexp.MustCompile(`^\s*Generated tokens:\s+(\d+)$`)
	promptRE  = regexp.MustCompile(`^\s*Prompt tokens:\s+(\d+)$`)
)

func readBenchLog(t *testing.T, path string) benchInfo {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bi := benchInfo{marks: map[string][2]*int64{}}
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if m := phaseRE.FindStringSubmatch(line); m != nil {
			var v [2]*int64
			for i, s := range m[2:4] {
				if s != "na" {
					n, err := strconv.ParseInt(s, 10, 64)
					if err != nil {
						t.Fatalf("%s: %q", path, line)
					}
					v[i] = &n
				}
			}
			bi.marks[m[1]] = v
		}
		if m := decodeRE.FindStringSubmatch(line); m != nil {
			bi.decodeMs, _ = strconv.ParseFloat(m[1], 64)
			bi.decodeTokS, _ = strconv.ParseFloat(m[2], 64)
		}
		if m := prefillRE.FindStringSubmatch(line); m != nil {
			bi.prefillMs, _ = strconv.ParseFloat(m[1], 64)
			bi.prefillTok, _ = strconv.ParseFloat(m[2], 64)
		}
		if m := genRE.FindStringSubmatch(line); m != nil {
			bi.tokens, _ = strconv.Atoi(m[1])
		}
		if m := promptRE.FindStringSubmatch(line); m != nil {
			bi.prompt, _ = strconv.Atoi(m[1])
		}
	}
	return bi
}

// classRules are docs/analysis.md §4 in order; all case-insensitive except compiled.
var classRules = []struct {
	class string
	re    *regexp.Regexp
}{
	{"gather_qmv", regexp.MustCompile(`(?i)gather.*q(mv|mm)|q(mv|mm).*gather`)},
	{"gather_mm", regexp.MustCompile(`(?i)gather_mm|segmented|sorted_rhs`)},
	{"qmv", regexp.MustCompile(`(?i)\bqmv|qmv_|_qmv|qvm`)},
	{"qmm", regexp.MustCompile(`(?i)\bqmm|qmm_|_qmm`)},
	{"gemm", regexp.MustCompile(`(?i)Cijk_|gemm|gemv|rocblas|hipblaslt|wmma_matmul`)},
	{"rms_norm", regexp.MustCompile(`(?i)rms_?norm`)},
	{"layer_norm", regexp.MustCompile(`(?i)layer_?norm`)},
	{"rope", regexp.MustCompile(`(?i)rope`)},
	{"sdpa", regexp.MustCompile(`(?i)sdpa|attention|flash`)},
	{"softmax", regexp.MustCompile(`(?i)softmax`)},
	{"logsumexp", regexp.MustCompile(`(?i)logsumexp`)},
	{"arg_reduce", regexp.MustCompile(`(?i)arg_?reduce|argmax|argmin`)},
	{"scan", regexp.MustCompile(`(?i)scan|cumsum`)},
	{"sort", regexp.MustCompile(`(?i)sort|partition`)},
	{"random", regexp.MustCompile(`(?i)rbits|random|philox|threefry`)},
	{"conv", regexp.MustCompile(`(?i)conv`)},
	{"reduce", regexp.MustCompile(`(?i)reduce|all_reduce|row_reduce|col_reduce`)},
	{"gather_scatter", regexp.MustCompile(`(?i)gather|scatter|take|slice_update|masked`)},
	{"copy", regexp.MustCompile(`(?i)copy|fill|arange`)},
	{"binary", regexp.MustCompile(`(?i)binary`)},
	{"ternary", regexp.MustCompile(`(?i)ternary|select|where`)},
	{"unary", regexp.MustCompile(`(?i)unary`)},
	{"dequantize", regexp.MustCompile(`(?i)dequantize`)},
	{"compiled", regexp.MustCompile(`rocm::[A-Z][A-Za-z0-9]+_[A-Za-z0-9_]*_(contiguous|strided)<`)},
}

var classCache sync.Map // name -> class: a trace repeats a few dozen names

func classify(name string) string {
	if c, ok := classCache.Load(name); ok {
		return c.(string)
	}
	c := "other"
	for _, r := range classRules {
		if r.re.MatchString(name) {
			c = r.class
			break
		}
	}
	classCache.Store(name, c)
	return c
}

// applyRoles is docs/analysis.md §5 over the ordered decode dispatches.
func applyRoles(ds []tDisp) []string {
	n := len(ds)
	cls := make([]string, n)
	for i, d := range ds {
		cls[i] = classify(d.name)
	}
	roles := make([]string, n)
	free := func(i int) bool { return roles[i] == "" }
	in := func(c string, set ...string) bool {
		for _, s := range set {
			if c == s {
				return true
			}
		}
		return false
	}
	// 1. sampler tail after the widest qmv
	var widest int64
	for i, d := range ds {
		if cls[i] == "qmv" && d.grid > widest {
			widest = d.grid
		}
	}
	for i, d := range ds {
		if cls[i] != "qmv" || d.grid != widest {
			continue
		}
		for j := i + 1; j < n; j++ {
			if in(cls[j], "qmv", "rms_norm", "dequantize", "gather_qmv", "sdpa", "gemm") || strings.Contains(ds[j].name, "gather_rows") {
				break
			}
			if free(j) {
				roles[j] = "sampler_tail"
			}
		}
	}
	// 2. Mamba2 mixer spans around conv dispatches
	for i := range ds {
		if cls[i] != "conv" {
			continue
		}
		lo, hi := i-1, i+1
		for lo >= 0 && !in(cls[lo], "qmv", "gather_qmv") {
			lo--
		}
		for hi < n && !in(cls[hi], "qmv", "gather_qmv") {
			hi++
		}
		lastRMS := -1
		for k := lo + 1; k < hi; k++ {
			if cls[k] == "rms_norm" {
				lastRMS = k
			}
		}
		for k := lo + 1; k < hi; k++ {
			if !free(k) {
				continue
			}
			switch {
			case lastRMS >= 0 && k >= lastRMS:
				roles[k] = "ssm_gated_norm"
			case cls[k] == "conv" || strings.Contains(ds[k].name, "copy_gg"):
				roles[k] = "ssm_conv"
			case cls[k] == "compiled" && strings.Contains(ds[k].name, "Sigmoid"):
				roles[k] = "ssm_silu"
			default:
				roles[k] = "ssm_step"
			}
		}
	}
	// 3. MoE clusters
	var gq []int
	for i := range ds {
		if cls[i] == "gather_qmv" {
			gq = append(gq, i)
		}
	}
	var clusters [][2]int
	for i, g := range gq {
		if i > 0 && g-gq[i-1] <= 12 {
			clusters[len(clusters)-1][1] = g
		} else {
			clusters = append(clusters, [2]int{g, g})
		}
		if free(g) {
			roles[g] = "moe_expert_gemv"
		}
	}
	for _, c := range clusters {
		for k := c[0] + 1; k < c[1]; k++ {
			if free(k) && in(cls[k], "compiled", "binary", "copy", "unary") && !strings.Contains(ds[k].name, "::Divide,") {
				roles[k] = "moe_activation"
			}
		}
		for k := c[1] + 1; k < n && free(k) && in(cls[k], "binary", "copy", "reduce", "unary"); k++ {
			if cls[k] == "binary" && strings.Contains(ds[k].name, "::Add,") {
				break
			}
			roles[k] = "moe_weighted_sum"
		}
	}
	if len(gq) > 0 {
		for k := range ds {
			if free(k) && strings.Contains(ds[k].name, "arange_kernel<unsigned int>") {
				roles[k] = "moe_gather_indices"
			}
		}
	}
	// 4. rope and the copy_gg right after it
	for i := range ds {
		if !free(i) || cls[i] != "rope" {
			continue
		}
		roles[i] = "rope_append"
		for j := i + 1; j < n && free(j) && strings.Contains(ds[j].name, "copy_gg"); j++ {
			roles[j] = "rope_append"
		}
	}
	// 5. residual joins
	for i := 0; i+1 < n; i++ {
		if free(i) && cls[i] == "binary" && strings.Contains(ds[i].name, "::Add,") && cls[i+1] == "rms_norm" && free(i+1) {
			r := "add_rms_join"
			if i >= 2 && cls[i-2] == "sdpa" && cls[i-1] == "qmv" {
				r = "add_rms_join_post_attn"
			}
			roles[i], roles[i+1] = r, r
		}
	}
	// 6, 7
	for i := range ds {
		if free(i) && strings.Contains(strings.ToLower(ds[i].name), "paged") {
			roles[i] = "paged_attention"
		}
		if free(i) {
			roles[i] = "unattributed"
		}
	}
	return roles
}

// analysis is what docs/analysis.md §2-§3 computes from the files.
type analysis struct {
	clock                     string
	clockCounts               map[string]int
	lo, hi                    int64
	decode                    []tDisp
	sum, busy, wall           int64
	straddlers                int
	idleGap                   int64
	lastBefore                string
	roles                     []string
	roleGPU, roleGap, roleCnt map[string]int64
	tail                      int64
}

func analyze(t *testing.T, rows []tDisp, bi benchInfo) analysis {
	t.Helper()
	sorted := append([]tDisp(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].start < sorted[j].start })
	a := analysis{clockCounts: map[string]int{}}
	best := -1
	for ci, c := range []string{"monotonic", "boottime"} { // index into the marks pair
		w, e := bi.marks["warmup_start"][ci], bi.marks["measured_end"][ci]
		if w == nil || e == nil {
			continue
		}
		n := 0
		for _, d := range sorted {
			if d.start >= *w && d.start <= *e {
				n++
			}
		}
		a.clockCounts[c] = n
		if n > best || (n == best && c == "boottime") {
			best, a.clock = n, c
			a.lo, a.hi = *bi.marks["decode_start"][ci], *e
		}
	}
	if best <= 0 {
		t.Fatal("no dispatch between the phase marks on either clock")
	}
	a.wall = a.hi - a.lo
	a.roleGPU, a.roleGap, a.roleCnt = map[string]int64{}, map[string]int64{}, map[string]int64{}
	lastIdx := -1
	for i, d := range sorted {
		if d.start < a.lo && d.end > a.lo {
			a.straddlers++
		}
		if d.end <= a.lo {
			lastIdx = i
		}
		if d.start >= a.lo && d.start <= a.hi {
			a.decode = append(a.decode, d)
		}
	}
	if len(a.decode) == 0 || lastIdx < 0 {
		t.Fatal("empty decode window")
	}
	a.idleGap = a.decode[0].start - sorted[lastIdx].end
	a.lastBefore = sorted[lastIdx].name[:min(120, len(sorted[lastIdx].name))]
	a.roles = applyRoles(a.decode)
	// busy = union of clipped intervals; gaps by the frontier walk
	frontier := a.lo
	for i, d := range a.decode {
		a.sum += d.end - d.start
		a.roleGPU[a.roles[i]] += d.end - d.start
		a.roleCnt[a.roles[i]]++
		a.roleGap[a.roles[i]] += max(0, min(d.start, a.hi)-frontier)
		frontier = max(frontier, min(d.end, a.hi))
	}
	a.tail = a.hi - frontier
	// union, computed separately from the walk: merge sorted clipped intervals
	var cs, ce int64 = -1, -1
	for _, d := range a.decode {
		s, e := max(d.start, a.lo), min(d.end, a.hi)
		if e <= s {
			continue
		}
		if s > ce {
			if ce > cs {
				a.busy += ce - cs
			}
			cs, ce = s, e
		} else if e > ce {
			ce = e
		}
	}
	if ce > cs {
		a.busy += ce - cs
	}
	return a
}
