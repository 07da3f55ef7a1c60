//go:build linux

package patch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

const writeAllDirEnv = "PERFBOT_TEST_WRITEALL_DIR"

// TestWriteAllFailedWrite: a write that fails part-way (the file-size limit here, as a
// full disk would) is an error, and leaves both files as they were with no temporary
// file beside them. The limit is set in a child process so no other test runs under it.
func TestWriteAllFailedWrite(t *testing.T) {
	if dir := os.Getenv(writeAllDirEnv); dir != "" {
		writeAllUnderALimit(dir)
		return
	}
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.rs"), "old a\n")
	writeFile(t, filepath.Join(dir, "b.py"), "old b\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteAllFailedWrite$", "-test.count=1")
	cmd.Env = append(os.Environ(), writeAllDirEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "writeAll: writing b.py: ") || !strings.Contains(string(out), "file too large") {
		t.Errorf("writeAll under a 4 KiB file-size limit did not fail on b.py:\n%s", out)
	}
	for name, want := range map[string]string{"a.rs": "old a\n", "b.py": "old b\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %d bytes starting %.20q, %v; want it unchanged", name, len(b), b, err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"a.rs", "b.py"}) {
		t.Errorf("left in the folder: %q", names)
	}
}

// writeAllUnderALimit runs in the child: a 4 KiB limit on file size, then a small
// file and one of 64 KiB. Go ignores SIGXFSZ, so the write returns EFBIG.
func writeAllUnderALimit(dir string) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("getrlimit:", err)
		os.Exit(1)
	}
	lim.Cur = 4096
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(1)
	}
	err := writeAll([]pendingWrite{
		{path: filepath.Join(dir, "a.rs"), rel: "a.rs", data: "new a\n", mode: 0o644},
		{path: filepath.Join(dir, "b.py"), rel: "b.py", data: strings.Repeat("x", 64<<10), mode: 0o644},
	})
	fmt.Printf("writeAll: %v\n", err)
	os.Exit(0)
}
