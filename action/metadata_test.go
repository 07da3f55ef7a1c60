package action

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lablup/perfbot/internal/testfix"
	"gopkg.in/yaml.v3"
)

// actionMeta is action.yml as GitHub reads it (docs: metadata syntax for GitHub
// Actions), kept ordered where order matters for the checks.
type actionMeta struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Inputs      yaml.Node
	Outputs     yaml.Node
	Runs        struct {
		Using string     `yaml:"using"`
		Image string     `yaml:"image"`
		Main  string     `yaml:"main"`
		Steps []metaStep `yaml:"steps"`
	} `yaml:"runs"`
}

type metaStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	Uses  string            `yaml:"uses"`
	Env   map[string]string `yaml:"env"`
}

type metaInput struct {
	Description string `yaml:"description"`
	Required    *bool  `yaml:"required"`
	Default     any    `yaml:"default"`
}

type metaOutput struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

// ordered decodes a mapping node into its keys, in order, and their values.
func ordered[T any](t *testing.T, n yaml.Node) ([]string, map[string]T) {
	t.Helper()
	var keys []string
	vals := map[string]T{}
	if n.Kind == 0 {
		return nil, vals
	}
	if n.Kind != yaml.MappingNode {
		t.Fatalf("line %d: want a mapping", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var v T
		if err := n.Content[i+1].Decode(&v); err != nil {
			t.Fatalf("line %d: %v", n.Content[i].Line, err)
		}
		keys = append(keys, n.Content[i].Value)
		vals[n.Content[i].Value] = v
	}
	return keys, vals
}

// checkMeta applies the metadata rules every action file must meet: name, description,
// runs.using with what that kind needs, every input and output described, a
// composite's outputs taken from step outputs and its run steps with a shell.
func checkMeta(t *testing.T, file string) (actionMeta, []string, map[string]metaInput, []string, map[string]metaOutput) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m actionMeta
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	base := filepath.Base(file)
	if strings.TrimSpace(m.Name) == "" || strings.TrimSpace(m.Description) == "" {
		t.Errorf("%s: name and description are required", base)
	}
	inNames, inputs := ordered[metaInput](t, m.Inputs)
	for _, k := range inNames {
		if strings.TrimSpace(inputs[k].Description) == "" {
			t.Errorf("%s: input %s has no description", base, k)
		}
	}
	outNames, outputs := ordered[metaOutput](t, m.Outputs)
	for _, k := range outNames {
		if strings.TrimSpace(outputs[k].Description) == "" {
			t.Errorf("%s: output %s has no description", base, k)
		}
	}
	switch m.Runs.Using {
	case "docker":
		if m.Runs.Image == "" {
			t.Errorf("%s: a docker action needs runs.image", base)
		}
	case "node20", "node24":
		if m.Runs.Main == "" {
			t.Errorf("%s: a node action needs runs.main", base)
		}
	case "composite":
		ids := map[string]bool{}
		for i, st := range m.Runs.Steps {
			if (st.Run == "") == (st.Uses == "") {
				t.Errorf("%s: step %d needs run or uses", base, i)
			}
			if st.Run != "" && st.Shell == "" {
				t.Errorf("%s: run step %d needs a shell", base, i)
			}
			ids[st.ID] = st.ID != ""
		}
		valueRE := regexp.MustCompile(`^\$\{\{ steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+) \}\}$`)
		for _, k := range outNames {
			sm := valueRE.FindStringSubmatch(outputs[k].Value)
			if sm == nil || !ids[sm[1]] {
				t.Errorf("%s: output %s is not a step output of a step of the action: %q", base, k, outputs[k].Value)
			}
		}
	default:
		t.Errorf("%s: runs.using %q is not docker, node20, node24 or composite", base, m.Runs.Using)
	}
	return m, inNames, inputs, outNames, outputs
}

// The real action files of other projects meet the same rules the test applies to
// perfbot's: the checker reads real shapes (inputs with and without defaults, a
// docker action, a node action).
func TestMetadataRulesAcceptRealActions(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(testfix.Path(t, "github", "actions-metadata", "*.action.yml"))
	if len(files) < 2 {
		t.Fatalf("real action files: %v", files)
	}
	for _, f := range files {
		checkMeta(t, f)
	}
}

