package action

import "testing"

// The host's PATH is read from the environment the step's processes get, the way exec
// reads it: the last of duplicate entries wins, a name is matched whole.
func TestLookupReadsAnEnvironmentAsExecDoes(t *testing.T) {
	env := []string{"PATH=/first", "PATHS=/not-this", "HOME=/home/runner", "PATH=/last", "NOVALUE"}
	for key, want := range map[string]string{"PATH": "/last", "HOME": "/home/runner", "NOVALUE": "", "TMPDIR": ""} {
		if got := lookup(env, key); got != want {
			t.Errorf("lookup(%q) = %q, want %q", key, got, want)
		}
	}
	if got := lookup([]string{"PATH=/only"}, "PATH"); got != "/only" {
		t.Errorf("lookup of the first entry = %q", got)
	}
}
