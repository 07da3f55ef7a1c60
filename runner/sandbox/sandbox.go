package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lablup/perfbot/runner/host"
	"github.com/lablup/perfbot/runner/proc"
)

// The host's settings, read from perfbot's environment (the runner service's), never
// from the repository: the pinned commit's config is what a pull request edits.
const (
	// EnvMode turns the sandbox on: "bwrap"; "off" or unset runs commands as they are.
	EnvMode = "PERFBOT_SANDBOX"
	// EnvReadOnly lists more folders (or files) the sandbox shows read-only, separated
	// by colons: the toolchain (~/.cargo, ~/.rustup) and the model folders.
	EnvReadOnly = "PERFBOT_SANDBOX_RO"
	// EnvPassEnv lists more environment variables passed in, separated by commas: a
	// name, or a prefix ending in `*`.
	EnvPassEnv = "PERFBOT_SANDBOX_ENV"
	// EnvBwrap is the bwrap binary; unset means bwrap on perfbot's PATH.
	EnvBwrap = "PERFBOT_SANDBOX_BWRAP"
)

// Mode says whether commands run sandboxed.
type Mode string

// The modes of EnvMode.
const (
	Off   Mode = "off"
	Bwrap Mode = "bwrap"
)

// Settings are the host's sandbox settings. The zero value is Off.
type Settings struct {
	Mode     Mode
	Bwrap    string   // absolute path of bwrap
	ReadOnly []string // absolute, cleaned
	PassEnv  []string // names, or prefixes ending in *
	// nestedUserns is set when this bwrap knows --disable-userns (0.8 and later).
	nestedUserns bool
}

// On reports a sandbox that is on.
func (s Settings) On() bool { return s.Mode == Bwrap }

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)

// probeTimeout bounds the start-up probe of bwrap.
const probeTimeout = 30 * time.Second

// FromEnv reads the host's settings (getenv nil means os.Getenv). With the sandbox on,
// it finds bwrap and runs it once: a missing bwrap, a read-only folder that does not
// exist, or a kernel that refuses unprivileged user namespaces is an error here, before
// any job starts, never a silent run without the sandbox.
func FromEnv(getenv func(string) string) (Settings, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch m := strings.TrimSpace(getenv(EnvMode)); m {
	case "", string(Off):
		return Settings{Mode: Off}, nil
	case string(Bwrap):
	default:
		return Settings{}, fmt.Errorf("%s=%q: want %s or %s", EnvMode, m, Off, Bwrap)
	}
	s := Settings{Mode: Bwrap}
	if b := getenv(EnvBwrap); b != "" {
		if !filepath.IsAbs(b) {
			return Settings{}, fmt.Errorf("%s=%q: give the absolute path of bwrap", EnvBwrap, b)
		}
		s.Bwrap = b
	} else {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			return Settings{}, fmt.Errorf("%s=%s, but bwrap is not on the PATH (%v): install bubblewrap (apt-get install bubblewrap) or set %s", EnvMode, Bwrap, err, EnvBwrap)
		}
		if s.Bwrap, err = filepath.Abs(p); err != nil {
			return Settings{}, err
		}
	}
	if fi, err := os.Stat(s.Bwrap); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return Settings{}, fmt.Errorf("%s=%s, but %s is not an executable file: install bubblewrap (apt-get install bubblewrap)", EnvMode, Bwrap, s.Bwrap)
	}
	home := filepath.Clean(getenv("HOME"))
	for _, p := range filepath.SplitList(getenv(EnvReadOnly)) {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return Settings{}, fmt.Errorf("%s: %q is not an absolute path", EnvReadOnly, p)
		}
		p = filepath.Clean(p)
		if _, err := os.Stat(p); err != nil {
			return Settings{}, fmt.Errorf("%s: %v: list folders that exist on this host", EnvReadOnly, err)
		}
		if filepath.IsAbs(home) && home != "/" && within(p, home) {
			return Settings{}, fmt.Errorf("%s: %s holds the home folder %s, which the sandbox hides: list the folders below it (~/.cargo, ~/.rustup)", EnvReadOnly, p, home)
		}
		s.ReadOnly = append(s.ReadOnly, p)
	}
	for _, n := range strings.Split(getenv(EnvPassEnv), ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !envNameRE.MatchString(n) {
			return Settings{}, fmt.Errorf("%s: %q is not a variable name (NAME, or PREFIX_* for a prefix)", EnvPassEnv, n)
		}
		s.PassEnv = append(s.PassEnv, n)
	}
	if err := s.probe(); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// probe runs bwrap once the way a job will, and learns whether it knows
