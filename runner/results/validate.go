package results

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/lablup/perfbot/internal/safetext"
)

// maxFigure bounds every number of a summary: a billion milliseconds is eleven days of
// decode, a billion dispatches per token is no GPU. Beyond it sums and ratios of the
// ranking could overflow to +Inf (1e308 is a valid JSON number).
const maxFigure = 1e9

// Validate says what in the summary no analysis can produce: a bad run name, a
// temperature or top-p out of range, a negative time, count or rate, a share outside
// 0..100, or a figure beyond any real run. Errors name the key
// (`role_share_pct.moe_expert_gemv: -3 is negative`); at most a few are listed.
func (s *Summary) Validate() error {
	v := &checker{}
	if err := CheckRunName(s.Name); err != nil {
		v.add("name", "%v", err)
	}
	v.rng("temperature", float64(s.Temperature), 0, MaxTemperature)
	if s.TopP != nil && !(*s.TopP > 0 && *s.TopP <= 1) {
		v.add("top_p", "%v is not in (0, 1]", float64(*s.TopP))
	}
	v.count("prompt_tokens", s.PromptTokens)
	v.count("generated_tokens", s.GeneratedTokens)
	v.count("decode_dispatches", s.DecodeDispatches)
	v.count("checks.kernels_straddling_decode_start", s.Checks.KernelsStraddlingDecodeStart)
	for _, f := range []struct {
		key string
		n   Num
	}{
		{"profiled_decode_tok_s", s.ProfiledDecodeTokS}, {"profiled_prefill_tok_s", s.ProfiledPrefillTokS},
		{"dispatches_per_token", s.DispatchesPerToken}, {"decode_wall_ms", s.DecodeWallMs},
		{"decode_gpu_sum_ms", s.DecodeGPUSumMs}, {"decode_gpu_busy_ms", s.DecodeGPUBusyMs},
		{"gpu_ms_per_token", s.GPUMsPerToken}, {"host_gap_ms_per_token", s.HostGapMsPerToken},
		{"checks.idle_gap_before_first_decode_dispatch_us", s.Checks.IdleGapBeforeFirstDecodeDispatchUs},
	} {
		v.nonNeg(f.key, float64(f.n))
	}
	v.share("host_gap_pct_of_wall", float64(s.HostGapPctOfWall))
	for _, f := range []struct {
		key string
		n   *Num
	}{
		{"plain_decode_tok_s", s.PlainDecodeTokS}, {"plain_prefill_tok_s", s.PlainPrefillTokS},
		{"plain_wall_ms_per_token", s.PlainWallMsPerToken}, {"host_gap_tail_ms", s.HostGapTailMs},
	} {
		if f.n != nil {
			v.nonNeg(f.key, float64(*f.n))
		}
	}
	// These two compare two runs, and run-to-run noise makes them negative.
	for _, f := range []struct {
		key string
		n   *Num
	}{{"profiler_decode_slowdown_pct", s.ProfilerDecodeSlowdownPct}, {"plain_host_gap_ms_per_token_est", s.PlainHostGapMsPerTokenEst}} {
		if f.n != nil {
			v.rng(f.key, float64(*f.n), -maxFigure, maxFigure)
		}
	}
	for i, k := range s.TopKernels {
		key := "top_kernels." + strconv.Itoa(i)
		v.nonNeg(key+".calls_per_token", float64(k.CallsPerToken))
		v.share(key+".share_pct", float64(k.SharePct))
	}
	v.ordered("class_share_pct", s.ClassSharePct, v.share)
	v.ordered("role_share_pct", s.RoleSharePct, v.share)
	v.ordered("role_dispatches_per_token", s.RoleDispatchesPerToken, v.nonNeg)
	v.ordered("role_gpu_ms_per_token", s.RoleGPUMsPerToken, v.nonNeg)
	v.ordered("role_host_gap_ms_per_token", s.RoleHostGapMsPerToken, v.nonNeg)
	for _, u := range s.PortUnits {
		key := "port_units." + u.ID + "."
		for _, f := range []struct {
			key string
			n   Num
		}{{"fallback_share_pct", u.Unit.FallbackSharePct}, {"reached_default_share_pct", u.Unit.ReachedDefaultSharePct}, {"reached_optin_share_pct", u.Unit.ReachedOptinSharePct}} {
			v.share(key+f.key, float64(f.n))
		}
		v.nonNeg(key+"fallback_dispatches_per_token", float64(u.Unit.FallbackDispatchesPerToken))
		v.nonNeg(key+"reached_default_dispatches_per_token", float64(u.Unit.ReachedDefaultDispatchesPerToken))
		for _, f := range []struct {
			key string
			n   *Num
		}{
			{"reached_optin_dispatches_per_token", u.Unit.ReachedOptinDispatchesPerToken},
			{"recoverable_default_ms_per_token", u.Unit.RecoverableDefaultMsPerToken},
			{"recoverable_optin_ms_per_token", u.Unit.RecoverableOptinMsPerToken},
			{"reached_default_host_gap_ms_per_token", u.Unit.ReachedDefaultHostGapMsPerToken},
		} {
			if f.n != nil {
				v.nonNeg(key+f.key, float64(*f.n))
			}
		}
	}
	return v.err()
}

// checker collects the first few broken rules.
type checker struct {
	errs []error
	more int
}

const maxListed = 5

func (v *checker) add(key, format string, a ...any) {
	if len(v.errs) == maxListed {
		v.more++
		return
	}
	v.errs = append(v.errs, fmt.Errorf("%s: %s", safetext.Clean(key), fmt.Sprintf(format, a...)))
}

func (v *checker) rng(key string, x, lo, hi float64) {
	if math.IsNaN(x) || x < lo || x > hi {
		v.add(key, "%v is not in %v..%v", x, lo, hi)
	}
}

func (v *checker) nonNeg(key string, x float64) {
	switch {
	case math.IsNaN(x) || x < 0:
		v.add(key, "%v is negative", x)
	case x > maxFigure:
		v.add(key, "%v is beyond any real run (at most %v)", x, float64(maxFigure))
	}
}

func (v *checker) share(key string, x float64) {
	if math.IsNaN(x) || x < 0 || x > 100 {
		v.add(key, "%v is not a share in 0..100", x)
	}
}

func (v *checker) count(key string, n int) {
	switch {
	case n < 0:
		v.add(key, "%d is negative", n)
	case n > maxFigure:
		v.add(key, "%d is beyond any real run (at most %v)", n, float64(maxFigure))
	}
}

func (v *checker) ordered(key string, o Ordered, check func(string, float64)) {
	for _, kv := range o {
		check(key+"."+kv.Key, float64(kv.Value))
	}
}

func (v *checker) err() error {
	if v.more > 0 {
		v.errs = append(v.errs, fmt.Errorf("and %d more", v.more))
	}
	return errors.Join(v.errs...)
}
