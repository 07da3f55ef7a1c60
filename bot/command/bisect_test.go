package command

import (
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/config"
)

// The bisect form: both ends by SHA (lower-cased, 7 to 40 digits), one model, by
// default the first of default_models.
func TestParseBisect(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t) // default_models: [llama]
	full := "9fceb02d0ae598e95dc970b74767f19372d61af8"
	cases := []struct {
		line             string
		good, bad, model string
		given            bool
	}{
		{"/bench rocm bisect good=9fceb02 bad=e83c516", "9fceb02", "e83c516", "llama", false},
		{"/bench rocm bisect bad=E83C516 good=9FCEB02", "9fceb02", "e83c516", "llama", false},
		{"/bench rocm bisect good=" + full + " bad=e83c5163316f89bfbde7d9ab23ca2e25604af290 models=qwen3", full, "e83c5163316f89bfbde7d9ab23ca2e25604af290", "qwen3", true},
		{"/bench  rocm   bisect models=gemma-3_1b good=9fceb02 bad=e83c516", "9fceb02", "e83c516", "gemma-3_1b", true},
	}
	for _, c := range cases {
		got, found, err := Parse(c.line, cfg)
		if !found || err != nil {
			t.Errorf("%q: found %v, error %v", c.line, found, err)
			continue
		}
		if got.Kind != Bisect || got.Backend != "rocm" || got.Compare || got.Good != c.good || got.Bad != c.bad ||
			!slices.Equal(got.Models, []string{c.model}) || got.ModelsGiven != c.given || got.Repeats != 0 || got.Ref != "" || got.Base != "" || got.Sampling != nil {
			t.Errorf("%q: %+v; want good %s bad %s model %s (given %v)", c.line, got, c.good, c.bad, c.model, c.given)
		}
	}
	// Without default_models, the first configured model.
	cfg.DefaultModels = nil
	if got, _, err := Parse("/bench rocm bisect good=9fceb02 bad=e83c516", cfg); err != nil || !slices.Equal(got.Models, []string{"llama"}) {
		t.Errorf("no default_models: models %v, %v", got.Models, err)
	}
	cfg.DefaultModels = []string{"qwen3", "llama"}
	if got, _, err := Parse("/bench rocm bisect good=9fceb02 bad=e83c516", cfg); err != nil || !slices.Equal(got.Models, []string{"qwen3"}) {
		t.Errorf("default_models [qwen3 llama]: models %v, %v", got.Models, err)
	}
	// The plain and compare forms are untouched.
	if got, _, err := Parse("/bench rocm", cfg); err != nil || got.Kind != Bench || got.Good != "" || got.Models != nil {
		t.Errorf("/bench rocm: %+v, %v", got, err)
	}
}

// Every bad bisect form is refused, saying what is wrong and what is valid.
func TestParseBisectErrors(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t)
	usage := "/bench rocm bisect good=SHA bad=SHA [models=NAME]"
	// Every refusal of the bisect form (/bench rocm bisect ...) gives its usage.
	checkRefusals(t, cfg, []refusal{
		{"/bench rocm bisect", "/bench rocm bisect needs good=SHA and bad=SHA", []string{"good=SHA", "bad=SHA", "models=NAME"}, usage},
		{"/bench rocm bisect good=9fceb02", "/bench rocm bisect needs bad=SHA", nil, usage},
		{"/bench rocm bisect bad=9fceb02 models=llama", "/bench rocm bisect needs good=SHA", nil, usage},
		{"/bench rocm bisect good=9fceb02 bad=9FCEB02", "good= and bad= name the same commit, 9fceb02: a bisection needs a range", nil, usage},
		{"/bench rocm bisect good=main bad=9fceb02", `good="main" is not a commit SHA; a bisection names its commits by SHA (7 to 40 hex digits), not by branch`, []string{"a SHA of 7 to 40 hex digits"}, usage},
		{"/bench rocm bisect good=9fceb02 bad=HEAD~1", `bad="HEAD~1" is not a commit SHA`, nil, usage},
		{"/bench rocm bisect good=9fceb0 bad=e83c516", "good=9fceb0 is too short for a SHA; give at least 7 hex digits", []string{"a SHA of 7 to 40 hex digits"}, usage},
		{"/bench rocm bisect good=9fceb02 bad=" + strings.Repeat("a", 41), "bad= has 41 hex digits; a SHA has at most 40", nil, usage},
		{"/bench rocm bisect good= bad=e83c516", "good= is empty; give a commit SHA, like good=9fceb02", nil, usage},
		{"/bench rocm bisect good=9fceb02 bad=e83c516 models=llama,qwen3", "models= names 2 models; a bisection measures one model: post one command per model",
			[]string{"llama", "qwen3", "gemma-3_1b"}, usage},
		{"/bench rocm bisect good=9fceb02 bad=e83c516 models=nope", `unknown model "nope"`, nil, usage},
		{"/bench rocm bisect good=9fceb02 bad=e83c516 models=llama,", "models=llama, has an empty item", nil, usage},
		{"/bench rocm bisect good=9fceb02 good=9fceb03 bad=e83c516", "good=SHA is given twice; give it once", nil, usage},
		{"/bench rocm bisect good=9fceb02 bad=e83c516 ref=main", `unknown argument "ref=" for /bench rocm bisect`, []string{"good=SHA", "bad=SHA", "models=NAME"}, usage},
		{"/bench rocm bisect good=9fceb02 bad=e83c516 repeats=5", `unknown argument "repeats=" for /bench rocm bisect`, nil, usage},
		{"/bench rocm ref=main bisect", `unknown argument "bisect" for /bench rocm (a bisection starts /bench rocm bisect, before any argument)`, nil, ""},
		{"/profile rocm bisect", `unknown argument "bisect" for /profile rocm`, nil, ""},
	})
	// /profile rocm bisect is not a form: the hint is only for /bench rocm.
	if _, _, err := Parse("/profile rocm bisect", cfg); err == nil || strings.Contains(err.Error(), "a bisection starts") {
		t.Errorf("/profile rocm bisect: %v", err)
	}
}

// The help shows the bisect row with its required arguments unbracketed, the
// configured range limit and default model, and an example that parses.
func TestHelpShowsTheBisectForm(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t)
	cfg.Limits.MaxBisectCommits = 33
	helpHas(t, HelpText(cfg),
		"- `/bench rocm bisect good=SHA bad=SHA [models=NAME]`: find the first bad commit of the range good..bad of the default branch for one model",
		"Example: `/bench rocm bisect good=9fceb02 bad=e83c516 models=llama`",
		"  - `bad=SHA`: the first known bad commit: a SHA of 7 to 40 hex digits on the default branch; the range good..bad holds at most 33 commits",
		"  - `models=NAME`: the one model to measure, from `llama`, `qwen3`, `gemma-3_1b`; default `llama` (the first of default_models)",
	)
	// The default range limit when the config leaves it out.
	if got := HelpText(config.Config{}); !strings.Contains(got, "at most 64 commits") {
		t.Errorf("help of an empty config does not give the default limit:\n%s", got)
	}
}
