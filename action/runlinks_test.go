package action

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/internal/fakegithub"
)

// The publish step links its workflow run and the run's traces artifact (by the
// request's name, else the workflows' prefix); a listing GitHub refuses leaves the run's
// link and a warning; outside Actions there is nothing to link.
func TestRunLinks(t *testing.T) {
	s := fakegithub.New(t)
	artifacts := func(names ...string) fakegithub.Responder {
		list := []any{}
		for i, n := range names {
			url := fmt.Sprintf("https://api.github.com/repos/lablup/mlxcel/actions/artifacts/%d", 70+i)
			list = append(list, map[string]any{"id": 70 + i, "node_id": "MDg6QXJ0aWZhY3Q3MA==", "name": n, "size_in_bytes": 10, "url": url,
				"archive_download_url": url + "/zip", "expired": false, "created_at": "2026-12-03T18:00:00Z", "updated_at": "2026-12-03T18:00:00Z", "expires_at": "2027-03-03T18:00:00Z"})
		}
		return fakegithub.JSON(200, map[string]any{"total_count": len(list), "artifacts": list})
	}
	const path = "/repos/lablup/mlxcel/actions/runs/555/artifacts"
	s.Expect("GET", path, artifacts("perfbot-results-9", "perfbot-traces-8", "perfbot-traces-9"))
	s.Expect("GET", path, artifacts("perfbot-results-x", "perfbot-traces-x"))
	s.Expect("GET", path, fakegithub.JSON(403, map[string]string{"message": "Resource not accessible by integration"}))
	c, err := gh.NewTokenClient("ghs_testtoken0123456789", gh.Options{BaseURL: s.URL(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := newStepEnv(t, nil)
	e.vars["GITHUB_RUN_ID"] = "555"
	var log bytes.Buffer
	rt, err := NewRuntime(&log, e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	st := &step{rt: rt, repo: gh.Repo{Owner: "lablup", Name: "mlxcel"}, serverURL: "https://github.example.com", in: Inputs{RequestID: "9"}}
	run := "https://github.example.com/lablup/mlxcel/actions/runs/555"
	ctx := context.Background()
	got := st.runLinks(ctx, c)
	if len(got) != 2 || got[0].URL != run || got[1].URL != run+"/artifacts/72" {
		t.Errorf("links %+v, want the run and perfbot-traces-9", got)
	}
	st.in.RequestID = ""
	if got := st.runLinks(ctx, c); len(got) != 2 || got[1].URL != run+"/artifacts/71" {
		t.Errorf("without a request id: %+v, want the traces artifact by prefix", got)
	}
	if got := st.runLinks(ctx, c); len(got) != 1 || got[0].URL != run || !strings.Contains(log.String(), "the traces artifact is not linked") {
		t.Errorf("refused listing: %+v\n%s", got, log.String())
	}
	if got := st.runLinks(ctx, nil); len(got) != 1 {
		t.Errorf("dry run: %+v, want the run's link only", got)
	}
	e.vars["GITHUB_RUN_ID"] = ""
	if got := st.runLinks(ctx, c); got != nil {
		t.Errorf("outside Actions: %+v", got)
	}
}
