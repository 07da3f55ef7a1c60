package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/lablup/perfbot/runner/results"
)

// Truth is what the synthesizer knows about the decode window because it placed every
// dispatch: the figures docs/analysis.md §2-§5 must recover, in exact integer nanoseconds.
// Role maps hold only the roles that occur (plus "tail" among the host gaps).
type Truth struct {
	Run                  string           `json:"run"`
	Model                string           `json:"model"`
	ModelType            string           `json:"model_type"`
	RopeScaling          *string          `json:"rope_scaling"`
	Temperature          results.Num      `json:"temperature"`
	TopP                 results.Num      `json:"top_p"`
	GeneratedTokens      int              `json:"generated_tokens"`
	Steps                int              `json:"steps"`
	Clock                string           `json:"clock"`
	DecodeDispatches     int              `json:"decode_dispatches"`
	DispatchesPerStep    int              `json:"dispatches_per_step"`
	GPUSumNs             int64            `json:"gpu_sum_ns"`
	GPUBusyNs            int64            `json:"gpu_busy_ns"`
	WallNs               int64            `json:"wall_ns"`
	HostGapNs            int64            `json:"host_gap_ns"`
	Straddlers           int              `json:"straddlers"`
	IdleGapBeforeFirstNs int64            `json:"idle_gap_before_first_ns"`
	LastBeforeDecode     string           `json:"last_before_decode"`
	RolesPerStep         map[string]int   `json:"roles_per_step"`
	RoleGPUNs            map[string]int64 `json:"role_gpu_ns"`
	RoleHostGapNs        map[string]int64 `json:"role_host_gap_ns"`
	RoleNames            []string         `json:"role_names"`
	// DecodeRoles is the index in RoleNames of each decode dispatch, in start order.
	DecodeRoles []int `json:"-"`

	// Context for tests and the demo (not docs/analysis.md figures).
	RoleDispatches       map[string]int `json:"role_dispatches"`
	LastBeforeDecodeFull string         `json:"last_before_decode_full"`
	PromptTokens         int            `json:"prompt_tokens"`
	Layout               string         `json:"layout"`
	Seed                 int64          `json:"seed"`
	TraceRows            int            `json:"trace_rows"`
	// DecodeStartNs and MeasuredEndNs bound the window on the truth's clock.
	DecodeStartNs int64 `json:"decode_start_ns"`
	MeasuredEndNs int64 `json:"measured_end_ns"`
	// ClockCounts are the dispatches in [warmup_start, measured_end] per clock printed.
	ClockCounts map[string]int `json:"clock_counts"`
}

// truthAcc walks the dispatches in start order and measures the window [lo, hi].
type truthAcc struct {
	lo, hi   int64
	frontier int64

	n, designed      int
	sum, busy        int64
	straddlers       int
	lastBeforeEnd    int64
	lastBeforeK      int32
	haveLastBefore   bool
	firstStart       int64
	roles            []uint8
	roleN            [numRoles]int
	roleGPU, roleGap [numRoles]int64
	outside          int // designed decode dispatches that fell outside the window
}

func newTruthAcc(lo, hi int64, expect int) *truthAcc {
	return &truthAcc{lo: lo, hi: hi, frontier: lo, roles: make([]uint8, 0, expect)}
}

func (a *truthAcc) add(d *disp) {
	if d.decode {
		a.designed++
	}
	if d.start < a.lo && d.end > a.lo {
		a.straddlers++
	}
	if d.end <= a.lo {
		// in start order, so the last one seen is the last before the cut
		a.lastBeforeEnd, a.lastBeforeK, a.haveLastBefore = d.end, d.k, true
	}
	if d.start < a.lo || d.start > a.hi {
		if d.decode {
			a.outside++
		}
		return
	}
	if !d.decode {
		a.outside++
	}
	if a.n == 0 {
		a.firstStart = d.start
	}
	a.n++
	a.sum += d.end - d.start
	end := min(d.end, a.hi)
	a.roleGap[d.role] += max(0, min(d.start, a.hi)-a.frontier)
	a.busy += max(0, end-max(d.start, a.frontier))
	a.frontier = max(a.frontier, end)
	a.roles = append(a.roles, uint8(d.role))
	a.roleN[d.role]++
	a.roleGPU[d.role] += d.end - d.start
}

// marshalTruth writes the truth as indented JSON with decode_roles on one line.
func marshalTruth(t *Truth) ([]byte, error) {
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false) // kernel names are full of <>
	e.SetIndent("", "  ")
	if err := e.Encode(t); err != nil {
		return nil, err
	}
	head := enc.Bytes()
	head = bytes.TrimRight(head[:bytes.LastIndexByte(head, '}')], "\n")
	var b bytes.Buffer
	b.Grow(len(head) + 2*len(t.DecodeRoles) + 32)
	b.Write(head)
	b.WriteString(",\n  \"decode_roles\": [")
	buf := make([]byte, 0, 4)
	for i, r := range t.DecodeRoles {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(strconv.AppendInt(buf[:0], int64(r), 10))
	}
	b.WriteString("]\n}\n")
	return b.Bytes(), nil
}

// ReadTruth reads a `<run>_truth.json`.
func ReadTruth(path string) (*Truth, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading truth: %w", err)
	}
	var t Truth
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var roles struct {
		DecodeRoles []int `json:"decode_roles"`
	}
	if err := json.Unmarshal(data, &roles); err != nil {
		return nil, fmt.Errorf("%s: decode_roles: %w", path, err)
	}
	t.DecodeRoles = roles.DecodeRoles
	return &t, nil
}
