package results

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/internal/safetext"
)

// Summary is `<run>_summary.json`. The key names, units and rounding are those of the
// repo's own analyzer (fixtures); keys added by perfbot come after them and are
// omitted when empty, so the repo's tools still read every file perfbot writes.
type Summary struct {
	Name                      string      `json:"name"`
	ModelType                 string      `json:"model_type"`
	Temperature               Num         `json:"temperature"`
	Clock                     string      `json:"clock"`
	PromptTokens              int         `json:"prompt_tokens"`
	GeneratedTokens           int         `json:"generated_tokens"`
	ProfiledDecodeTokS        Num         `json:"profiled_decode_tok_s"`
	ProfiledPrefillTokS       Num         `json:"profiled_prefill_tok_s"`
	PlainDecodeTokS           *Num        `json:"plain_decode_tok_s,omitempty"`
	PlainPrefillTokS          *Num        `json:"plain_prefill_tok_s,omitempty"`
	ProfilerDecodeSlowdownPct *Num        `json:"profiler_decode_slowdown_pct,omitempty"`
	DecodeDispatches          int         `json:"decode_dispatches"`
	DispatchesPerToken        Num         `json:"dispatches_per_token"`
	DecodeWallMs              Num         `json:"decode_wall_ms"`
	DecodeGPUSumMs            Num         `json:"decode_gpu_sum_ms"`
	DecodeGPUBusyMs           Num         `json:"decode_gpu_busy_ms"`
	GPUMsPerToken             Num         `json:"gpu_ms_per_token"`
	HostGapMsPerToken         Num         `json:"host_gap_ms_per_token"`
	HostGapPctOfWall          Num         `json:"host_gap_pct_of_wall"`
	PlainWallMsPerToken       *Num        `json:"plain_wall_ms_per_token,omitempty"`
	PlainHostGapMsPerTokenEst *Num        `json:"plain_host_gap_ms_per_token_est,omitempty"`
	Checks                    Checks      `json:"checks"`
	TopKernels                []TopKernel `json:"top_kernels"`
	ClassSharePct             Ordered     `json:"class_share_pct"`
	RoleSharePct              Ordered     `json:"role_share_pct"`
	RoleDispatchesPerToken    Ordered     `json:"role_dispatches_per_token"`
	PortUnits                 Units       `json:"port_units"`

	// perfbot's additions (absent from the repo analyzer's files).
	TopP                  *Num       `json:"top_p,omitempty"`
	Sampling              string     `json:"sampling,omitempty"`
	RopeScaling           string     `json:"rope_scaling,omitempty"`
	HostGapTailMs         *Num       `json:"host_gap_tail_ms,omitempty"`
	RoleHostGapMsPerToken Ordered    `json:"role_host_gap_ms_per_token,omitempty"`
	RoleGPUMsPerToken     Ordered    `json:"role_gpu_ms_per_token,omitempty"`
	Notes                 []string   `json:"notes,omitempty"`
	Trace                 *TraceInfo `json:"trace,omitempty"`
	// The model's layer count and the bytes of weights a decode step reads (with how
	// they were counted), for the roofline view; the decode window split into steps,
	// for its sanity checks. Absent when the analysis could not tell.
	NumHiddenLayers     int          `json:"num_hidden_layers,omitempty"`
	WeightBytesPerToken *Num         `json:"weight_bytes_per_token,omitempty"`
	WeightBytesBasis    string       `json:"weight_bytes_basis,omitempty"`
	DecodeSteps         *DecodeSteps `json:"decode_steps,omitempty"`
}

// DecodeSteps is the decode window split into steps at a kernel that runs once per
// step (perfbot's addition): a window that cuts a step in two shows in the edges.
type DecodeSteps struct {
	// Marker is the kernel the window was split at; Steps how many times it ran.
	Marker string `json:"marker"`
	Steps  int    `json:"steps"`
	// Min, Median and Max are the dispatches of the whole steps between two markers.
	Min    int `json:"min_dispatches"`
	Median Num `json:"median_dispatches"`
	Max    int `json:"max_dispatches"`
	// Edges are the dispatches before the first marker and from the last one on: one
	// whole step when the window starts and ends on step boundaries.
	Edges int `json:"edge_dispatches"`
}

