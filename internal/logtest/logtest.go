// Package logtest checks, in tests, what the bot writes to its structured log: a
// handler that fails the test on an attribute holding a time.Duration, which the
// server's JSON log would write as raw nanoseconds (durations go as milliseconds under
// a key ending in _ms, bot/logkey).
package logtest

import (
	"context"
	"log/slog"
	"testing"
)

// NoDurations wraps h so that every log line and attribute it sees is checked: a
// time.Duration fails t.
func NoDurations(t testing.TB, h slog.Handler) slog.Handler { return noDurations{h, t} }

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
