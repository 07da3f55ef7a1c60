package publish

import (
	"context"
	"testing"
)

// BenchmarkPublishDryRunRerun measures a dry run of results already published: read,
// rank, the prepared patch, render, validate, and a push that finds nothing to do.
func BenchmarkPublishDryRunRerun(b *testing.B) {
	tg := newTarget(b)
	res := layPrepared(b, tg, profile{date: "2026-09-30", tests: allPassed})
	o := Options{Target: Target{ResultsDir: res, RepoDir: tg.checkout, Config: testConfig(), Sink: ToDir(b.TempDir())}}
	if _, err := Publish(context.Background(), o); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		sum, err := Publish(context.Background(), o)
		if err != nil || sum.Git.Action != "unchanged" {
			b.Fatalf("%v %+v", err, sum.Git)
		}
	}
}
