package guard

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// Each limit of the guard's options on its edge: the edge is taken, one step past it
// is refused with the option named.
func TestOptionsAtTheirEdges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		set  func(*Options)
		want string // "" when valid
	}{
		{"idle 0", func(o *Options) { o.Idle = 0 }, ""},
		{"idle at most", func(o *Options) { o.Idle = MaxIdle }, ""},
		{"idle past", func(o *Options) { o.Idle = MaxIdle + 1 }, "idle window"},
		{"idle below 0", func(o *Options) { o.Idle = -1 }, "idle window"},
		{"attempts 1", func(o *Options) { o.MaxAttempts = 1 }, ""},
		{"attempts 0", func(o *Options) { o.MaxAttempts = 0 }, "max attempts"},
		{"attempts at most", func(o *Options) { o.MaxAttempts = MaxMaxAttempts }, ""},
		{"attempts past", func(o *Options) { o.MaxAttempts = MaxMaxAttempts + 1 }, "max attempts"},
		{"wait 0", func(o *Options) { o.MaxWait = 0 }, ""},
		{"wait at most", func(o *Options) { o.MaxWait = MaxMaxWait }, ""},
		{"wait past", func(o *Options) { o.MaxWait = MaxMaxWait + 1 }, "max wait"},
		{"wait below 0", func(o *Options) { o.MaxWait = -1 }, "max wait"},
		{"rate at most", func(o *Options) { o.SampleHz = MaxSampleHz }, ""},
		{"rate past", func(o *Options) { o.SampleHz = MaxSampleHz * 1.0001 }, "sample rate"},
		{"rate 0", func(o *Options) { o.SampleHz = 0 }, "sample rate"},
		{"foreign CPU 0", func(o *Options) { o.MaxForeignCPU = 0 }, ""},
		{"foreign CPU at most", func(o *Options) { o.MaxForeignCPU = maxForeignCPU }, ""},
		{"foreign CPU past", func(o *Options) { o.MaxForeignCPU = maxForeignCPU + 0.5 }, "max foreign CPU"},
		{"foreign CPU below 0", func(o *Options) { o.MaxForeignCPU = -0.5 }, "max foreign CPU"},
	}
	for _, c := range cases {
		o := DefaultOptions()
		c.set(&o)
		err := o.validate([]string{"true"})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	for v, ok := range map[string]bool{"1": true, " 77 ": true, "0": false, "-1": false, "x": false} {
		o := DefaultOptions()
		err := o.ApplyEnv(func(k string) string {
			if k == EnvLockHeld {
				return v
			}
			return ""
		})
		if (err == nil) != ok {
			t.Errorf("%s=%q: %v", EnvLockHeld, v, err)
		}
	}
}

// fill gives the defaults only for what is unset: a compiler pattern and a kill grace
// the caller chose stay.
func TestFillKeepsChoices(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^nvcc$`)
	o := Options{CompilerRE: re, KillGrace: 5 * time.Second}
	o.fill()
	if o.CompilerRE != re || o.KillGrace != 5*time.Second {
		t.Errorf("chosen: pattern %v grace %v", o.CompilerRE, o.KillGrace)
	}
	for _, g := range []time.Duration{0, -time.Second} {
		o = Options{KillGrace: g}
		o.fill()
		if o.CompilerRE == nil || o.CompilerRE.String() != regexp.MustCompile(DefaultCompilerRE).String() || o.KillGrace != DefaultKillGrace {
			t.Errorf("grace %v: pattern %v grace %v", g, o.CompilerRE, o.KillGrace)
		}
	}
}
