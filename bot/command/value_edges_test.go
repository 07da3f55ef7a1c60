package command_test

import (
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/config"
)

func cfgOf(t *testing.T, yaml string) config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), config.DefaultPath)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const threeModels = `version: 1
models:
  llama: {dir: m/llama, model_type: llama, weights_gib: 1}
  qwen3: {dir: m/qwen3, model_type: qwen3_moe, weights_gib: 1}
  gemma: {dir: m/gemma, model_type: gemma3, weights_gib: 1}
default_models: [llama]
sampling: [greedy]
`

// TestRefForms: a SHA is 7 to 40 hex digits of either case (each edge digit of each
// range included) and is lower-cased; 40 digits are a full SHA, the only form that lets
// a maintainer run a commit outside the repository's branches. Anything else is a
// branch, or refused.
func TestRefForms(t *testing.T) {
	t.Parallel()
	cfg := cfgOf(t, threeModels)
	full := "0123456789abcdefABCDEF0123456789abcdef01"
	for _, c := range []struct {
		ref, want string
		kind      command.RefKind
		full      bool
	}{
		{"0000000", "0000000", command.RefSHA, false},
		{"9999999", "9999999", command.RefSHA, false},
		{"aaaaaaa", "aaaaaaa", command.RefSHA, false},
		{"fffffff", "fffffff", command.RefSHA, false},
		{"AAAAAAA", "aaaaaaa", command.RefSHA, false},
		{"FFFFFFF", "fffffff", command.RefSHA, false},
		{full, strings.ToLower(full), command.RefSHA, true},
		{full[:39], strings.ToLower(full[:39]), command.RefSHA, false},
		{full + "2", full + "2", command.RefBranch, false}, // 41 hex digits: a branch name
		{"ggggggg", "ggggggg", command.RefBranch, false},
		{"GGGGGGG", "GGGGGGG", command.RefBranch, false},
		{"abcde/x", "", 0, false}, // '/' is just below '0'
		{"abcdef:", "", 0, false}, // ':' just above '9'
		{"abcdef`", "", 0, false}, // '`' just below 'a'
		{"abcdef@", "", 0, false}, // '@' just below 'A'
	} {
		cmd, found, err := command.Parse("/profile rocm ref="+c.ref, cfg)
		if c.kind == 0 { // not hex: a branch if the name is valid, never a SHA
			if !found || cmd.RefKind == command.RefSHA {
				t.Errorf("ref=%s: %+v %v, want no SHA", c.ref, cmd, err)
			}
			continue
		}
		if !found || err != nil || cmd.Ref != c.want || cmd.RefKind != c.kind || cmd.FullSHA() != c.full {
			t.Errorf("ref=%s: ref %q kind %v full %v (error %v); want %q %v %v", c.ref, cmd.Ref, cmd.RefKind, cmd.FullSHA(), err, c.want, c.kind, c.full)
		}
	}
	for ref, want := range map[string]string{
		"abcdef": "too short for a SHA", "0": "too short for a SHA",
		"": "is empty", strings.Repeat("b", 256): "a branch name has at most 255",
	} {
		if _, _, err := command.Parse("/profile rocm ref="+ref, cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ref=%.20s: error %v, want %q", ref, err, want)
		}
	}
	if cmd, _, err := command.Parse("/profile rocm ref="+strings.Repeat("b", 255), cfg); err != nil || cmd.RefKind != command.RefBranch {
		t.Errorf("a branch name of 255 bytes: %v", err)
	}
}

// TestCountLimitsAtTheirEdges: a request may name exactly MaxSampling sampling tags and
// exactly limits.max_models models; one more is refused.
func TestCountLimitsAtTheirEdges(t *testing.T) {
	t.Parallel()
	cfg := cfgOf(t, threeModels)
	tags := []string{"greedy", "t0.1", "t0.2", "t0.3", "t0.4", "t0.5", "t0.6", "t0.7", "t0.8"}
	if cmd, _, err := command.Parse("/profile rocm sampling="+strings.Join(tags[:command.MaxSampling], ","), cfg); err != nil || len(cmd.Sampling) != command.MaxSampling {
		t.Errorf("%d sampling tags: %v", command.MaxSampling, err)
	}
	if _, _, err := command.Parse("/profile rocm sampling="+strings.Join(tags[:command.MaxSampling+1], ","), cfg); err == nil || !strings.Contains(err.Error(), "at most 8") {
		t.Errorf("%d sampling tags: %v", command.MaxSampling+1, err)
	}
	two := cfgOf(t, threeModels+"limits: {max_models: 2}\n")
	if cmd, _, err := command.Parse("/profile rocm models=llama,qwen3", two); err != nil || len(cmd.Models) != 2 {
		t.Errorf("2 models under max_models 2: %v", err)
	}
	if _, _, err := command.Parse("/profile rocm models=llama,qwen3,gemma", two); err == nil || !strings.Contains(err.Error(), "at most 2") {
		t.Errorf("3 models under max_models 2: %v", err)
	}
}

