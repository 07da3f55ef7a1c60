package fakegithub

import (
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// workflow is what the fake reads of a workflow file to take a dispatch as GitHub does:
// its declared workflow_dispatch inputs and its run-name.
type workflow struct {
	RunName string `yaml:"run-name"`
	On      struct {
		Dispatch *struct {
			Inputs map[string]struct {
				Required bool   `yaml:"required"`
				Default  string `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"workflow_dispatch"`
	} `yaml:"on"`
}

// maxDispatchInputs is GitHub's limit on a workflow_dispatch's inputs.
const maxDispatchInputs = 25

// readWorkflow reads .github/workflows/<file> at sha from the repository's git.
func readWorkflow(r *Repo, sha, file string) (*workflow, error) {
	if strings.ContainsAny(file, "/\\") || strings.HasPrefix(file, ".") {
		return nil, fail(http.StatusNotFound, "Not Found")
	}
	data, err := exec.Command("git", "--git-dir", r.GitDir, "cat-file", "blob", sha+":.github/workflows/"+file).Output()
	if err != nil {
		return nil, fail(http.StatusNotFound, "Not Found: no workflow .github/workflows/%s at %s", file, sha)
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		return nil, fail(http.StatusUnprocessableEntity, "the workflow .github/workflows/%s is not valid YAML: %v", file, err)
	}
	if w.On.Dispatch == nil {
		return nil, fail(http.StatusUnprocessableEntity, "Workflow does not have 'workflow_dispatch' trigger")
	}
	return &w, nil
}

// checkInputs applies the workflow's input declarations to a dispatch's inputs, as
// GitHub does: unknown inputs and missing required ones are refused, defaults filled.
func (w *workflow) checkInputs(in map[string]string) (map[string]string, error) {
	if len(in) > maxDispatchInputs {
		return nil, fail(http.StatusUnprocessableEntity, "you may only define up to %d inputs for a workflow_dispatch event", maxDispatchInputs)
	}
	var unexpected []string
	for k := range in {
		if _, ok := w.On.Dispatch.Inputs[k]; !ok {
			unexpected = append(unexpected, k)
		}
	}
	if len(unexpected) > 0 {
		sort.Strings(unexpected)
		return nil, fail(http.StatusUnprocessableEntity, "Unexpected inputs provided: %q", unexpected)
	}
	out := map[string]string{}
	for name, decl := range w.On.Dispatch.Inputs {
		v, ok := in[name]
		if !ok || v == "" {
			if decl.Required && !ok {
				return nil, fail(http.StatusUnprocessableEntity, "Required input '%s' not provided", name)
			}
			if !ok {
				v = decl.Default
			}
		}
		out[name] = v
	}
	return out, nil
}

var exprRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// runName evaluates the workflow's run-name for a dispatch. Its expressions may name
// inputs (`inputs.x`), string literals and `||`; any other context is empty on a
// dispatch, as github.event.comment is.
func (w *workflow) runName(file string, in map[string]string) string {
	if w.RunName == "" {
		return strings.TrimSuffix(strings.TrimSuffix(file, ".yml"), ".yaml")
	}
	return exprRE.ReplaceAllStringFunc(w.RunName, func(m string) string {
		expr := exprRE.FindStringSubmatch(m)[1]
		for _, alt := range strings.Split(expr, "||") {
			alt = strings.TrimSpace(alt)
			var v string
			switch {
			case strings.HasPrefix(alt, "inputs."):
				v = in[strings.TrimPrefix(alt, "inputs.")]
			case len(alt) >= 2 && alt[0] == '\'' && alt[len(alt)-1] == '\'':
				v = alt[1 : len(alt)-1]
			}
			if v != "" {
				return v
			}
		}
		return ""
	})
}

func (w *workflow) String() string { return fmt.Sprintf("workflow(run-name %q)", w.RunName) }
