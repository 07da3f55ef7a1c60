package command

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/runner/results"
)

// Every form sampling= accepts, generated from the grammar's own table (samplingValid),
// names runs whose names split back into the model dir and that very tag, and a
// summary written by the target repo's analyzer (a temperature, no top-p, no sampling
// key) reads its sampling from the name: a page's `/profile rocm models=... sampling=...`
// reruns exactly the runs it shows. A new form in the table fails here until it has
// values to try.
func TestEverySamplingFormSplitsFromItsRunName(t *testing.T) {
	t.Parallel()
	values := map[string][]string{"<T>": {"0.7", "1", "0.05", "2", "1.25"}, "<P>": {"0.95", "0.5", "1", "0.001"}}
	expand := func(form string) []string {
		out := []string{form}
		for ph, vs := range values {
			var next []string
			for _, f := range out {
				if !strings.Contains(f, ph) {
					next = append(next, f)
					continue
				}
				for _, v := range vs {
					next = append(next, strings.ReplaceAll(f, ph, v))
				}
			}
			out = next
		}
		return out
	}
	dirs := []string{"Meta-Llama-3.1-8B-Instruct-4bit", "Qwen3-30B-A3B-4bit", "granite_4.0_h-tiny", "x"}
	tags := map[string]bool{}
	for _, form := range samplingValid {
		for _, v := range expand(form) {
			if strings.ContainsAny(v, "<>") {
				t.Fatalf("sampling form %q has a placeholder this test gives no values for (%s)", form, v)
			}
			var cmd Command
			if e := parseSampling(&cmd, v, testCfg(t)); e != nil {
				t.Fatalf("sampling=%s (form %s) is refused: %s", v, form, e.Problem)
			}
			for _, tag := range cmd.Sampling {
				tags[tag] = true
				for _, dir := range dirs {
					name := dir + "_" + tag
					model, got, s, ok := results.SplitRunName(name)
					if !ok || model != dir || got != tag || s.Tag() != tag {
						t.Errorf("%s: split %q %q %q %v; want %q and %q", name, model, got, s.Tag(), ok, dir, tag)
					}
					sum := &results.Summary{Name: name, Temperature: results.Num(s.Temperature)}
					if sum.SamplingTag() != tag || sum.ModelName() != dir {
						t.Errorf("%s: the summary reads model %q sampling %q", name, sum.ModelName(), sum.SamplingTag())
					}
				}
			}
		}
	}
	for _, want := range []string{"greedy", "t0.7", "t0.7-p0.95", "t2-p0.001"} {
		if !tags[want] {
			t.Errorf("no form gave %s (tags %v)", want, tags)
		}
	}
}
