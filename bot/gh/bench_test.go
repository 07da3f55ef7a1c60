package gh

import (
	"context"
	"fmt"
	"testing"

	"github.com/lablup/perfbot/internal/fakegithub"
)

// BenchmarkFindCommentWithMarker searches a 500-comment thread (5 pages) whose marked
// comment is the last one: the client side of the epic comment's upsert, over real
// HTTP on 127.0.0.1.
func BenchmarkFindCommentWithMarker(b *testing.B) {
	s := fakegithub.New(b, fakegithub.WithoutSchemaCheck())
	c, err := NewTokenClient("t0ken", Options{BaseURL: s.URL(), Login: botLogin})
	if err != nil {
		b.Fatal(err)
	}
	const pages = 5
	for p := 1; p <= pages; p++ {
		var list []any
		for i := range 100 {
			id := int64(p*1000 + i)
			body, user := "a long discussion of kernel ports", "octocat"
			if p == pages && i == 99 {
				body, user = marker+"\nranking", botLogin
			}
			list = append(list, comment(b, id, user, body))
		}
		r := fakegithub.JSON(200, list)
		path := commentsPath + "?page="
		if p > 1 {
			path = fmt.Sprintf("%s?page=%d", commentsPath, p)
		}
		if p < pages {
			r = r.Header("Link", fmt.Sprintf(`<%s>; rel="next"`, s.AbsURL(fmt.Sprintf("%s?per_page=100&page=%d", commentsPath, p+1))))
		}
		s.Expect("GET", path, r).Times(b.N)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		got, err := c.FindCommentWithMarker(ctx, testRepo, 12, marker)
		if err != nil || got == nil {
			b.Fatal(got, err)
		}
	}
}

// BenchmarkTruncate cuts a 1 MiB Markdown report to a check run summary.
func BenchmarkTruncate(b *testing.B) {
	var report []byte
	for len(report) < 1<<20 {
		report = fmt.Appendf(report, "| %d | rocprim::detail::kernel<é> | 1.25 |\n", len(report))
	}
	s := string(report)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if out := Truncate(s, MaxCheckText); len(out) > MaxCheckText {
			b.Fatal(len(out))
		}
	}
}
