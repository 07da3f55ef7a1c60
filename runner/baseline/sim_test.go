package baseline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/testfix"
	"github.com/lablup/perfbot/runner/benchcsv"
)

// RealSpreadPct is the run-to-run spread the generated histories use: a normal noise
// of 1.2% (one standard deviation) of a model's decode tok/s. On the gfx1151 host the
// same model (Llama-3.1-8B) has read from 35.4 to 37.1 tok/s between runs, a range of
// 4.7% of its midpoint; the expected range of 30 normal draws is about 4.1 standard
// deviations, so 1.2% reproduces that range over a month of nights (docs/nightly.md).
const RealSpreadPct = 1.2

// simModel is a model of the real CSVs at its measured level.
type simModel struct {
	name    string
	decode  float64
	prefill float64
}

// realModels reads every model of the real ROCm CSVs at the median of its rows; where
// a model appears in several files, the newest default-configuration reading wins.
func realModels(t testing.TB) []simModel {
	t.Helper()
	var out []simModel
	seen := map[string]int{}
	for _, name := range []string{"rocm_strixhalo-gfx1151_2026-09-30.csv", "rocm_strixhalo-gfx1151_2026-10-04_ssm-kernel-on.csv",
		"rocm_strixhalo-gfx1151_2026-10-07_fused-default-on.csv"} {
		f, err := benchcsv.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "benchmarks", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range f.Models() {
			p, ok := PointOf(f, m)
			if !ok {
				t.Fatalf("%s: no reading of %s", name, m)
			}
			sm := simModel{name: m, decode: p.Value(), prefill: p.Prefill}
			if i, dup := seen[m]; dup {
				out[i] = sm
				continue
			}
			seen[m] = len(out)
			out = append(out, sm)
		}
	}
	return out
}

// simEnv is the environment of every generated row: the real host's.
type simEnv struct {
	hip, overlay string
}

var realEnv = simEnv{hip: "7.15.26333", overlay: "75915908"}

// nightFile makes one night's harness file in the real format (written with
// benchcsv.Format and read back with benchcsv.Parse): each model once, at its level
// times factor, with normal noise of sigmaPct.
func nightFile(t testing.TB, rng *rand.Rand, date string, models []simModel, factor map[string]float64, sigmaPct float64, env simEnv, suffix string) *benchcsv.File {
	t.Helper()
	var rows []benchcsv.Row
	for _, m := range models {
		rows = append(rows, simRow(rng, date, m, factor[m.name], sigmaPct, env))
	}
	name := benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: date, Suffix: suffix}
	return parsed(t, name, benchcsv.ROCmHeader, rows)
}

func simRow(rng *rand.Rand, date string, m simModel, factor, sigmaPct float64, env simEnv) benchcsv.Row {
	if factor == 0 {
		factor = 1
	}
	d := round2(m.decode * factor * (1 + sigmaPct/100*rng.NormFloat64()))
	p := round2(m.prefill * (1 + 3*sigmaPct/100*rng.NormFloat64()))
	return benchcsv.Row{
		Model: m.name, ModelPath: "models/mlx/" + m.name + "/", PromptTokens: 512, GeneratedTokens: 128,
		PrefillMs: round2(512 / p * 1000), PrefillTokS: p, DecodeMs: round2(128 / d * 1000), DecodeTokS: d,
		HasPrefill: true, HasDecode: true, Date: date, Hardware: "AMD_Radeon_8060S_Graphics_gfx1151_ROCm10.0.0_96GB",
		Version: "0.7.0", BuildType: "release", MaxTokens: "128", Prompt: "Hello, how are you today?", PromptTargetLen: "512",
		MlxcelCommit: "2fcdbe5f", MlxCommit: "81ba1c6a", OverlayCommit: env.overlay, HIPVersion: env.hip,
	}
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func parsed(t testing.TB, n benchcsv.Name, header []string, rows []benchcsv.Row) *benchcsv.File {
	t.Helper()
	f, err := benchcsv.Parse(benchcsv.Format(header, rows), n.String())
	if err != nil {
		t.Fatal(err)
	}
	f.Name = n
	return f
}

func dateOf(night int) string {
	return time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, night).Format(time.DateOnly)
}

// simResult counts what the nightly comparison said over generated histories.
type simResult struct {
	evaluations int // model-nights with a band
	suspects    int // below the band before the re-measure
	regressions int // confirmed regressions
	improves    int
	planted     int // planted drops
	caught      int // planted drops confirmed on their night
	falseAlarms int // confirmed regressions or improvements where none was planted
}

