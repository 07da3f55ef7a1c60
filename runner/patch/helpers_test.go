package patch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/lablup/perfbot/internal/sampletree"
)

// variants are the test copies of the two files under testdata/variants: the sample
// mlxcel checkout's ("upstream") and the other shapes the patcher must handle. The
// golden tests of runner/patch/patchrun patch them; here they seed the fuzzers.
var variants = []string{"upstream", "crlf-tabs-last", "reversed-prefix", "after-comments"}

// variantFile is the variant's copy of the repo file rel: its own, or the sample's.
func variantFile(variant, rel string) ([]byte, error) {
	if variant != "upstream" {
		b, err := os.ReadFile(filepath.Join("testdata", "variants", variant, "repo", filepath.FromSlash(rel)))
		if !errors.Is(err, fs.ErrNotExist) {
			return b, err
		}
	}
	return sampletree.ReadFile(rel)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
