package fakegithub

import (
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

// runName evaluates the workflow's run-name for a dispatch, as GitHub does: the
// expressions see the dispatch's inputs and github.event_name; other contexts are
// empty on a dispatch (github.event.comment, say). A run-name the fake cannot evaluate
// falls back to the workflow's name, as GitHub shows an invalid one.
func (w *workflow) runName(file string, in map[string]string) string {
	if w.RunName == "" {
		return strings.TrimSuffix(strings.TrimSuffix(file, ".yml"), ".yaml")
	}
	ctx := func(name string) string {
		switch {
		case name == "github.event_name":
			return "workflow_dispatch"
		case strings.HasPrefix(name, "inputs."):
			return in[strings.TrimPrefix(name, "inputs.")]
		case strings.HasPrefix(name, "github.event.inputs."):
			return in[strings.TrimPrefix(name, "github.event.inputs.")]
		}
		return ""
	}
	var bad error
	title := exprRE.ReplaceAllStringFunc(w.RunName, func(m string) string {
		v, err := evalExpr(exprRE.FindStringSubmatch(m)[1], ctx)
		if err != nil {
			bad = err
		}
		return v
	})
	if bad != nil {
		return strings.TrimSuffix(strings.TrimSuffix(file, ".yml"), ".yaml")
	}
	return title
}
