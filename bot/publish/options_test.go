package publish

import "testing"

// An outcome in a log line says what happened, then where, why, and what went wrong.
func TestOutcomeString(t *testing.T) {
	for _, c := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{Action: "created", Number: 12, URL: "https://github.com/lablup/mlxcel/issues/12#issuecomment-1"}, "created https://github.com/lablup/mlxcel/issues/12#issuecomment-1"},
		{Outcome{Action: "skipped", Detail: "no issue or pull request to comment on"}, "skipped (no issue or pull request to comment on)"},
		{Outcome{Action: "failed", Number: 12, Error: "GitHub answered 502"}, "failed: GitHub answered 502"},
		{Outcome{Action: "updated", URL: "u", Detail: "d", Error: "e"}, "updated u (d): e"},
		{Outcome{}, ""},
	} {
		if got := c.o.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.o, got, c.want)
		}
	}
}