// TestSizeLimitsAtTheirEdges: a comment of exactly MaxBodyBytes and a command line of
// exactly MaxLineBytes are read; a byte more is refused with the limit named.
func TestSizeLimitsAtTheirEdges(t *testing.T) {
	t.Parallel()
	cfg := cfgOf(t, threeModels)
	head := "/profile rocm ref=main\n"
	body := func(n int) string { return head + strings.Repeat("x", n-len(head)) }
	if cmd, found, err := command.Parse(body(command.MaxBodyBytes), cfg); !found || err != nil || cmd.Ref != "main" {
		t.Errorf("a comment of exactly %d bytes: found %v, error %v", command.MaxBodyBytes, found, err)
	}
	if _, found, err := command.Parse(body(command.MaxBodyBytes+1), cfg); !found || err == nil || !strings.Contains(err.Error(), "longer than 262144 bytes") {
		t.Errorf("a comment of %d bytes: found %v, error %v", command.MaxBodyBytes+1, found, err)
	}
	line := func(n int) string {
		return "/profile rocm" + strings.Repeat(" ", n-len("/profile rocm ref=main")) + " ref=main"
	}
	if l := line(command.MaxLineBytes); len(l) != command.MaxLineBytes {
		t.Fatalf("line of %d bytes", len(l))
	}
	if cmd, _, err := command.Parse(line(command.MaxLineBytes), cfg); err != nil || cmd.Ref != "main" {
		t.Errorf("a line of exactly %d bytes: %v", command.MaxLineBytes, err)
	}
	if _, _, err := command.Parse(line(command.MaxLineBytes+1), cfg); err == nil || !strings.Contains(err.Error(), "perfbot reads at most 2048") {
		t.Errorf("a line of %d bytes: %v", command.MaxLineBytes+1, err)
	}
}

// TestHelpNamesTheConfiguredValues: the help's example names at most two models and
// no more than limits.max_models; the epic default is the configured issue or none; a
// config without limits shows the default limit.
func TestHelpNamesTheConfiguredValues(t *testing.T) {
	t.Parallel()
	profile := command.Specs()[0]
	if profile.Kind != command.Profile {
		t.Fatalf("first spec %v", profile.Kind)
	}
	for _, c := range []struct {
		yaml, models string
	}{
		{threeModels, "models=llama,qwen3 "},
		{threeModels + "limits: {max_models: 1}\n", "models=llama "},
		{strings.Replace(threeModels, "  gemma: {dir: m/gemma, model_type: gemma3, weights_gib: 1}\n", "", 1) + "limits: {max_models: 2}\n", "models=llama,qwen3 "},
	} {
		cfg := cfgOf(t, c.yaml)
		ex := command.Example(profile, cfg)
		if !strings.Contains(ex, " "+c.models) {
			t.Errorf("example %q, want %q", ex, c.models)
		}
		if _, _, err := command.Parse(ex, cfg); err != nil {
			t.Errorf("example %q does not parse: %v", ex, err)
		}
	}
	if h := command.HelpText(cfgOf(t, threeModels)); !strings.Contains(h, "ranking comment; default none\n") {
		t.Errorf("help without an epic:\n%s", h)
	}
	if h := command.HelpText(cfgOf(t, threeModels+"epic: 7\n")); !strings.Contains(h, "ranking comment; default #7\n") {
		t.Errorf("help with epic 7:\n%s", h)
	}
	if h := command.HelpText(cfgOf(t, threeModels+"trigger: {min_permission: maintain}\n")); !strings.Contains(h, "needs the `maintain` permission") {
		t.Errorf("help with min_permission maintain:\n%s", h)
	}
	if h := command.HelpText(config.Config{}); !strings.Contains(h, "at most 8, from none") || !strings.Contains(h, "needs the `write` permission") {
		t.Errorf("help of an empty config:\n%s", h)
	}
}
