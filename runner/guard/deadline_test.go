package guard

import (
	"context"
	"testing"
	"time"
)

// waitLimit bounds every wait in the guard tests: for a line of output, for a run to end,
// for the guard to take its next sample, for a helper process. A broken guard then fails
// its test in seconds instead of hanging until the test binary's own timeout.
const waitLimit = 10 * time.Second

// testCtx is the context the tests run the guard with: it ends at waitLimit, so a guard
// that never finishes by itself is stopped (and the test fails) rather than left running.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}
