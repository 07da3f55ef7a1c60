package action

import (
	"io"
	"testing"

	"github.com/lablup/perfbot/bot/gh"
)

// TestGateRunsURLAtItsEdges: the link the serverless status and cancel replies give is
// the current workflow's runs when GITHUB_WORKFLOW_REF names a workflow file, the
// repository's Actions tab when it names none or a file name with characters a link
// would carry wrongly, and no link without a server or a repository.
func TestGateRunsURLAtItsEdges(t *testing.T) {
	t.Parallel()
	e := newStepEnv(t, nil)
	rt, err := NewRuntime(io.Discard, e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	st := &step{rt: rt, repo: gh.Repo{Owner: "lablup", Name: "mlxcel"}}
	const actions = "https://github.example.com/lablup/mlxcel/actions"
	for _, c := range []struct{ server, ref, want string }{
		{"https://github.example.com/", "lablup/mlxcel/.github/workflows/perfbot.yml@refs/heads/main", actions + "/workflows/perfbot.yml"},
		{"https://github.example.com", "lablup/mlxcel/.github/workflows/perfbot.yml", actions + "/workflows/perfbot.yml"},
		// The workflows folder at the very start of the value still names the file.
		{"https://github.example.com", "/.github/workflows/perfbot.yml@main", actions + "/workflows/perfbot.yml"},
		{"https://github.example.com", "", actions},
		{"https://github.example.com", "lablup/mlxcel/perfbot.yml@main", actions},
		{"https://github.example.com", "lablup/mlxcel/.github/workflows/@main", actions},
		{"https://github.example.com", "lablup/mlxcel/.github/workflows/a b.yml@main", actions},
		{"https://github.example.com", "lablup/mlxcel/.github/workflows/x/y.yml@main", actions},
		{"https://github.example.com", "lablup/mlxcel/.github/workflows/x(1).yml@main", actions},
		{"", "lablup/mlxcel/.github/workflows/perfbot.yml@main", ""},
	} {
		e.vars["GITHUB_SERVER_URL"], e.vars["GITHUB_WORKFLOW_REF"] = c.server, c.ref
		if got := st.runsURL(); got != c.want {
			t.Errorf("server %q, workflow ref %q: %q, want %q", c.server, c.ref, got, c.want)
		}
	}
	e.vars["GITHUB_SERVER_URL"], e.vars["GITHUB_WORKFLOW_REF"] = "https://github.example.com", "lablup/mlxcel/.github/workflows/perfbot.yml@main"
	st.repo = gh.Repo{}
	if got := st.runsURL(); got != "" {
		t.Errorf("no repository: %q, want no link", got)
	}
}
