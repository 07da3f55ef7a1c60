package gh

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lablup/perfbot/internal/fakegithub"
)

func TestCompleteCheckRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("PATCH", "/repos/lablup/mlxcel/check-runs/4", fakegithub.JSONFile(200, example(t, "check-run"))).
		JSONBody(map[string]any{
			"status":         "completed",
			"conclusion":     "success",
			"completed_at":   "2026-04-07T19:57:11Z",
			"details_url":    "https://github.com/lablup/mlxcel/pull/7",
			"output.title":   "decode profile: 2 models",
			"output.summary": "GPU ms/token 11.2",
			"output.text":    "| kernel | share |",
			// go-github's options type would send "name": "" and rename the check run.
			"name": fakegithub.Absent,
		})
	err := e.c.CompleteCheckRun(context.Background(), testRepo, 4, CheckOutput{
		Conclusion: "success", Title: "decode profile: 2 models", Summary: "GPU ms/token 11.2",
		Text: "| kernel | share |", DetailsURL: "https://github.com/lablup/mlxcel/pull/7",
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCompleteCheckRunTruncatesLongSummary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := "## Kernels\n\n```\n" + strings.Repeat("rocprim::detail::kernel<é>\n", 4000) + "```\n"
	e.s.Expect("PATCH", "/repos/lablup/mlxcel/check-runs/4", fakegithub.JSONFile(200, example(t, "check-run"))).
		Match(fakegithub.MatchFunc("summary within the limit", func(r fakegithub.Request) error {
			m, err := r.JSON()
			if err != nil {
				return err
			}
			s, _ := m["output"].(map[string]any)["summary"].(string)
			switch {
			case len(s) > MaxCheckText:
				return errors.New("summary longer than 65535 bytes")
			case !utf8.ValidString(s):
				return errors.New("summary cut inside a character")
			case !strings.Contains(s, "_(truncated:"):
				return errors.New("no truncation note")
			case strings.Count(s, "```")%2 != 0:
				return errors.New("code fence left open")
			}
			return nil
		}))
	err := e.c.CompleteCheckRun(context.Background(), testRepo, 4, CheckOutput{Conclusion: "neutral", Title: "t", Summary: long})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCompleteCheckRunRefusesBadOutput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		o    CheckOutput
		want string
	}{
		{"unknown conclusion", CheckOutput{Conclusion: "passed", Title: "t", Summary: "s"}, `conclusion "passed"`},
		{"action_required without URL", CheckOutput{Conclusion: "action_required", Title: "t", Summary: "s"}, "needs a details URL"},
		{"no title", CheckOutput{Conclusion: "failure", Summary: "s"}, "title is empty"},
		{"no summary", CheckOutput{Conclusion: "failure", Title: "t"}, "summary is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			err := e.c.CompleteCheckRun(context.Background(), testRepo, 4, c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		in    string
		limit int
		check func(t *testing.T, out string)
	}{
		{"short text unchanged", "hello\n", 100, func(t *testing.T, out string) { eq(t, "out", out, "hello\n") }},
		{"cut at a line end", strings.Repeat("line of text\n", 50), 300, func(t *testing.T, out string) {
			body, _, _ := strings.Cut(out, "\n\n_(truncated")
			if !strings.HasSuffix(body, "line of text") {
				t.Errorf("cut mid-line: %q", body)
			}
		}},
		{"multi-byte characters", strings.Repeat("é", 400), 250, func(t *testing.T, out string) {
			if !utf8.ValidString(out) {
				t.Error("invalid UTF-8")
			}
		}},
		{"open fence closed", "```\n" + strings.Repeat("x\n", 500), 300, func(t *testing.T, out string) {
			if strings.Count(out, "```") != 2 {
				t.Errorf("fences in %q", out)
			}
		}},
		{"tiny limit", strings.Repeat("é", 10), 5, func(t *testing.T, out string) {
			eq(t, "out", out, "éé")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := Truncate(c.in, c.limit)
			if len(out) > c.limit {
				t.Errorf("%d bytes, limit %d", len(out), c.limit)
			}
			c.check(t, out)
		})
	}
}