// simulate runs `histories` generated histories of `nights` nights each through the
// nightly comparison, re-measuring suspects with a fresh reading of the same night.
// With drop > 0 every model's level falls by that fraction from a night picked at
// random (after the minimum history) on.
func simulate(t testing.TB, histories, nights int, sigmaPct, drop float64, rules Rules) simResult {
	t.Helper()
	models := realModels(t)
	var res simResult
	for hi := 0; hi < histories; hi++ {
		rng := rand.New(rand.NewPCG(uint64(hi+1), simSeed))
		dropAt := map[string]int{}
		if drop > 0 {
			for _, m := range models {
				dropAt[m.name] = rules.MinHistory + 1 + rng.IntN(nights-rules.MinHistory-1)
				res.planted++
			}
		}
		var files []*benchcsv.File
		for night := 0; night < nights; night++ {
			factor := map[string]float64{}
			for _, m := range models {
				if at, ok := dropAt[m.name]; ok && night >= at {
					factor[m.name] = 1 - drop
				}
			}
			f := nightFile(t, rng, dateOf(night), models, factor, sigmaPct, realEnv, "")
			rep := CompareNightly(New(files...), f, rules)
			for _, s := range rep.Suspects() {
				m := modelByName(models, s)
				again := parsed(t, benchcsv.Name{Backend: "rocm", Host: "strixhalo-gfx1151", Date: f.Name.Date, Single: s}, benchcsv.ROCmHeader,
					[]benchcsv.Row{simRow(rng, f.Name.Date, m, factor[s], sigmaPct, realEnv)})
				p, _ := PointOf(again, s)
				if err := rep.Remeasured(s, p); err != nil {
					t.Fatal(err)
				}
				res.suspects++
			}
			for _, m := range rep.Models {
				if m.Band != nil {
					res.evaluations++
				}
				at, planted := dropAt[m.Model]
				switch m.Verdict {
				case Regression:
					res.regressions++
					if planted && night == at {
						res.caught++

					} else if !planted || night < at {
						res.falseAlarms++
					}
				case Improvement:
					res.improves++
					res.falseAlarms++
				}
			}
			files = append(files, f)
		}
	}
	return res
}

// simSeed is the second half of every history's fixed seed.
const simSeed = 0x5eed

func modelByName(ms []simModel, name string) simModel {
	for _, m := range ms {
		if m.name == name {
			return m
		}
	}
	panic("no model " + name)
}

// Twenty noise-only histories of thirty nights at the real spread raise no alarm for
// any model; a planted 10% decode drop is confirmed on its night in every history, for
// every model.
func TestNightlyNoiseAndPlantedDrops(t *testing.T) {
	t.Parallel()
	rules := DefaultRules()
	models := len(realModels(t))
	if models != 8 {
		t.Fatalf("%d models in the real CSVs, want 8", models)
	}
	noise := simulate(t, 20, 30, RealSpreadPct, 0, rules)
	t.Logf("noise only, spread %.1f%%: %d model-nights with a band, %d suspects re-measured, %d false alarms",
		RealSpreadPct, noise.evaluations, noise.suspects, noise.falseAlarms)
	if noise.falseAlarms != 0 || noise.regressions != 0 || noise.improves != 0 {
		t.Errorf("noise-only histories: %+v, want no alarm", noise)
	}
	if want := 20 * models * (30 - rules.MinHistory); noise.evaluations != want {
		t.Errorf("%d model-nights compared with a band, want %d", noise.evaluations, want)
	}
	drops := simulate(t, 20, 30, RealSpreadPct, 0.10, rules)
	t.Logf("10%% drop planted per model: %d of %d caught on their night, %d false alarms before a drop",
		drops.caught, drops.planted, drops.falseAlarms)
	if drops.planted != 20*models || drops.caught != drops.planted || drops.falseAlarms != 0 {
		t.Errorf("planted drops: %+v, want every one caught and no false alarm", drops)
	}
}

// Figures for docs/nightly.md: false alarms and caught drops at other spreads, as
// metrics (go test -run '^$' -bench NoiseModel ./runner/baseline).
func BenchmarkNoiseModel(b *testing.B) {
	for _, spread := range []float64{0.6, 1.2, 1.6, 2.0} {
		b.Run(fmt.Sprintf("spread=%.1f%%", spread), func(b *testing.B) {
			var noise, drops simResult
			for range b.N {
				noise = simulate(b, 20, 30, spread, 0, DefaultRules())
				drops = simulate(b, 20, 30, spread, 0.10, DefaultRules())
			}
			b.ReportMetric(float64(noise.falseAlarms), "false-alarms")
			b.ReportMetric(float64(noise.suspects), "remeasures")
			b.ReportMetric(100*float64(drops.caught)/float64(drops.planted), "caught-%")
		})
	}
}
