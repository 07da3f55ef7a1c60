package command

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/abrun"
	"github.com/lablup/perfbot/runner/abstat"
)

// The compare forms: their words, base= and ref= in both forms, repeats= at its
// edges and the defaults (the config's models, sampling and limits.max_repeats).
func TestParseCompare(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t) // limits.max_repeats left at its default, 10
	cases := []struct {
		line string
		want Command
	}{
		{"/bench rocm compare", Command{Kind: Bench, Backend: "rocm", Compare: true, Models: []string{"llama"}, Repeats: 10}},
		{"/bench rocm compare base=9FCEB02 repeats=5", Command{Kind: Bench, Backend: "rocm", Compare: true, Models: []string{"llama"},
			Base: "9fceb02", BaseKind: RefSHA, Repeats: 5, RepeatsGiven: true}},
		{"/bench rocm compare base=release/1.0 ref=topic models=qwen3,llama repeats=10", Command{Kind: Bench, Backend: "rocm", Compare: true,
			Models: []string{"qwen3", "llama"}, ModelsGiven: true, Base: "release/1.0", BaseKind: RefBranch, Ref: "topic", RefKind: RefBranch,
			Repeats: 10, RepeatsGiven: true}},
		{"/profile rocm compare", Command{Kind: Profile, Backend: "rocm", Compare: true, Models: []string{"llama"},
			Sampling: []string{"greedy", "t0.7-p0.95"}, Repeats: 10}},
		{"/profile rocm compare sampling=t0.70 base=main ref=9fceb02d0ae598e95dc970b74767f19372d61af8", Command{Kind: Profile, Backend: "rocm", Compare: true,
			Models: []string{"llama"}, Sampling: []string{"t0.7"}, SamplingGiven: true, Base: "main", BaseKind: RefBranch,
			Ref: "9fceb02d0ae598e95dc970b74767f19372d61af8", RefKind: RefSHA, Repeats: 10}},
		// The plain forms are untouched: no compare, no repeats.
		{"/bench rocm ref=main", Command{Kind: Bench, Backend: "rocm", Ref: "main", RefKind: RefBranch}},
		{"/profile rocm", Command{Kind: Profile, Backend: "rocm", Models: []string{"llama"}, Sampling: []string{"greedy", "t0.7-p0.95"}}},
	}
	for _, c := range cases {
		got, found, err := Parse(c.line, cfg)
		if !found || err != nil {
			t.Errorf("%q: found %v, error %v", c.line, found, err)
			continue
		}
		got.Line, got.Text = 0, ""
		if !equalCommand(got, c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.line, got, c.want)
		}
	}
	// A configured cap is the default and the upper bound.
	cfg.Limits.MaxRepeats = 20
	if got, _, err := Parse("/bench rocm compare", cfg); err != nil || got.Repeats != 20 || got.RepeatsGiven {
		t.Errorf("default repeats under max_repeats 20: %d (given %v), %v", got.Repeats, got.RepeatsGiven, err)
	}
	if got, _, err := Parse("/bench rocm compare repeats=20", cfg); err != nil || got.Repeats != 20 {
		t.Errorf("repeats=20 under max_repeats 20: %d, %v", got.Repeats, err)
	}
	// A config that sets no cap (0) has the default's.
	cfg.Limits.MaxRepeats = 0
	if got, _, err := Parse("/bench rocm compare", cfg); err != nil || got.Repeats != config.Default().Limits.MaxRepeats {
		t.Errorf("default repeats without max_repeats: %d, %v; want %d", got.Repeats, err, config.Default().Limits.MaxRepeats)
	}
}

func equalCommand(a, b Command) bool {
	return a.Kind == b.Kind && a.Backend == b.Backend && a.Compare == b.Compare &&
		slices.Equal(a.Models, b.Models) && a.ModelsGiven == b.ModelsGiven &&
		slices.Equal(a.Sampling, b.Sampling) && a.SamplingGiven == b.SamplingGiven &&
		a.Ref == b.Ref && a.RefKind == b.RefKind && a.Base == b.Base && a.BaseKind == b.BaseKind &&
		a.Repeats == b.Repeats && a.RepeatsGiven == b.RepeatsGiven && a.Epic == b.Epic && a.ID == b.ID
}

