package server_test

import (
	"context"
	"log/slog"
	"testing"
)

// noDurations fails the test on a log attribute holding a time.Duration, which the
// server's JSON log writes as nanoseconds: durations go as milliseconds under a key
// ending in _ms (bot/logkey). It wraps the log of every server the tests start, so any
// log line a test reaches is checked, the GitHub client's included.
type noDurations struct {
	slog.Handler
	t testing.TB
}

func (h noDurations) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindDuration {
			h.t.Errorf("log line %q: %s is a time.Duration (nanoseconds in JSON): log milliseconds under a key ending in _ms", r.Message, a.Key)
		}
		return true
	})
	return h.Handler.Handle(ctx, r)
}

func (h noDurations) WithAttrs(as []slog.Attr) slog.Handler {
	for _, a := range as {
		if a.Value.Kind() == slog.KindDuration {
			h.t.Errorf("log attribute %s is a time.Duration (nanoseconds in JSON): log milliseconds under a key ending in _ms", a.Key)
		}
	}
	return noDurations{h.Handler.WithAttrs(as), h.t}
}

func (h noDurations) WithGroup(name string) slog.Handler {
	return noDurations{h.Handler.WithGroup(name), h.t}
}