// StepCount is the step count of a decode window of tokens generated tokens whose
// kernels ran counts times (one count a kernel): a kernel that runs once per step runs
// as many times as the window holds steps, taken from tokens-2 to tokens (the first
// token can come out of the prefill) and at least 2. Among the counts in that range,
// the one most kernels share is the step count (the larger on a tie); kernels is how
// many share it. 0 when no count is in the range (docs/analysis.md, "Decode window
// checks").
func StepCount(counts []int64, tokens int64) (steps int64, kernels int) {
	byCount := map[int64]int{}
	for _, c := range counts {
		if c >= tokens-2 && c <= tokens && c >= 2 {
			byCount[c]++
		}
	}
	for c, n := range byCount {
		if n > kernels || n == kernels && c > steps {
			steps, kernels = c, n
		}
	}
	return steps, kernels
}

// Checks are the clean-cut checks of docs/analysis.md §2.
type Checks struct {
	KernelsStraddlingDecodeStart       int    `json:"kernels_straddling_decode_start"`
	IdleGapBeforeFirstDecodeDispatchUs Num    `json:"idle_gap_before_first_decode_dispatch_us"`
	LastDispatchBeforeDecode           string `json:"last_dispatch_before_decode"`
}

// SamplingTag is the run's sampling tag: perfbot's own key, else the tag its run name
// ends with (SplitRunName; the target repo's analyzer records no top-p, so
// `..._t0.7-p0.95` would otherwise read as t0.7), else derived from the temperature
// (and top_p) that every summary carries. A tag from the name is written the way
// Sampling.Tag writes it.
func (s *Summary) SamplingTag() string {
	if s.Sampling != "" {
		return s.Sampling
	}
	if _, _, sm, ok := SplitRunName(s.Name); ok {
		return sm.Tag()
	}
	sm := Sampling{Temperature: float64(s.Temperature), TopP: 1}
	if s.TopP != nil {
		sm.TopP = float64(*s.TopP)
	}
	return sm.Tag()
}

// ModelName is the model dir's base name its run name starts with (SplitRunName); the
// whole name when it ends with no run tag.
func (s *Summary) ModelName() string {
	if m, _, _, ok := SplitRunName(s.Name); ok {
		return m
	}
	return s.Name
}

// TopKernel is one entry of top_kernels.
type TopKernel struct {
	Kernel        string `json:"kernel"`
	Class         string `json:"class"`
	CallsPerToken Num    `json:"calls_per_token"`
	SharePct      Num    `json:"share_pct"`
}

// Unit is one port unit's figures in a run.
type Unit struct {
	Port                             string `json:"port"`
	FallbackSharePct                 Num    `json:"fallback_share_pct"`
	FallbackDispatchesPerToken       Num    `json:"fallback_dispatches_per_token"`
	ReachedDefaultSharePct           Num    `json:"reached_default_share_pct"`
	ReachedDefaultDispatchesPerToken Num    `json:"reached_default_dispatches_per_token"`
	ReachedOptinSharePct             Num    `json:"reached_optin_share_pct"`
	Note                             string `json:"note"`
	ReachedOptinDispatchesPerToken   *Num   `json:"reached_optin_dispatches_per_token,omitempty"`
	RecoverableDefaultMsPerToken     *Num   `json:"recoverable_default_ms_per_token,omitempty"`
	RecoverableOptinMsPerToken       *Num   `json:"recoverable_optin_ms_per_token,omitempty"`
	ReachedDefaultHostGapMsPerToken  *Num   `json:"reached_default_host_gap_ms_per_token,omitempty"`
	// The role sets behind the figures, so a reader can tell whether its own rules
	// reach the same roles (and then reuse the figures rather than re-derive them from
	// rounded role shares).
	Roles               []string `json:"roles,omitempty"`
	ReachedDefaultRoles []string `json:"reached_default_roles,omitempty"`
	ReachedOptinRoles   []string `json:"reached_optin_roles,omitempty"`
}

