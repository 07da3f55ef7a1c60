package fakegithub

import "testing"

func TestEvalExpr(t *testing.T) {
	t.Parallel()
	ctx := func(name string) string {
		return map[string]string{"github.event_name": "workflow_dispatch", "inputs.request_id": "42", "inputs.job": "profile", "inputs.sha": "abc"}[name]
	}
	for expr, want := range map[string]string{
		`github.event_name == 'workflow_dispatch' && format('perfbot request {0}: {1} at {2}', inputs.request_id, inputs.job, inputs.sha) || format('perfbot comment {0}', github.event.comment.id)`: "perfbot request 42: profile at abc",
		`github.event_name == 'issue_comment' && 'a' || format('perfbot comment {0}', github.event.comment.id)`:                                                                                      "perfbot comment ",
		`inputs.missing || 'fallback'`: "fallback",
		`inputs.request_id || 'x'`:     "42",
		`!(inputs.job == 'bench')`:     "true",
		`'it''s'`:                      "it's",
		`contains(inputs.job, 'OFI')`:  "true",
		`contains(inputs.job, 'x')`:    "false",
		`startsWith(inputs.job, 'Pro') && !startsWith(inputs.job, 'rof')`: "true",
		`contains(format('a{0}b', fromJSON('"\n"')), fromJSON('"a\nb"'))`: "true",
		`fromJSON('true') && fromJSON('3')`:                               "3",
	} {
		got, err := evalExpr(expr, ctx)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", expr, got, err, want)
		}
	}
	for _, bad := range []string{`format(`, `'open`, `toJSON(inputs)`, `a b`, `contains('a')`, `fromJSON('{}')`, `fromJSON('"open')`} {
		if _, err := evalExpr(bad, ctx); err == nil {
			t.Errorf("%s evaluated", bad)
		}
	}
}
