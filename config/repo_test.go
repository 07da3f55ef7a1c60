package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// LoadRepo: the named file, else the checkout's, else the defaults or a missing-config
// error, as the caller requires.
func TestLoadRepo(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	empty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, filepath.FromSlash(DefaultPath)), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(t.TempDir(), "other.yml")
	if err := os.WriteFile(named, []byte(base+"epic: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	if c, err := LoadRepo("", repo, true); err != nil || len(c.Models) != 1 {
		t.Errorf("the checkout's config: %+v, %v", c, err)
	}
	if c, err := LoadRepo(named, empty, true); err != nil || c.Epic != 7 {
		t.Errorf("a named config: epic %d, %v; want 7", c.Epic, err)
	}
	if c, err := LoadRepo("", empty, false); err != nil || !reflect.DeepEqual(c, Default()) {
		t.Errorf("no config, not required: %+v, %v; want the defaults", c, err)
	}
	_, err := LoadRepo("", empty, true)
	if !errors.Is(err, ErrMissing) || err.Error() != "the checkout has no .github/perfbot.yml: add one, or name the config file to use" {
		t.Errorf("no config, required: %v; want ErrMissing with the path to add", err)
	}
	// A named file that is missing is the caller's path at fault, not a missing config.
	_, err = LoadRepo(filepath.Join(empty, "none.yml"), empty, false)
	if err == nil || errors.Is(err, ErrMissing) || !strings.HasPrefix(err.Error(), "loading the config: ") {
		t.Errorf("a missing named file: %v; want a load error", err)
	}
}