// --disable-userns.
func (s *Settings) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	run := func(argv ...string) (string, error) {
		var out bytes.Buffer
		cmd := exec.Command(s.Bwrap, argv...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		cmd.Stdout, cmd.Stderr = &out, &out
		res, err := proc.Run(ctx, cmd, time.Second)
		text := strings.TrimSpace(out.String())
		if len(text) > 2000 {
			text = text[:2000]
		}
		if err == nil && (res.Stopped || res.Status.ShellCode() != 0) {
			err = fmt.Errorf("%s", res.Status)
		}
		return text, err
	}
	help, _ := run("--help")
	s.nestedUserns = strings.Contains(help, "--disable-userns")
	argv := []string{"--unshare-user", "--unshare-net", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--ro-bind", "/", "/"}
	if s.nestedUserns {
		argv = append(argv, "--disable-userns")
	}
	out, err := run(append(argv, "--", s.Bwrap, "--version")...)
	if err != nil {
		return fmt.Errorf("%s=%s, but %s cannot make a sandbox here (%v: %s): it needs unprivileged user namespaces; see docs/runner.md (Sandbox) for the sysctl and AppArmor checks",
			EnvMode, Bwrap, s.Bwrap, err, out)
	}
	return nil
}

// systemDirs are shown read-only (or as the symbolic links they are) in every sandbox.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// defaultReadOnly are shown read-only when they exist: ROCm.
var defaultReadOnly = []string{"/opt/rocm"}

// devices are bound in when they exist: the GPU.
var devices = []string{"/dev/kfd", "/dev/dri"}

// Sandbox is one job's sandbox: the checkout it runs in and the folders it may write.
// A nil *Sandbox runs commands as they are.
type Sandbox struct {
	set      Settings
	dir      string
	writable []string
}

// New prepares the sandbox of one job, or returns nil when the settings say off. dir
// is the checkout: shown read-only, and the commands' working folder. writable are the
// only folders the commands may write (the cargo target dir, the traces root); each is
// created when missing, and one inside the checkout must not be, or pass through, a
// symbolic link (the checkout is the pinned commit's: target -> ~/.cargo/bin must not
// become writable).
func New(s Settings, dir string, writable ...string) (*Sandbox, error) {
	if !s.On() {
		return nil, nil
	}
	if s.Bwrap == "" {
		return nil, errors.New("sandbox settings without bwrap: read them with sandbox.FromEnv")
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("the sandbox's checkout %q is not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the sandbox's checkout %s is not a folder", dir)
	}
	sb := &Sandbox{set: s, dir: dir}
	for _, w := range writable {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("the sandbox's writable folder %q is not an absolute path", w)
		}
		w = filepath.Clean(w)
		if err := writableDir(dir, w); err != nil {
			return nil, err
		}
		sb.writable = append(sb.writable, w)
	}
	return sb, nil
}

// writableDir makes w a real folder. Inside the checkout every step below it is
// checked: created when missing, refused when a symbolic link or a file.
func writableDir(checkout, w string) error {
	if !within(checkout, w) {
		if err := os.MkdirAll(w, 0o755); err != nil {
			return fmt.Errorf("creating the sandbox's writable folder: %w", err)
		}
		if fi, err := os.Lstat(w); err != nil || !fi.IsDir() {
			return fmt.Errorf("the sandbox's writable folder %s is not a folder", w)
		}
		return nil
	}
	rel, _ := filepath.Rel(checkout, w)
	cur := checkout
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := os.Mkdir(cur, 0o755); err != nil {
				return fmt.Errorf("creating the sandbox's writable folder: %w", err)
			}
		case err != nil:
			return fmt.Errorf("checking the sandbox's writable folder: %w", err)
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s in the checkout is a symbolic link: the sandbox makes it writable, so it must be a real folder (remove it)", cur)
		case !fi.IsDir():
			return fmt.Errorf("%s in the checkout is not a folder: the sandbox makes it writable (remove it)", cur)
		}
	}
	return nil
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	if root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

func withinAny(roots []string, p string) bool {
	for _, r := range roots {
		if within(r, p) {
			return true
		}
	}
	return false
}

// Dir is the checkout the sandbox shows and runs commands in.
func (sb *Sandbox) Dir() string { return sb.dir }

// Visible reports whether the file or folder p (absolute) is inside the sandbox as it
// is outside: in the checkout, a read-only folder or a writable one, symbolic links
// resolved. A model folder that is not visible cannot be read by the bench.
func (sb *Sandbox) Visible(p string) bool {
	if sb == nil {
		return true
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	roots := []string{sb.dir}
	if r, err := filepath.EvalSymlinks(sb.dir); err == nil {
		roots = append(roots, r)
	}
	for _, ro := range append(append([]string(nil), sb.set.ReadOnly...), sb.writable...) {
		roots = append(roots, ro)
		if r, err := filepath.EvalSymlinks(ro); err == nil {
			roots = append(roots, r)
		}
	}
	return withinAny(roots, real)
}

// Wrap turns cmd, prepared by runner/host or exec.Command and not started, into the
// same command under bwrap: it runs in cmd.Dir (the checkout when empty) with a clean
// environment (Env). Start it through runner/proc as any other command. A command
// whose lookup failed (cmd.Err) is left as it is.
func (sb *Sandbox) Wrap(cmd *exec.Cmd) error {
	if sb == nil || cmd.Err != nil {
		return nil
	}
	if cmd.Process != nil {
		return errors.New("sandbox: command already started")
	}
	chdir := sb.dir
	if cmd.Dir != "" {
		chdir = filepath.Clean(cmd.Dir)
		if !filepath.IsAbs(chdir) {
			return fmt.Errorf("sandbox: the command's folder %q is not absolute", cmd.Dir)
		}
	}
	path := cmd.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(chdir, path)
	}
	base := cmd.Env
	if base == nil {
		base = os.Environ()
	}
	env := sb.Env(base)
	argv := append(sb.args(env, chdir), "--", path)
	if len(cmd.Args) > 1 {
		argv = append(argv, cmd.Args[1:]...)
	}
	cmd.Path = sb.set.Bwrap
	cmd.Args = append([]string{"bwrap"}, argv...)
	cmd.Env = env
	return nil
}

