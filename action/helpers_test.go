package action

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lablup/perfbot/internal/testfix"
)

// workflowCmd is one workflow command as the runner reads it from the log.
type workflowCmd struct {
	Name  string
	Props map[string]string
	Msg   string
}

var commandRE = regexp.MustCompile(`^::([A-Za-z0-9_-]+)( [^:]*)?::(.*)$`)

// commands reads the log as the runner does: a line whose trimmed start is
// `::name props::message` is a command, unless `::stop-commands::TOKEN` switched
// commands off until `::TOKEN::`. Messages and properties are unescaped.
func commands(t *testing.T, log string) []workflowCmd {
	t.Helper()
	var out []workflowCmd
	resume := ""
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimRight(strings.TrimLeft(line, " \t"), "\r")
		m := commandRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if resume != "" {
			if m[1] == resume {
				resume = ""
			}
			continue
		}
		c := workflowCmd{Name: m[1], Props: map[string]string{}, Msg: unescape(m[3], false)}
		if p := strings.TrimSpace(m[2]); p != "" {
			for _, kv := range strings.Split(p, ",") {
				k, v, _ := strings.Cut(kv, "=")
				c.Props[k] = unescape(v, true)
			}
		}
		if c.Name == "stop-commands" {
			resume = c.Msg
		}
		out = append(out, c)
	}
	if resume != "" {
		t.Errorf("the log leaves workflow commands switched off (token %s)", resume)
	}
	return out
}

func unescape(s string, prop bool) string {
	r := []string{"%0D", "\r", "%0A", "\n"}
	if prop {
		r = append(r, "%3A", ":", "%2C", ",")
	}
	s = strings.NewReplacer(r...).Replace(s)
	return strings.ReplaceAll(s, "%25", "%")
}

// readOutputs parses an output file as the runner does: `name=value` lines, and
// `name<<DELIM` blocks whose value ends at the line DELIM.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			closed := false
			for sc.Scan() {
				if sc.Text() == delim {
					closed = true
					break
				}
				val = append(val, sc.Text())
			}
			if !closed {
				t.Fatalf("output %s: no closing delimiter %s", name, delim)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("output file line %q is neither name=value nor name<<DELIM", line)
		}
		out[name] = val
	}
	return out
}

// stepEnv is a step's runtime files and environment, in a temp dir.
type stepEnv struct {
	dir     string
	vars    map[string]string
	output  string
	summary string
}

func newStepEnv(t *testing.T, inputs map[string]string) *stepEnv {
	t.Helper()
	dir := t.TempDir()
	e := &stepEnv{dir: dir, vars: map[string]string{}, output: filepath.Join(dir, "output.txt"), summary: filepath.Join(dir, "summary.md")}
	for _, f := range []string{e.output, e.summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.vars["GITHUB_OUTPUT"] = e.output
	e.vars["GITHUB_STEP_SUMMARY"] = e.summary
	e.vars["RUNNER_TEMP"] = filepath.Join(dir, "runner-temp")
	for k, v := range inputs {
		e.vars["INPUT_"+strings.ToUpper(k)] = v
	}
	return e
}

func (e *stepEnv) getenv(k string) string { return e.vars[k] }

func (e *stepEnv) summaryText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(e.summary)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// names lists the commands' names with their title, for messages.
func names(cs []workflowCmd) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s(%s) ", c.Name, c.Props["title"])
	}
	return b.String()
}

// git runs git for the test's setup with a fixed identity.
func gitT(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(env, "GIT_AUTHOR_NAME=Maintainer", "GIT_AUTHOR_EMAIL=maintainer@example.com",
		"GIT_COMMITTER_NAME=Maintainer", "GIT_COMMITTER_EMAIL=maintainer@example.com")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// newTarget lays out the mlxcel checkout the host jobs run in: the patcher's upstream
// sources, the overlay's UPSTREAM, the config and the llama model folder, committed and
// cloned from a bare remote standing in for GitHub.
func newTarget(t *testing.T, env []string, root, config string) (repo, bare, base string) {
	t.Helper()
	seed := filepath.Join(root, "seed")
	gitT(t, env, root, "init", "--quiet", "--initial-branch=main", seed)
	patchData := filepath.Join(testfix.RepoRoot(t), "runner", "patch", "testdata")
	for _, src := range []string{filepath.Join(patchData, "common"), filepath.Join(patchData, "variants", "upstream", "repo")} {
		if err := copyTree(src, seed); err != nil {
			t.Fatal(err)
		}
	}
	upstream, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"Cargo.toml":                            "[workspace]\nmembers = [\"src/lib/mlxcel-core\"]\n",
		".gitignore":                            "/target/\n",
		".github/perfbot.yml":                   config,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM": string(upstream),
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/config.json": `{"model_type": "llama", "num_hidden_layers": 32}` + "\n",
	} {
		p := filepath.Join(seed, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, env, seed, "add", "-A")
	gitT(t, env, seed, "commit", "--quiet", "-m", "mlxcel at the commit to profile")
	base = gitT(t, env, seed, "rev-parse", "HEAD")
	bare = filepath.Join(root, "remote.git")
	gitT(t, env, root, "clone", "--quiet", "--bare", seed, bare)
	repo = filepath.Join(root, "mlxcel")
	gitT(t, env, root, "clone", "--quiet", bare, repo)
	return repo, bare, base
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}

// noCompiler is a compiler pattern that matches nothing: other builds on the test
// machine are not what the guard is tested for here.
const noCompiler = "perfbot-test-no-such-compiler"

// fakeRoot copies the fake gfx1151 host's root (testdata/fakehost/root) with the real
// /proc for the guard and an empty KFD proc dir where the guard looks by default.
func fakeRoot(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "root")
	if err := copyTree(filepath.Join(testfix.RepoRoot(t), "testdata", "fakehost", "root"), root); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "proc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc", filepath.Join(root, "proc")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "sys", "class", "kfd", "kfd", "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// fakePath puts the fake host's tools first, then the given folders, then the system's.
func fakePath(t *testing.T, dirs ...string) string {
	t.Helper()
	return strings.Join(append(append([]string{filepath.Join(testfix.RepoRoot(t), "testdata", "fakehost", "bin")}, dirs...), "/usr/local/bin", "/usr/bin", "/bin"), ":")
}

// buildPerfbot puts a perfbot binary in bin: the fake bench synthesizes its run with
// `perfbot synth`, found on PATH.
func buildPerfbot(t *testing.T, bin string) {
	t.Helper()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "perfbot"), "../cmd/perfbot").CombinedOutput(); err != nil {
		t.Fatalf("building perfbot: %v\n%s", err, out)
	}
}
