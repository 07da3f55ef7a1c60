package gh

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lablup/perfbot/internal/fakegithub"
)

const (
	checkSHA    = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	checkRuns   = "/repos/lablup/mlxcel/commits/" + checkSHA + "/check-runs"
	createRuns  = "/repos/lablup/mlxcel/check-runs"
	checkExtID  = "perfbot-request-42"
	checkName   = "perfbot profile"
	checkListed = "?check_name=perfbot+profile&filter=all&per_page=100"
)

func checkSpec() CheckRunSpec {
	return CheckRunSpec{Name: checkName, HeadSHA: checkSHA, ExternalID: checkExtID, Title: "Queued", Summary: "request 42"}
}

// checkRun builds a check run answer from GitHub's documented example.
func checkRun(t testing.TB, id int64, externalID string) map[string]any {
	t.Helper()
	m, err := fakegithub.Object(example(t, "check-run"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"id": id, "external_id": externalID, "name": checkName, "head_sha": checkSHA, "status": "queued", "conclusion": nil} {
		if err := fakegithub.Set(m, k, v); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func checkList(runs ...any) map[string]any {
	return map[string]any{"total_count": len(runs), "check_runs": append([]any{}, runs...)}
}

// A run created by an earlier attempt whose caller died before recording it is
// found by its external id, on the second page, and not created again.
func TestCreateCheckRunFindsTheRunOfAnEarlierAttempt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", checkRuns+checkListed, fakegithub.JSON(200, checkList(checkRun(t, 7, "perfbot-request-41"), checkRun(t, 8, "perfbot-request-420"))).
		Header("Link", fmt.Sprintf(`<%s>; rel="next"`, e.s.AbsURL(checkRuns+checkListed+"&page=2"))))
	e.s.Expect("GET", checkRuns+checkListed+"&page=2", fakegithub.JSON(200, checkList(checkRun(t, 9, checkExtID))))
	got, err := e.c.CreateCheckRun(context.Background(), testRepo, checkSpec())
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "id", got.ID, 9)
}

// Without such a run it is created, once, with its external id.
func TestCreateCheckRunCreatesWhenAbsent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", checkRuns+checkListed, fakegithub.JSON(200, checkList(checkRun(t, 7, "perfbot-request-41"))))
	e.s.Expect("POST", createRuns, fakegithub.JSON(201, checkRun(t, 10, checkExtID))).
		JSONBody(map[string]any{"name": checkName, "head_sha": checkSHA, "external_id": checkExtID, "status": "queued"})
	got, err := e.c.CreateCheckRun(context.Background(), testRepo, checkSpec())
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "id", got.ID, 10)
}

// A 502 on the create that created it anyway: found by the look after, not doubled.
func TestCreateCheckRunAfterAmbiguousFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.s.Expect("GET", checkRuns+checkListed, fakegithub.JSON(200, checkList()))
	e.s.Expect("POST", createRuns, fakegithub.Status(502))
	e.s.Expect("GET", checkRuns+checkListed, fakegithub.JSON(200, checkList(checkRun(t, 11, checkExtID))))
	got, err := e.c.CreateCheckRun(context.Background(), testRepo, checkSpec())
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "id", got.ID, 11)
}

// A look that fails stops before anything is created: the caller tries again later.
func TestCreateCheckRunLookupFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.MaxRetries = -1 })
	e.s.Expect("GET", checkRuns+checkListed, fakegithub.JSON(403, map[string]string{"message": "Resource not accessible by integration"}))
	_, err := e.c.CreateCheckRun(context.Background(), testRepo, checkSpec())
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("err = %v, want forbidden", err)
	}
}
