package logtest

import (
	"bytes"
	"log/slog"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what Errorf was told instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }

// TestNoDurations: a duration in a line or in With attributes is reported, milliseconds
// are not, and the line still reaches the wrapped handler.
func TestNoDurations(t *testing.T) {
	var buf bytes.Buffer
	rec := &recorder{TB: t}
	log := slog.New(NoDurations(rec, slog.NewJSONHandler(&buf, nil)))
	log.Info("fine", "wait_ms", int64(1500))
	if len(rec.errs) != 0 {
		t.Errorf("milliseconds reported: %v", rec.errs)
	}
	log.Info("bad", "wait", 1500*time.Millisecond)
	log.With("after", time.Second).WithGroup("g").Info("bad too")
	if len(rec.errs) != 2 {
		t.Errorf("%d reports, want 2 (the line's duration and the With one)", len(rec.errs))
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"msg":"bad too"`)) {
		t.Errorf("the line did not reach the wrapped handler:\n%s", buf.String())
	}
}
