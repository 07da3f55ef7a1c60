package baseline

import (
	"fmt"
	"strings"

	"github.com/lablup/perfbot/runner/benchcsv"
)

// Env is what two rows must share to be compared: the runtime and machine (backend,
// host tag, harness, hardware column) and the environment of the run (HIP, overlay,
// build type, the baseline's runtime version, the shape). The mlxcel commit is not part
// of it: that is what a comparison measures.
type Env struct {
	Backend  string `json:"backend"`
	Host     string `json:"host"`
	VLM      bool   `json:"vlm,omitempty"`
	Hardware string `json:"hardware"`
	HIP      string `json:"hip_version,omitempty"`
	Overlay  string `json:"overlay,omitempty"`
	Build    string `json:"build_type,omitempty"`
	// Runtime is the mlx-lm baseline's version (baseline_version); for mlxcel's rows
	// the mlxcel version is code under test and stays out.
	Runtime string `json:"runtime,omitempty"`
	Shape   string `json:"shape"`
}

// EnvOf is the environment of a row of the named file.
func EnvOf(n benchcsv.Name, r benchcsv.Row) Env {
	e := Env{Backend: n.Backend, Host: n.Host, VLM: n.VLM, Hardware: r.Hardware, HIP: r.HIPVersion,
		Overlay: r.OverlayCommit, Build: r.BuildType, Shape: shapeOf(r)}
	if n.Backend == benchcsv.Baseline {
		e.Runtime = r.Version
	}
	return e
}

// shapeOf is the workload of a row: the prompt target (the measured prompt length when
// the file has no target column: the baseline's tokenizer may read 513 for 512), the
// generated tokens and the prompt.
func shapeOf(r benchcsv.Row) string {
	prompt := r.PromptTargetLen
	if prompt == "" {
		prompt = "~" + roundPrompt(r.PromptTokens)
	}
	return fmt.Sprintf("pp%s/tg%s %q", prompt, r.MaxTokens, r.Prompt)
}

// roundPrompt puts a measured prompt length in a bucket of 10% so a tokenizer's
// round trip (512 vs 513) does not split one shape in two.
func roundPrompt(n int) string {
	if n <= 0 {
		return "?"
	}
	step := max(1, n/10)
	return fmt.Sprint((n + step/2) / step * step)
}

// Diff lists how other differs from e, one "field a vs b" each.
func (e Env) Diff(other Env) []string {
	var out []string
	add := func(field, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s %s vs %s", field, orNone(a), orNone(b)))
		}
	}
	add("backend", e.Backend, other.Backend)
	add("host", e.Host, other.Host)
	add("harness", harness(e.VLM), harness(other.VLM))
	add("hardware", e.Hardware, other.Hardware)
	add("hip_version", e.HIP, other.HIP)
	add("mlx_rocm_overlay_commit", e.Overlay, other.Overlay)
	add("build_type", e.Build, other.Build)
	add("runtime", e.Runtime, other.Runtime)
	add("shape", e.Shape, other.Shape)
	return out
}

func harness(vlm bool) string {
	if vlm {
		return "vlm"
	}
	return "text"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// String is a one-line description.
func (e Env) String() string {
	parts := []string{e.Backend + "_" + e.Host, e.Hardware}
	if e.HIP != "" {
		parts = append(parts, "HIP "+e.HIP)
	}
	if e.Overlay != "" {
		parts = append(parts, "overlay "+e.Overlay)
	}
	if e.Runtime != "" {
		parts = append(parts, e.Runtime)
	}
	parts = append(parts, e.Build, e.Shape)
	return strings.Join(parts, ", ")
}
