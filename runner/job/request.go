package job

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/lablup/perfbot/config"
	"github.com/lablup/perfbot/runner/guard"
	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/results"
	"github.com/lablup/perfbot/runner/sandbox"
)

// ErrBadRequest marks an error in what the caller asked for (a model the config does not
// have, a sampling tag that is not one, a checkout without a config): `perfbot run`
// exits 2 on it, the Action names the input at fault. A caller that loads the config
// itself (config.LoadRepo) finds a missing one as config.ErrMissing.
var ErrBadRequest = errors.New("bad request")

type badRequest struct{ err error }

func (e *badRequest) Error() string   { return e.err.Error() }
func (e *badRequest) Unwrap() []error { return []error{ErrBadRequest, e.err} }

func badRequestf(format string, a ...any) error {
	return &badRequest{err: fmt.Errorf(format, a...)}
}

// ProfileRequest is a profile session as its callers (`perfbot run profile`, the
// Action's profile job) ask for it: names and tags as given, resolved against the
// config by Options.
type ProfileRequest struct {
	Host    host.Host
	RepoDir string
	// ConfigPath is the config file; "" means the checkout's .github/perfbot.yml,
	// which must then exist.
	ConfigPath string
	Models     []string // config model names; empty means the config's default
	Sampling   []string // sampling tags; empty means the config's
	OutDir     string
	TraceDir   string // "" means <OutDir>/traces
	SkipBuild  bool
	Bench      string
	GFX        string
	// Getenv reads the shell guard's environment overrides and the host's sandbox
	// settings (PERFBOT_SANDBOX...); nil means os.Getenv.
	Getenv   func(string) string
	Progress io.Writer
}

// Options loads the config and checks the request against it.
func (r ProfileRequest) Options() (ProfileOptions, error) {
	cfg, g, sb, err := requestSettings(r.ConfigPath, r.RepoDir, true, r.Host, r.Getenv)
	if err != nil {
		return ProfileOptions{}, err
	}
	var samp []results.Sampling
	for _, tag := range r.Sampling {
		s, err := results.ParseSampling(tag)
		if err != nil {
			return ProfileOptions{}, badRequestf("sampling: %v", err)
		}
		samp = append(samp, s)
	}
	for _, m := range r.Models {
		if _, ok := cfg.Model(m); !ok {
			return ProfileOptions{}, badRequestf("models: %q is not a model of the config; known: %s", m, knownModels(cfg))
		}
	}
	traces := r.TraceDir
	if traces == "" {
		traces = filepath.Join(r.OutDir, "traces")
	}
	return ProfileOptions{
		Host: r.Host, RepoDir: r.RepoDir, Config: cfg, Models: r.Models, Sampling: samp, OutDir: r.OutDir,
		TraceDir: traces, Guard: g, SkipBuild: r.SkipBuild, Bench: r.Bench, GFX: r.GFX, Sandbox: &sb, Progress: r.Progress,
	}, nil
}

// GemmRequest is the numeric test job as its callers ask for it.
type GemmRequest struct {
	Host    host.Host
	RepoDir string
	// ConfigPath is the config file for the guard settings; "" means the checkout's
	// .github/perfbot.yml when there is one, else the defaults.
	ConfigPath string
	GuardLog   string
	LogDir     string
	Timeout    time.Duration
	Progress   io.Writer
	// Getenv reads the guard's overrides and the host's sandbox settings; nil means
	// os.Getenv.
	Getenv func(string) string
}

// Options loads the config's guard settings.
func (r GemmRequest) Options() (GemmOptions, error) {
	_, g, sb, err := requestSettings(r.ConfigPath, r.RepoDir, false, r.Host, r.Getenv)
	if err != nil {
		return GemmOptions{}, err
	}
	g.LogPath = r.GuardLog
	return GemmOptions{Host: r.Host, RepoDir: r.RepoDir, Guard: g, Timeout: r.Timeout, LogDir: r.LogDir, Sandbox: &sb, Progress: r.Progress}, nil
}

// requestSettings are a request's config (loadRequestConfig; required says a missing
// one is an error), its guard options and the host's sandbox settings (hostSettings).
func requestSettings(path, repo string, required bool, h host.Host, getenv func(string) string) (config.Config, guard.Options, sandbox.Settings, error) {
	cfg, err := loadRequestConfig(path, repo, required)
	if err != nil {
		return cfg, guard.Options{}, sandbox.Settings{}, err
	}
	g, sb, err := hostSettings(cfg, h, getenv)
	return cfg, g, sb, err
}

// hostSettings are the guard options (the config's, with the shell guard's environment
// overrides) and the host's sandbox settings of a request.
func hostSettings(cfg config.Config, h host.Host, getenv func(string) string) (guard.Options, sandbox.Settings, error) {
	g, err := GuardFromConfig(cfg, h, getenv)
	if err != nil {
		return g, sandbox.Settings{}, err
	}
	sb, err := sandbox.FromEnv(getenv)
	return g, sb, err
}

// loadRequestConfig is config.LoadRepo with a missing config a bad request.
func loadRequestConfig(path, repo string, required bool) (config.Config, error) {
	c, err := config.LoadRepo(path, repo, required)
	if errors.Is(err, config.ErrMissing) {
		return c, &badRequest{err: err}
	}
	return c, err
}

// GuardFromConfig is the config's guard settings with the shell guard's environment
// overrides on top (getenv nil means os.Getenv).
func GuardFromConfig(c config.Config, h host.Host, getenv func(string) string) (guard.Options, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	g := GuardOptions(c.Guard)
	if err := g.ApplyEnv(getenv); err != nil {
		return g, &badRequest{err: err}
	}
	g.Host = h
	return g, nil
}
