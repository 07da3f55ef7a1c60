package gitpub

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkPublishUnchanged is the rerun of a publication that already landed: one
// ls-remote and the local tree build, no push.
func BenchmarkPublishUnchanged(b *testing.B) {
	r := newRemote(b)
	p, _ := newPublisher(b, r)
	c := resultsChange(b, r.base)
	if _, err := p.Publish(context.Background(), c); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := p.Publish(context.Background(), c)
		if err != nil || res.Action != ActionUnchanged {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// BenchmarkPublishUpdate is a newer profile replacing the branch: tree, commit and a
// leased force-push of the real results folder (12 files, about 80 KB).
func BenchmarkPublishUpdate(b *testing.B) {
	r := newRemote(b)
	p, _ := newPublisher(b, r)
	c := resultsChange(b, r.base)
	i := 0
	for b.Loop() {
		i++
		c.Date = c.Date.Add(time.Minute)
		c.Files[reportAt] = fmt.Appendf(nil, "# profile %d\n", i)
		res, err := p.Publish(context.Background(), c)
		if err != nil || !res.Pushed {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
