package action

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lablup/perfbot/internal/gittest"
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

// environ is the process environment with e's variables in place of its own: what a
// runner hands a step's processes.
func (e *stepEnv) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := e.vars[k]; !ours {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.vars)) {
		env = append(env, k+"="+e.vars[k])
	}
	return env
}

// runtime is a Runtime on the env e that prints nowhere.
func (e *stepEnv) runtime(t *testing.T) *Runtime {
	t.Helper()
	rt, err := NewRuntime(io.Discard, e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// runStep runs the action's step in the env e and returns what it printed.
func (e *stepEnv) runStep() (string, error) {
	var log bytes.Buffer
	_, err := run(context.Background(), Options{Stdout: &log, Getenv: e.getenv})
	return log.String(), err
}

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

// targetFiles are what the host jobs need in the target checkout beside the patcher's
// sources: the overlay's UPSTREAM, the config and the llama model folder.
func targetFiles(t *testing.T, config string) map[string]string {
	t.Helper()
	upstream, err := os.ReadFile(testfix.Path(t, "mlxcel-gfx1151", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"Cargo.toml":                            "[workspace]\nmembers = [\"src/lib/mlxcel-core\"]\n",
		".gitignore":                            "/target/\n",
		".github/perfbot.yml":                   config,
		"src/lib/mlx-cpp/patches-rocm/UPSTREAM": string(upstream),
		"models/mlx/Meta-Llama-3.1-8B-Instruct-4bit/config.json": `{"model_type": "llama", "num_hidden_layers": 32}` + "\n",
	}
}

// noCompiler is a compiler pattern that matches nothing: other builds on the test
// machine are not what the guard is tested for here.
const noCompiler = "perfbot-test-no-such-compiler"

// goBinary is the go command, and goEnv the environment it builds with, taken before
// any test puts the fake host's PATH and a fresh HOME in place (a HOME without the build
// cache would rebuild everything).
var (
	goBinary, _ = exec.LookPath("go")
	goEnv       = os.Environ()
)

// builtDir holds the one perfbot binary the tests build (TestMain makes and removes it).
var builtDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "perfbot-action-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builtDir = d
	// git in the test process (the checkout's, publishing's) sees no machine config;
	// goEnv was taken before, with the machine's caches.
	done := gittest.Isolate()
	code := m.Run()
	done()
	os.RemoveAll(d)
	os.Exit(code)
}

// builtPerfbot builds perfbot once for the whole test binary: linking it takes seconds,
// and a dozen tests each run it on a fake host. A failed build fails every test that
// asks, with the same output.
var builtPerfbot = sync.OnceValues(func() (string, error) {
	exe := filepath.Join(builtDir, "perfbot")
	cmd := exec.Command(goBinary, "build", "-o", exe, "../cmd/perfbot")
	cmd.Env = goEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building perfbot: %v\n%s", err, out)
	}
	return exe, nil
})

// buildPerfbot puts a perfbot binary in bin: the fake bench synthesizes its run with
// `perfbot synth`, found on PATH. bin gets a hard link to the one built binary (bin and
// the binary's folder are both under the temp folder the test binary started with),
// not a symlink: what runs is a file of bin's own, as on a host.
func buildPerfbot(t *testing.T, bin string) {
	t.Helper()
	exe, err := builtPerfbot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(exe, filepath.Join(bin, "perfbot")); err != nil {
		t.Fatal(err)
	}
}
