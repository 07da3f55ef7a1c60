package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/perfbot/bot/command"
	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/webhook"
	"github.com/lablup/perfbot/internal/yamlstrict"
)

// DefaultSecretEnv is the environment variable that holds the webhook secret.
const DefaultSecretEnv = "PERFBOT_WEBHOOK_SECRET"

// Settings are the server's own settings (docs/server.md §1), read from the file given
// to `perfbot serve --config`. The webhook secret is not in the file: it comes from
// the environment variable SecretEnv names.
type Settings struct {
	Listen   string // host:port of the HTTP server
	Database string // the SQLite file
	APIURL   string // the REST API root; https://HOST/api/v3/ on GitHub Enterprise Server
	AppID    int64
	KeyFile  string // the App's private key (PEM)
	// SecretEnv names the environment variable holding the webhook secret.
	SecretEnv string
	Hosts     []Host
	Workers   int // deliveries processed at once
	Backlog   int // received deliveries waiting; beyond it new ones get 503
	// MaxAttempts bounds processing attempts of one delivery before it is failed.
	MaxAttempts int
	// SweepEvery is how often the App's recent deliveries are checked for failed ones;
	// SweepWindow how far back.
	SweepEvery  time.Duration
	SweepWindow time.Duration
	// ConfirmAfter is how long after a dispatch whose answer was lost the server waits
	// before looking for the run (GitHub lists a new run after a few seconds).
	ConfirmAfter time.Duration
	// CheckEvery is how often queues are reconciled with GitHub (runs whose end was
	// missed, dispatches to retry).
	CheckEvery time.Duration
	// Retention is how long done deliveries are kept.
	Retention time.Duration
	// APITimeout bounds each attempt of a GitHub API request (the start-up GET /app
	// included), so a GitHub that never answers cannot hold a worker or a queue.
	APITimeout time.Duration
	// StuckAfter: /readyz answers 503 when every worker has been on its delivery for
	// longer than this.
	StuckAfter time.Duration
	// BodyBudget bounds the webhook body bytes held, across all requests, before their
	// signature is checked; beyond it a delivery is answered 503 unread.
	BodyBudget int64
	// CompareBudget bounds the worst case of one compare (every model at its cap of
	// repeats on both sides): a longer one is refused at acceptance with its estimate.
	// CompareRunTime is the time of one measured run used while the host has no
	// finished plain run to measure it from.
	CompareBudget  time.Duration
	CompareRunTime time.Duration
}

// Host is one GPU host: its runner label, the backend its commands name, and the
// workflow dispatched for it. Each host has its own queue.
type Host struct {
	Label    string
	Backend  string
	Workflow string
	// ProgressDir, when set, is the host's folder of progress files (the GPU job's
	// PERFBOT_PROGRESS_DIR): the status comment of a running request shows what the
	// file of its request says (docs/server.md §5).
	ProgressDir string
}

// DefaultSettings are the values of keys left out of the file.
func DefaultSettings() Settings {
	return Settings{
		Listen:         "127.0.0.1:8080",
		APIURL:         gh.DefaultBaseURL,
		SecretEnv:      DefaultSecretEnv,
		Workers:        4,
		Backlog:        10000,
		MaxAttempts:    8,
		SweepEvery:     5 * time.Minute,
		SweepWindow:    72 * time.Hour,
		ConfirmAfter:   30 * time.Second,
		CheckEvery:     time.Minute,
		Retention:      30 * 24 * time.Hour,
		APITimeout:     gh.DefaultTimeout,
		StuckAfter:     5 * time.Minute,
		BodyBudget:     webhook.DefaultBodyBudget,
		CompareBudget:  8 * time.Hour,
		CompareRunTime: 5 * time.Minute,
	}
}

type rawSettings struct {
	Version  int       `yaml:"version"`
	Listen   string    `yaml:"listen"`
	Database string    `yaml:"database"`
	GitHub   rawGitHub `yaml:"github"`
	Hosts    []rawHost `yaml:"hosts"`
	Workers  int       `yaml:"workers"`
	Backlog  int       `yaml:"backlog"`
	Attempts int       `yaml:"max_attempts"`
	Sweep    rawSweep  `yaml:"sweep"`
	Dispatch rawDisp   `yaml:"dispatch"`
	Keep     int       `yaml:"retention_days"`
	Stuck    int       `yaml:"stuck_secs"`
	BudgetMB int       `yaml:"body_budget_mb"`
	Compare  rawCmp    `yaml:"compare"`
}

type rawCmp struct {
	BudgetMins int `yaml:"budget_mins"`
	RunMins    int `yaml:"run_mins"`
}

type rawGitHub struct {
	APIURL    string `yaml:"api_url"`
	AppID     int64  `yaml:"app_id"`
	KeyFile   string `yaml:"private_key_file"`
	SecretEnv string `yaml:"webhook_secret_env"`
	Timeout   int    `yaml:"timeout_secs"`
}

