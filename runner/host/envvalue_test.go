package host

import "testing"

// A value is read from an environment list the way exec reads it: the last of
// duplicate entries wins, a name is matched whole.
func TestEnvValueReadsAnEnvironmentAsExecDoes(t *testing.T) {
	env := []string{"PATH=/first", "PATHS=/not-this", "HOME=/home/runner", "PATH=/last", "NOVALUE"}
	for key, want := range map[string]string{"PATH": "/last", "HOME": "/home/runner", "NOVALUE": "", "TMPDIR": ""} {
		if got := EnvValue(env, key); got != want {
			t.Errorf("EnvValue(%q) = %q, want %q", key, got, want)
		}
	}
	if got := EnvValue([]string{"PATH=/only"}, "PATH"); got != "/only" {
		t.Errorf("lookup of the first entry = %q", got)
	}
}
