package action

import (
	"errors"
	"strings"
	"testing"
)

// The config input names the file the host jobs read instead of .github/perfbot.yml: a
// name the checkout lacks fails the step before anything runs, and a file it has is
// the one read (a broken one fails on its own contents, not as missing).
func TestHostJobsReadTheConfigInput(t *testing.T) {
	t.Parallel()
	h := newHostJobs(t, jobsConfig, map[string]string{"ci/broken.yml": "guard: {idle_secs: -1}\n"})
	for _, c := range []struct {
		config, want, not string
	}{
		{"ci/missing.yml", "input config: the checkout has no ci/missing.yml", "guard.idle_secs"},
		{"ci/broken.yml", "guard.idle_secs", "the checkout has no"},
	} {
		_, _, log, err := h.step(t, map[string]string{"job": "profile", "config": c.config})
		errs := strings.Join(annotations(t, log)["error"], "\n")
		if !errors.Is(err, ErrJobFailed) || !strings.Contains(errs, c.want) || strings.Contains(errs, c.not) {
			t.Errorf("config %s: %v, errors %q; want one saying %q", c.config, err, errs, c.want)
		}
	}
}