type rawHost struct {
	Label       string `yaml:"label"`
	Backend     string `yaml:"backend"`
	Workflow    string `yaml:"workflow"`
	ProgressDir string `yaml:"progress_dir"`
}

type rawSweep struct {
	EverySecs  int `yaml:"every_secs"`
	WindowSecs int `yaml:"window_secs"`
}

type rawDisp struct {
	ConfirmSecs int `yaml:"confirm_secs"`
	CheckSecs   int `yaml:"check_secs"`
}

var (
	labelRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	workflowRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,250}\.ya?ml$`)
	envRE      = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,127}$`)
)

// LoadSettings reads and checks a settings file. Errors name the file, line and key.
func LoadSettings(path string) (Settings, error) {
	data, err := readBounded(path, 1<<20)
	if err != nil {
		return Settings{}, fmt.Errorf("reading the server settings: %w", err)
	}
	return ParseSettings(data, path)
}

// ParseSettings parses settings strictly: an unknown key or a bad value is an error.
func ParseSettings(data []byte, name string) (Settings, error) {
	d := DefaultSettings()
	raw := rawSettings{
		Listen: d.Listen, Workers: d.Workers, Backlog: d.Backlog, Attempts: d.MaxAttempts,
		GitHub:   rawGitHub{APIURL: d.APIURL, SecretEnv: d.SecretEnv},
		Sweep:    rawSweep{EverySecs: int(d.SweepEvery / time.Second), WindowSecs: int(d.SweepWindow / time.Second)},
		Dispatch: rawDisp{ConfirmSecs: int(d.ConfirmAfter / time.Second), CheckSecs: int(d.CheckEvery / time.Second)},
		Keep:     int(d.Retention / (24 * time.Hour)),
		Stuck:    int(d.StuckAfter / time.Second),
		BudgetMB: int(d.BodyBudget >> 20),
		Compare:  rawCmp{BudgetMins: int(d.CompareBudget / time.Minute), RunMins: int(d.CompareRunTime / time.Minute)},
	}
	raw.GitHub.Timeout = int(d.APITimeout / time.Second)
	doc, err := yamlstrict.Decode(data, name, &raw)
	if err != nil {
		return Settings{}, err
	}
	var errs []error
	bad := func(path, format string, a ...any) { errs = append(errs, doc.Errorf(path, format, a...)) }
	if raw.Version != 1 {
		bad("version", "want 1, the only version of the server settings")
	}
	if _, _, err := net.SplitHostPort(raw.Listen); err != nil {
		bad("listen", "want host:port, for example 127.0.0.1:8080 (%v)", err)
	}
	if strings.TrimSpace(raw.Database) == "" {
		bad("database", "required: the SQLite file of the inbox and the queues, for example /var/lib/perfbot/perfbot.db")
	}
	if raw.GitHub.AppID <= 0 {
		bad("github.app_id", "required: the positive App id from the App's settings page")
	}
	if strings.TrimSpace(raw.GitHub.KeyFile) == "" {
		bad("github.private_key_file", "required: the PEM file downloaded from the App's settings page")
	}
	if !envRE.MatchString(raw.GitHub.SecretEnv) {
		bad("github.webhook_secret_env", "%q is not an environment variable name", raw.GitHub.SecretEnv)
	}
	if len(raw.Hosts) == 0 {
		bad("hosts", "list at least one GPU host: {label, backend, workflow}")
	}
	seen := map[string]bool{}
	hosts := make([]Host, 0, len(raw.Hosts))
	for i, h := range raw.Hosts {
		p := fmt.Sprintf("hosts.%d", i)
		if !labelRE.MatchString(h.Label) {
			bad(p+".label", "%q is not a runner label (letters, digits, '.', '_', '-')", h.Label)
		} else if seen[h.Label] {
			bad(p+".label", "%q is listed twice: each host is one queue", h.Label)
		}
		seen[h.Label] = true
		if !validBackend(h.Backend) {
			bad(p+".backend", "%q: want one of %s", h.Backend, strings.Join(command.Backends, ", "))
		}
		if !workflowRE.MatchString(h.Workflow) {
			bad(p+".workflow", "%q: want the workflow's file name under .github/workflows, for example perfbot.yml", h.Workflow)
		}
		if h.ProgressDir != "" && !validProgressDir(h.ProgressDir) {
			bad(p+".progress_dir", "%q: want an absolute, clean path of a folder (at most 1024 bytes, no control characters), for example /var/lib/perfbot-progress", h.ProgressDir)
		}
		hosts = append(hosts, Host{Label: h.Label, Backend: h.Backend, Workflow: h.Workflow, ProgressDir: h.ProgressDir})
	}
	pos := func(path string, v int) {
		if v <= 0 {
			bad(path, "must be > 0")
		}
	}
	pos("workers", raw.Workers)
	pos("backlog", raw.Backlog)
	pos("max_attempts", raw.Attempts)
	pos("sweep.every_secs", raw.Sweep.EverySecs)
	pos("sweep.window_secs", raw.Sweep.WindowSecs)
	pos("dispatch.check_secs", raw.Dispatch.CheckSecs)
	pos("retention_days", raw.Keep)
	if raw.Dispatch.ConfirmSecs < 0 {
		bad("dispatch.confirm_secs", "must be >= 0")
	}
	if raw.Workers > 256 {
		bad("workers", "at most 256")
	}
	pos("github.timeout_secs", raw.GitHub.Timeout)
	pos("stuck_secs", raw.Stuck)
	if raw.GitHub.Timeout > 3600 {
		bad("github.timeout_secs", "at most 3600")
	}
	if min := int(webhook.MinBodyBudget+(1<<20)-1) >> 20; raw.BudgetMB < min || raw.BudgetMB > 1<<14 {
		bad("body_budget_mb", "want %d to 16384: a 25 MB delivery must fit in the three quarters of it that large bodies may use", min)
	}
	if raw.Compare.BudgetMins < 1 || raw.Compare.BudgetMins > maxCompareMins {
		bad("compare.budget_mins", "want 1 to %d (a week): the longest a compare may be estimated to take", maxCompareMins)
	}
	if raw.Compare.RunMins < 1 || raw.Compare.RunMins > 24*60 {
		bad("compare.run_mins", "want 1 to 1440: the minutes of one measured run while the host has no finished run to measure it from")
	}
	if len(errs) > 0 {
		return Settings{}, errors.Join(errs...)
	}
	return Settings{
		Listen: raw.Listen, Database: raw.Database, APIURL: raw.GitHub.APIURL, AppID: raw.GitHub.AppID,
		KeyFile: raw.GitHub.KeyFile, SecretEnv: raw.GitHub.SecretEnv, Hosts: hosts,
		Workers: raw.Workers, Backlog: raw.Backlog, MaxAttempts: raw.Attempts,
		SweepEvery: secs(raw.Sweep.EverySecs), SweepWindow: secs(raw.Sweep.WindowSecs),
		ConfirmAfter: secs(raw.Dispatch.ConfirmSecs), CheckEvery: secs(raw.Dispatch.CheckSecs),
		Retention:  time.Duration(raw.Keep) * 24 * time.Hour,
		APITimeout: secs(raw.GitHub.Timeout), StuckAfter: secs(raw.Stuck), BodyBudget: int64(raw.BudgetMB) << 20,
		CompareBudget:  time.Duration(raw.Compare.BudgetMins) * time.Minute,
		CompareRunTime: time.Duration(raw.Compare.RunMins) * time.Minute,
	}, nil
}

