// Package host owns the one seam between perfbot and the machine it runs on: reading
// files by their host-absolute path (/proc/123/stat, /sys/class/kfd/kfd/proc,
// /opt/rocm/.info/version) under a root, and running commands found on a configurable
// PATH. Tests and the demo point it at a fake root and fake tools that speak the real
// formats; Local is the real machine. It must stay small and know nothing of GPUs,
// guards or reports: those live in the packages that use it.
package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Host is the machine as perfbot sees it. Paths are host-absolute; an implementation
// maps them under its root.
type Host interface {
	// Root is the real directory that host path "/" maps to.
	Root() string
	ReadFile(p string) ([]byte, error)
	ReadDir(p string) ([]os.DirEntry, error)
	// Glob matches a host-absolute pattern and returns host-absolute paths.
	Glob(pattern string) ([]string, error)
	// Command prepares name (looked up on the host's PATH) with its environment set;
	// a failed lookup shows up as the returned command's Err, like exec.Command.
	Command(ctx context.Context, name string, args ...string) *exec.Cmd
	LookPath(name string) (string, error)
}

// Machine is a Host rooted at a directory with its own PATH and environment.
type Machine struct {
	root string
	path []string
	env  []string
}

// Local is the real machine: root "/", the process's PATH and environment.
func Local() *Machine {
	return New("/", os.Getenv("PATH"), os.Environ())
}

// New returns a host whose files live under root and whose commands are looked up
// on pathList (colon-separated, as in $PATH). env is the base environment of the
// commands it starts; its PATH entry is replaced by pathList so that tools which run
// other tools find the same ones.
func New(root, pathList string, env []string) *Machine {
	var dirs []string
	for _, d := range filepath.SplitList(pathList) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	e := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			e = append(e, kv)
		}
	}
	e = append(e, "PATH="+strings.Join(dirs, string(filepath.ListSeparator)))
	return &Machine{root: filepath.Clean(root), path: dirs, env: e}
}

// EnvValue is the value of name in an environment list: the last entry, as exec takes
// it; "" when it has none.
func EnvValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// Root is the directory that host path "/" maps to.
func (m *Machine) Root() string { return m.root }

// Env returns a copy of the environment commands are started with.
func (m *Machine) Env() []string { return append([]string(nil), m.env...) }

// Real maps a host-absolute path to the real path under the root.
func (m *Machine) Real(p string) (string, error) {
	return Real(m, p)
}

// Real maps a host-absolute path to the real path under h's root. Relative paths are
// refused: a host path that depends on the working directory is a bug.
func Real(h Host, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("host path %q is not absolute", p)
	}
	root := h.Root()
	if root == "/" {
		return filepath.Clean(p), nil
	}
	return filepath.Join(root, p), nil
}

// ReadFile reads a host file.
func (m *Machine) ReadFile(p string) ([]byte, error) {
	r, err := m.Real(p)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(r)
}

// ReadDir lists a host directory.
func (m *Machine) ReadDir(p string) ([]os.DirEntry, error) {
	r, err := m.Real(p)
	if err != nil {
		return nil, err
	}
	return os.ReadDir(r)
}

// Glob matches a host-absolute pattern under the root.
func (m *Machine) Glob(pattern string) ([]string, error) {
	r, err := m.Real(pattern)
	if err != nil {
		return nil, err
	}
	matches, err := filepath.Glob(r)
	if err != nil || m.root == "/" {
		return matches, err
	}
	out := make([]string, 0, len(matches))
	for _, mt := range matches {
		rel, err := filepath.Rel(m.root, mt)
		if err != nil {
			return nil, fmt.Errorf("mapping %s back to a host path: %w", mt, err)
		}
		out = append(out, "/"+filepath.ToSlash(rel))
	}
	return out, nil
}

// LookPath finds an executable on the host's PATH. A name with a slash is taken as is.
func (m *Machine) LookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", &exec.Error{Name: name, Err: err}
		}
		return name, nil
	}
	for _, d := range m.path {
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// Command prepares a command looked up on the host's PATH, with the host's environment.
func (m *Machine) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	p, err := m.LookPath(name)
	if err != nil {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Err = err
		cmd.Env = m.Env()
		return cmd
	}
	cmd := exec.CommandContext(ctx, p, args...)
	// exec.Command would rewrite Path from a relative lookup; keep the name as given
	// in argv[0] so tools that look at their own name behave as on the host.
	cmd.Args[0] = name
	cmd.Env = m.Env()
	return cmd
}