// passed are the variables a sandboxed command gets from the host's environment:
// the locale, the toolchain's and ROCm's settings; nothing else (no tokens).
var (
	passedNames = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM",
		"LD_LIBRARY_PATH", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "MODELS_DIR"}
	passedPrefixes = []string{"LC_", "HIP_", "HSA_", "ROCR_", "ROCM_", "HCC_", "AMD_", "MLXCEL_", "RUST_", "ROCPROF"}
)

// Env is the environment a sandboxed command gets from base: the variables it needs
// (passed, and the host's PERFBOT_SANDBOX_ENV), TMPDIR=/tmp (a private tmpfs) and
// CARGO_NET_OFFLINE=true (there is no network: cargo says so at once instead of
// retrying).
func (sb *Sandbox) Env(base []string) []string {
	var out []string
	for _, kv := range base {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "TMPDIR" || name == "CARGO_NET_OFFLINE" {
			continue
		}
		if sb.passes(name) {
			out = append(out, kv)
		}
	}
	return append(out, "TMPDIR=/tmp", "CARGO_NET_OFFLINE=true")
}

func (sb *Sandbox) passes(name string) bool {
	if slices.Contains(passedNames, name) {
		return true
	}
	for _, p := range passedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, p := range sb.set.PassEnv {
		if pre, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, pre) || p == name {
			return true
		}
	}
	return false
}

// args are bwrap's options for a command running in chdir with env.
func (sb *Sandbox) args(env []string, chdir string) []string {
	a := []string{
		// No pid namespace: the guard, the KFD proc dir and a shell guard inside all
		// speak host pids.
		"--unshare-user", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
	}
	if sb.set.nestedUserns {
		a = append(a, "--disable-userns")
	}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", t, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	// The host's /proc: the user namespace keeps other processes' environ, fds and
	// roots out of reach; a new procfs would need a pid namespace.
	a = append(a, "--ro-bind", "/sys", "/sys", "--ro-bind", "/proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm")
	for _, d := range devices {
		if _, err := os.Stat(d); err == nil {
			a = append(a, "--dev-bind", d, d)
		}
	}
	a = append(a, "--tmpfs", "/tmp")
	hidden := []string{"/tmp"}
	if home := filepath.Clean(host.EnvValue(env, "HOME")); filepath.IsAbs(home) && home != "/" && !withinAny(systemDirs, home) {
		a = append(a, "--tmpfs", home)
		hidden = append(hidden, home)
	}
	seen := map[string]bool{}
	bind := func(p string) {
		if !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		for _, dst := range []string{real, p} {
			// A folder holding /tmp or the home folder would show what they hide.
			if seen[dst] || withinAny(systemDirs, dst) || slices.ContainsFunc(hidden, func(h string) bool { return within(dst, h) }) {
				continue
			}
			seen[dst] = true
			a = append(a, "--ro-bind", real, dst)
		}
	}
	for _, p := range defaultReadOnly {
		bind(p)
	}
	for _, p := range sb.set.ReadOnly {
		bind(p)
	}
	for _, p := range filepath.SplitList(host.EnvValue(env, "PATH")) {
		bind(p)
	}
	bind(sb.dir)
	for _, w := range sb.writable {
		a = append(a, "--bind", w, w)
	}
	return append(a, "--chdir", chdir)
}

// Host is h with every command it prepares wrapped in the sandbox (Wrap), for the
// commands the guard prepares itself; files are read from h as they are. A nil
// Sandbox returns h.
func (sb *Sandbox) Host(h host.Host) host.Host {
	if sb == nil {
		return h
	}
	return &sandboxed{Host: h, sb: sb}
}

type sandboxed struct {
	host.Host
	sb *Sandbox
}

// Command prepares name on the host's PATH, then wraps it. It runs in the checkout
// whatever the caller sets as cmd.Dir afterwards (the guard sets the checkout too).
func (s *sandboxed) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := s.Host.Command(ctx, name, args...)
	if err := s.sb.Wrap(cmd); err != nil {
		cmd.Err = err
	}
	return cmd
}
