package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The host's own reading of the mlxcel checkout is shown only when it says
// something other than the measured commit.
func TestEnvRows(t *testing.T) {
	t.Parallel()
	base, folder := strings.Repeat("ab", 20), "gfx1151_abababab"
	gpu := Row{Label: "GPU", Value: "Radeon 8060S Graphics"}
	for _, tc := range []struct {
		name string
		host string
		want []Row
	}{
		{"the same commit, abbreviated", "abababab", []Row{gpu}},
		{"the same commit, whole", base, []Row{gpu}},
		{"another commit", "cdcdcdcd", []Row{{Label: "mlxcel checkout on the host", Value: "cdcdcdcd"}, gpu}},
		{"an empty reading", "", []Row{{Label: "mlxcel checkout on the host", Value: ""}, gpu}},
	} {
		host := []Row{{Label: "mlxcel commit", Value: tc.host}, gpu}
		want := append([]Row{{Label: "mlxcel commit", Value: base}, {Label: "results", Value: folder}}, tc.want...)
		if diff := cmp.Diff(want, envRows(folder, host, true, base)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	want := []Row{{Label: "mlxcel commit", Value: base}, {Label: "results", Value: folder}, {Label: "host facts", Value: "hostinfo.json is missing from the results"}}
	if diff := cmp.Diff(want, envRows(folder, nil, false, base)); diff != "" {
		t.Errorf("no hostinfo.json (-want +got):\n%s", diff)
	}
}

// The comment that reruns a profile names only what was chosen.
func TestReproduceComment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		models, sampling []string
		commit, want     string
	}{
		{nil, nil, "", "/profile rocm"},
		{nil, nil, "abababab", "/profile rocm ref=abababab"},
		{[]string{"llama"}, nil, "abababab", "/profile rocm models=llama ref=abababab"},
		{nil, []string{"greedy", "t0.7"}, "", "/profile rocm sampling=greedy,t0.7"},
	} {
		comment, lines := reproduce(nil, "benchmarks/rocm_profiles", "gfx1151_abababab", tc.models, tc.sampling, tc.commit)
		if comment != tc.want {
			t.Errorf("%q %q %q: comment %q, want %q", tc.models, tc.sampling, tc.commit, comment, tc.want)
		}
		if want := "perfbot rank benchmarks/rocm_profiles/gfx1151_abababab"; lines[len(lines)-1] != want {
			t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
		}
	}
}
