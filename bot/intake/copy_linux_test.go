//go:build linux

package intake

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCopyFileChecksTheOpenFile: what the listing said is checked again on the open
// file. A procfs file says it has 0 bytes and has more: the read stops one byte past
// the cap. /dev/null is a device however it was listed.
func TestCopyFileChecksTheOpenFile(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	lim.MaxFileBytes = 16
	c := &copier{ctx: context.Background(), lim: lim}
	for _, tc := range []struct {
		dir, name string
		rule      error
	}{
		{"/proc/" + strconv.Itoa(os.Getpid()), "status", ErrTooLarge},
		{"/dev", "null", ErrNotRegular},
	} {
		d, err := openRoot(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(t.TempDir(), tc.name)
		_, err = c.copyFile(d, tc.name, tc.name, to)
		d.close()
		if !errors.Is(err, tc.rule) {
			t.Errorf("%s/%s: %v, want %v", tc.dir, tc.name, err, tc.rule)
		}
		gone(t, to)
	}
	if c.total != 0 {
		t.Errorf("%d bytes counted for files refused", c.total)
	}
	// /proc/self is a link: the source itself is not followed either.
	if _, err := openRoot("/proc/self"); !isLinkError(err) {
		t.Errorf("/proc/self opened: %v", err)
	}
}
