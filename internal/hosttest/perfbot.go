package hosttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// perfbotBin is the perfbot binary the fake host's tools run (the fake bench calls
// `perfbot synth`), built once per test binary.
var perfbotBin struct {
	once sync.Once
	dir  string
	err  error
}

// PerfbotDir builds cmd/perfbot once per test binary into a folder for the fake host's
// PATH and returns the folder. The package's TestMain removes it with RemovePerfbot.
func PerfbotDir(t testing.TB) string {
	t.Helper()
	perfbotBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "perfbot-test-bin-")
		if err != nil {
			perfbotBin.err = err
			return
		}
		perfbotBin.dir = dir
		// `go test` puts its own toolchain first on the PATH of the test process.
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "perfbot"), "github.com/lablup/perfbot/cmd/perfbot")
		if out, err := cmd.CombinedOutput(); err != nil {
			perfbotBin.err = fmt.Errorf("building perfbot: %v\n%s", err, out)
		}
	})
	if perfbotBin.err != nil {
		t.Fatal(perfbotBin.err)
	}
	return perfbotBin.dir
}

// RemovePerfbot removes what PerfbotDir built, if anything; for TestMain after m.Run.
func RemovePerfbot() {
	if perfbotBin.dir != "" {
		os.RemoveAll(perfbotBin.dir)
	}
}
