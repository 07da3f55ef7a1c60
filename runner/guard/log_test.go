package guard

import (
	"errors"
	"io"
	"os"
	"testing"
)

// Closing the evidence closes both of its files.
func TestEvidenceCloseClosesFiles(t *testing.T) {
	t.Parallel()
	e, err := openEvidence(t.TempDir()+"/guard.log", RealClock{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.close()
	if _, err := e.file.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("log file after close: %v", err)
	}
	if _, err := e.jsonl.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("attempt summary after close: %v", err)
	}
	(&evidence{}).close() // without --log: nothing to close
}
