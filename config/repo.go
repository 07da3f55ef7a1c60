package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrMissing marks a checkout without a config where one is required: an error in what
// the caller asked for (`perfbot run` exits 2 on it, the Action names the input).
var ErrMissing = errors.New("the checkout has no config")

type missingError struct{ msg string }

func (e *missingError) Error() string { return e.msg }
func (e *missingError) Unwrap() error { return ErrMissing }

// LoadRepo reads the target repo's config: path when given, else the checkout's
// .github/perfbot.yml (DefaultPath under repo). Without either, required says whether
// that is an error (wrapping ErrMissing) or the defaults do.
func LoadRepo(path, repo string, required bool) (Config, error) {
	explicit := path != ""
	if !explicit {
		path = filepath.Join(repo, filepath.FromSlash(DefaultPath))
	}
	if _, err := os.Stat(path); err != nil && !explicit && !required {
		return Default(), nil
	}
	c, err := Load(path)
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			return c, &missingError{msg: fmt.Sprintf("the checkout has no %s: add one, or name the config file to use", DefaultPath)}
		}
		return c, fmt.Errorf("loading the config: %w", err)
	}
	return c, nil
}