// Every bad compare form is refused, saying what is wrong and what is valid.
func TestParseCompareErrors(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t)
	checkRefusals(t, cfg, []refusal{
		{"/bench rocm compare repeats=4", "repeats=4 is out of range: a compare runs 5 to 10 repeats per side (each side starts with 5; the most is limits.max_repeats of the config, 10)",
			[]string{"a whole number from 5 to 10"}, "/bench rocm compare [base=SHA|BRANCH] [ref=SHA|BRANCH] [models=NAME,...] [repeats=N]"},
		{"/bench rocm compare repeats=11", "repeats=11 is out of range: a compare runs 5 to 10 repeats per side", nil, ""},
		{"/bench rocm compare repeats=0", "repeats=0 is out of range", nil, ""},
		{"/bench rocm compare repeats=-5", "repeats=-5 is out of range", nil, ""},
		{"/bench rocm compare repeats=07", `repeats="07" is not a whole number; give the most runs per side, 5 to 10, like repeats=10`, nil, ""},
		{"/bench rocm compare repeats=5.5", `repeats="5.5" is not a whole number`, nil, ""},
		{"/bench rocm compare repeats=", `repeats="" is not a whole number`, nil, ""},
		{"/bench rocm compare repeats=99999999999999999999", `is not a whole number`, nil, ""},
		{"/bench rocm compare repeats=5 repeats=6", "repeats=N is given twice; give it once", nil, ""},
		{"/bench rocm compare base=abc", "base=abc is too short for a SHA; give at least 7 hex digits",
			[]string{"a SHA of 7 to 40 hex digits", "a branch of this repository"}, ""},
		{"/bench rocm compare base=a..b", "base=", nil, ""},
		{"/bench rocm compare base=main base=main", "base=SHA|BRANCH is given twice", nil, ""},
		{"/bench rocm compare sampling=greedy", `unknown argument "sampling=" for /bench rocm compare`,
			[]string{"base=SHA|BRANCH", "ref=SHA|BRANCH", "models=NAME,...", "repeats=N"}, ""},
		{"/profile rocm compare repeats=5", `unknown argument "repeats=" for /profile rocm compare`, nil,
			"/profile rocm compare [base=SHA|BRANCH] [ref=SHA|BRANCH] [models=NAME,...] [sampling=TAG,...]"},
		{"/profile rocm compare epic=3", `unknown argument "epic=" for /profile rocm compare`, nil, ""},
		{"/bench rocm base=main", `unknown argument "base=" for /bench rocm`, nil, "/bench rocm [ref=SHA|BRANCH]"},
		{"/bench rocm ref=main compare", `unknown argument "compare" for /bench rocm (the compare form starts /bench rocm compare, before any argument)`, nil, ""},
		{"/bench rocm compare compare", `unknown argument "compare" for /bench rocm compare`, nil, ""},
		{"/bench cuda compare", `unknown backend "cuda" after /bench`, []string{"rocm"}, ""},
		{"/bench rocm compare models=nope", `unknown model "nope"`, nil, ""},
	})
}

// refusal is a command line Parse must refuse: the problem it names (a part of it),
// the valid values it lists (nil: not checked) and its one usage line ("": not
// checked).
type refusal struct {
	line, problem string
	valid         []string
	usage         string
}

// checkRefusals checks that Parse refuses each line with an *Error saying the case's
// problem, valid values and usage.
func checkRefusals(t *testing.T, cfg config.Config, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		_, found, err := Parse(c.line, cfg)
		var ce *Error
		if !found || !errors.As(err, &ce) {
			t.Errorf("%q: found %v, error %v; want a refusal", c.line, found, err)
			continue
		}
		if !strings.Contains(ce.Problem, c.problem) {
			t.Errorf("%q: problem %q, want %q", c.line, ce.Problem, c.problem)
		}
		if c.valid != nil && !slices.Equal(ce.Valid, c.valid) {
			t.Errorf("%q: valid %q, want %q", c.line, ce.Valid, c.valid)
		}
		if c.usage != "" && !slices.Equal(ce.Usage, []string{c.usage}) {
			t.Errorf("%q: usage %q, want %q", c.line, ce.Usage, c.usage)
		}
	}
}

// helpHas checks that the help text holds every one of wants.
func helpHas(t *testing.T, help string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
}

// The help lists the compare forms from the same rows the parser reads, with the
// configured cap, and its examples parse as the compare forms.
func TestHelpShowsTheCompareForms(t *testing.T) {
	t.Parallel()
	cfg := testCfg(t)
	cfg.Limits.MaxRepeats = 12
	helpHas(t, HelpText(cfg),
		"- `/bench rocm compare [base=SHA|BRANCH] [ref=SHA|BRANCH] [models=NAME,...] [repeats=N]`: measure the throughput of commit A and commit B",
		"Example: `/bench rocm compare base=9fceb02 ref=main models=llama,qwen3 repeats=12`",
		"- `/profile rocm compare [base=SHA|BRANCH] [ref=SHA|BRANCH] [models=NAME,...] [sampling=TAG,...]`: profile the decode of commit A and commit B",
		"  - `repeats=N`: the most runs per side, 5 to 12: each side starts with 5",
		"  - `base=SHA|BRANCH`: A, the commit compared with",
		"default on a pull request the merge base of its head with its target branch; on an issue, name it",
		"  - `ref=SHA|BRANCH`: B, the changed commit",
	)
	for _, s := range Specs() {
		if !s.Compare {
			continue
		}
		cmd, _, err := Parse(Example(s, cfg), cfg)
		if err != nil || !cmd.Compare || cmd.Kind != s.Kind || cmd.Base == "" || cmd.Ref == "" {
			t.Errorf("example %q: %+v, %v", Example(s, cfg), cmd, err)
		}
	}
}

// A compare starts with as many repeats per side as the GPU session does, and the
// config cannot allow a cap the session's plan refuses.
func TestRepeatBoundsAreTheSessions(t *testing.T) {
	t.Parallel()
	if MinRepeats != abrun.DefaultStart {
		t.Errorf("MinRepeats %d, the session starts with %d", MinRepeats, abrun.DefaultStart)
	}
	for _, capRuns := range []int{config.MinRepeats, config.MaxRepeats, config.Default().Limits.MaxRepeats} {
		if _, err := abstat.NewPlan(capRuns, abstat.DefaultOptions()); err != nil {
			t.Errorf("a cap of %d repeats, which the config allows: %v", capRuns, err)
		}
	}
}