// maxCompareMins bounds compare.budget_mins: a week.
const maxCompareMins = 7 * 24 * 60

// validProgressDir accepts an absolute, clean path without control characters.
func validProgressDir(p string) bool {
	if len(p) > 1024 || !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

func validBackend(b string) bool {
	for _, x := range command.Backends {
		if b == x {
			return true
		}
	}
	return false
}

// readBounded reads a regular file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s has %d bytes; at most %d are read", path, st.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s has more than %d bytes", path, limit)
	}
	return b, nil
}

// appCheckError says why checking the App with GitHub at start failed: GitHub refused
// the credentials (401, 403), GitHub could not be reached (a refused connection, a
// name that does not resolve, a timeout, a connection closed without an answer), or
// GitHub answered something else.
func appCheckError(set Settings, err error) error {
	host := set.APIURL
	if u, perr := url.Parse(set.APIURL); perr == nil && u.Host != "" {
		host = u.Host
	}
	var ae *gh.APIError
	var te *gh.TimeoutError
	var ne net.Error
	var errno syscall.Errno
	switch {
	case errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden):
		return fmt.Errorf("GitHub refused the App's credentials (github.app_id %d, github.private_key_file %s): %w", set.AppID, set.KeyFile, err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("checking the App with GitHub at %s: stopped: %w", host, err)
	case errors.As(err, &te) || errors.As(err, &ne) || errors.As(err, &errno) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		// net/http's own error for a connection the server closed; not exported.
		strings.Contains(err.Error(), "server closed idle connection"):
		return fmt.Errorf("network error: GitHub's API at %s could not be reached to check the App (github.api_url %s): %w; check the address, name resolution, proxy and firewall", host, set.APIURL, err)
	}
	return fmt.Errorf("checking the App with GitHub at %s (GET /app, github.api_url %s) failed: %w", host, set.APIURL, err)
}