// action.yml: the inputs and outputs of docs/action.md, every input handed to perfbot
// through env (never through the script), every output wired to perfbot's step.
func TestActionMetadata(t *testing.T) {
	t.Parallel()
	root := testfix.RepoRoot(t)
	m, inNames, inputs, outNames, outputs := checkMeta(t, filepath.Join(root, "action.yml"))
	if diff := cmp.Diff(InputNames, inNames); diff != "" {
		t.Errorf("inputs (-perfbot reads +action.yml):\n%s", diff)
	}
	if diff := cmp.Diff(OutputNames, outNames); diff != "" {
		t.Errorf("outputs (-perfbot writes +action.yml):\n%s", diff)
	}
	if m.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", m.Runs.Using)
	}
	if r := inputs["job"].Required; r == nil || !*r {
		t.Errorf("input job must be required")
	}
	for _, k := range inNames[1:] {
		if r := inputs[k].Required; r == nil || *r {
			t.Errorf("input %s must say required: false", k)
		}
	}
	var run *metaStep
	for i := range m.Runs.Steps {
		if m.Runs.Steps[i].ID == "run" {
			run = &m.Runs.Steps[i]
		}
	}
	if run == nil || !strings.Contains(run.Run, "action") {
		t.Fatalf("no step with id run that runs `perfbot action`")
	}
	for _, k := range inNames {
		env := "INPUT_" + strings.ToUpper(k)
		if got := run.Env[env]; got != "${{ inputs."+k+" }}" {
			t.Errorf("input %s reaches perfbot as %s=%q, want ${{ inputs.%s }}", k, env, got, k)
		}
	}
	for _, k := range outNames {
		if want := "${{ steps.run.outputs." + k + " }}"; outputs[k].Value != want {
			t.Errorf("output %s = %q, want %q", k, outputs[k].Value, want)
		}
	}
	for _, st := range m.Runs.Steps {
		if strings.Contains(st.Run, "${{") {
			t.Errorf("step %s expands an expression inside its script: pass it through env", st.Name)
		}
	}
}

// No workflow interpolates an expression into a run: script; values travel by env.
func TestWorkflowScriptsTakeNoExpressions(t *testing.T) {
	t.Parallel()
	root := testfix.RepoRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "examples", "workflows", "*.yml"))
	more, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	files = append(files, more...)
	if len(files) < 3 {
		t.Fatalf("workflows: %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					Name string `yaml:"name"`
					Run  string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for name, j := range wf.Jobs {
			for _, st := range j.Steps {
				if strings.Contains(st.Run, "${{") {
					t.Errorf("%s: job %s step %q expands an expression inside its script", filepath.Base(f), name, st.Name)
				}
			}
		}
	}
}

// The README documents every input and output, and its example workflow is byte for
// byte the file the act test runs.
func TestReadmeDocumentsTheAction(t *testing.T) {
	t.Parallel()
	root := testfix.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "action.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	if i := strings.Index(section, "\n## The GitHub Action\n"); i >= 0 {
		section = section[i:]
		if j := strings.Index(section[1:], "\n## "); j >= 0 {
			section = section[:j+1]
		}
	} else {
		t.Fatal("README has no section \"The GitHub Action\"")
	}
	tables := func(md string) []string {
		var rows []string
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "| `") {
				rows = append(rows, strings.SplitN(line, " | ", 2)[0])
			}
		}
		return rows
	}
	for what, names := range map[string][]string{"input": InputNames, "output": OutputNames} {
		for _, n := range names {
			cell := "`" + n + "`"
			if !slices.ContainsFunc(tables(section), func(first string) bool { return strings.Contains(first, cell) }) {
				t.Errorf("README's Action section has no table row for the %s %s", what, n)
			}
			if !slices.ContainsFunc(tables(string(doc)), func(first string) bool { return first == "| "+cell }) {
				t.Errorf("docs/action.md has no table row for the %s %s", what, n)
			}
		}
	}
	wf, err := os.ReadFile(filepath.Join(root, "examples", "workflows", "perfbot-profile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	const open, end = "\n```yaml\n", "\n```\n"
	i := strings.Index(section, open)
	if i < 0 {
		t.Fatal("README's Action section has no yaml example")
	}
	example := section[i+len(open):]
	j := strings.Index(example, end)
	if j < 0 {
		t.Fatal("README's yaml example is not closed")
	}
	if diff := cmp.Diff(string(wf), example[:j+1]); diff != "" {
		t.Errorf("README's example differs from examples/workflows/perfbot-profile.yml (-file +README):\n%s", diff)
	}
}