// TraceInfo says what the analysis read (perfbot's addition).
type TraceInfo struct {
	Layout   string `json:"layout"`
	Rows     int    `json:"rows"`
	HasGrid  bool   `json:"has_grid"`
	GPUAgent string `json:"gpu_agent,omitempty"`
}

// KV is one entry of an ordered JSON object.
type KV struct {
	Key   string
	Value Num
}

// Ordered is a JSON object of numbers whose key order is kept (the repo's files order
// shares by value, which a Go map would lose).
type Ordered []KV

// Get returns the value of key and whether it is present.
func (o Ordered) Get(key string) (float64, bool) {
	for _, kv := range o {
		if kv.Key == key {
			return float64(kv.Value), true
		}
	}
	return 0, false
}

// MarshalJSON implements json.Marshaler.
func (o Ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(kv.Key))
		b.WriteByte(':')
		v, _ := kv.Value.MarshalJSON()
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON implements json.Unmarshaler, keeping the order of the keys.
func (o *Ordered) UnmarshalJSON(data []byte) error {
	*o = nil
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("want a JSON object of numbers")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var v float64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("key %s: %w", safetext.Quote(key), err)
		}
		*o = append(*o, KV{Key: key, Value: Num(v)})
	}
	_, err := dec.Token()
	return err
}

// UnmarshalJSON implements json.Unmarshaler for Num.
func (n *Num) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var f float64
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Units is the port_units object, keyed by unit id in the order given.
type Units []UnitKV

// UnitKV is one entry of Units.
type UnitKV struct {
	ID   string
	Unit Unit
}

// Get returns the unit with the id.
func (u Units) Get(id string) (Unit, bool) {
	for _, kv := range u {
		if kv.ID == id {
			return kv.Unit, true
		}
	}
	return Unit{}, false
}

// MarshalJSON implements json.Marshaler.
func (u Units) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range u {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(kv.ID))
		b.WriteByte(':')
		var v bytes.Buffer
		enc := json.NewEncoder(&v)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(kv.Unit); err != nil {
			return nil, err
		}
		b.Write(bytes.TrimRight(v.Bytes(), "\n"))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON implements json.Unmarshaler, keeping the order of the ids.
func (u *Units) UnmarshalJSON(data []byte) error {
	*u = nil
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("port_units: want a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		id, _ := t.(string)
		var unit Unit
		if err := dec.Decode(&unit); err != nil {
			return fmt.Errorf("port unit %s: %w", safetext.Quote(id), err)
		}
		*u = append(*u, UnitKV{ID: id, Unit: unit})
	}
	_, err := dec.Token()
	return err
}

// MarshalIndent renders the summary as the repo's analyzer does: two-space indent,
// a trailing newline.
func (s *Summary) MarshalIndent() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // kernel names keep their <> as the repo's files do
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteSummary writes the summary to path atomically (a temp file renamed over it).
func WriteSummary(path string, s *Summary) error {
	data, err := s.MarshalIndent()
	if err != nil {
		return fmt.Errorf("encoding summary: %w", err)
	}
	return WriteFileAtomic(path, data)
}

// maxSummaryBytes bounds a summary file: a real one is a few kilobytes.
const maxSummaryBytes = 4 << 20

// ReadSummary reads a `<run>_summary.json`, perfbot's or the repo analyzer's, and
// validates it (Validate); errors name the file.
func ReadSummary(path string) (*Summary, error) {
	data, err := infile.ReadFile(path, maxSummaryBytes)
	if err != nil {
		return nil, err
	}
	s, err := ParseSummary(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSummary decodes and validates the text of a summary.
func ParseSummary(data []byte) (*Summary, error) {
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("not a summary perfbot can use: %w", err)
	}
	return &s, nil
}

func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}
