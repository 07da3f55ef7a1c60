package results

import "testing"

// A run name splits at its last '_' when what follows is a run tag: model dirs hold '_',
// '-' and '.', and every tag form (greedy, t<T>, t<T>-p<P>) comes back whole. The
// target repo's analyzer records no top-p, so the name is where a summary's sampling
// comes from.
func TestSplitRunName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, model, tag string
		s                Sampling
	}{
		{"Meta-Llama-3.1-8B-Instruct-4bit_greedy", "Meta-Llama-3.1-8B-Instruct-4bit", "greedy", Greedy},
		{"Qwen3-30B-A3B-4bit_t0.7", "Qwen3-30B-A3B-4bit", "t0.7", Sampling{0.7, 1}},
		{"Qwen3-30B-A3B-4bit_t0.7-p0.95", "Qwen3-30B-A3B-4bit", "t0.7-p0.95", Sampling{0.7, 0.95}},
		{"my_model_v2_t1-p0.5", "my_model_v2", "t1-p0.5", Sampling{1, 0.5}},
		{"a_t0.70-p1", "a", "t0.70-p1", Sampling{0.7, 1}},
		{"x_greedy_t2", "x_greedy", "t2", Sampling{2, 1}},
	} {
		model, tag, s, ok := SplitRunName(c.name)
		if !ok || model != c.model || tag != c.tag || s != c.s {
			t.Errorf("SplitRunName(%q) = %q, %q, %+v, %v; want %q, %q, %+v", c.name, model, tag, s, ok, c.model, c.tag, c.s)
		}
		sum := &Summary{Name: c.name, Temperature: Num(c.s.Temperature)} // as the repo's analyzer writes it
		if got := sum.SamplingTag(); got != c.s.Tag() {
			t.Errorf("%s: SamplingTag %q, want %q", c.name, got, c.s.Tag())
		}
		if got := sum.ModelName(); got != c.model {
			t.Errorf("%s: ModelName %q, want %q", c.name, got, c.model)
		}
	}
	for _, name := range []string{"", "greedy", "_greedy", "model", "model_", "model_t0.7-p1.5", "model_p0.95", "model_t0.7_x", "model_t0-p0.5", "model_T0.7"} {
		if m, tag, s, ok := SplitRunName(name); ok || m != "" || tag != "" || s != (Sampling{}) {
			t.Errorf("SplitRunName(%q) = %q, %q, %+v, %v; want no split", name, m, tag, s, ok)
		}
	}
	// Without a tag in the name: perfbot's key, else the temperature and top_p.
	p := Num(0.9)
	for _, c := range []struct {
		s    Summary
		want string
	}{
		{Summary{Name: "run", Sampling: "t0.5"}, "t0.5"},
		{Summary{Name: "run_t0.7", Sampling: "t0.7-p0.9"}, "t0.7-p0.9"},
		{Summary{Name: "run", Temperature: 0.7, TopP: &p}, "t0.7-p0.9"},
		{Summary{Name: "run"}, "greedy"},
	} {
		if got := c.s.SamplingTag(); got != c.want {
			t.Errorf("%+v: SamplingTag %q, want %q", c.s, got, c.want)
		}
		if c.s.Sampling == "" && c.s.ModelName() != "run" {
			t.Errorf("%s: ModelName %q, want the whole name", c.s.Name, c.s.ModelName())
		}
	}
}
