package demo

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lablup/perfbot/internal/sampletree"
	"github.com/lablup/perfbot/internal/testfix"
	"gopkg.in/yaml.v3"
)

// The sample repository carries the profile workflow users copy, byte for byte.
func TestSampleWorkflowIsTheExample(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(filepath.Join(testfix.RepoRoot(t), "examples", "workflows", workflow))
	if err != nil {
		t.Fatal(err)
	}
	got, err := sampletree.ReadFile(".github/workflows/" + workflow)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("internal/sampletree/mlxcel/.github/workflows/%s differs from examples/workflows/%s: copy it again", workflow, workflow)
	}
}

// The demo's runners pass each perfbot step exactly the inputs the workflow's `with:`
// names, in the job the workflow runs it in, so the demo runs what Actions would.
func TestJobStepsMatchTheWorkflow(t *testing.T) {
	t.Parallel()
	b, err := sampletree.ReadFile(".github/workflows/" + workflow)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On struct {
			Dispatch struct {
				Inputs map[string]any `yaml:"inputs"`
			} `yaml:"workflow_dispatch"`
		} `yaml:"on"`
		Jobs map[string]struct {
			Steps []struct {
				ID   string            `yaml:"id"`
				If   string            `yaml:"if"`
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	for job, steps := range map[string][]actionStep{"profile": gpuJob, "publish": publishJob} {
		var ids []string
		for _, st := range wf.Jobs[job].Steps {
			if st.With["job"] == "" {
				continue
			}
			ids = append(ids, st.ID)
			i := slices.IndexFunc(steps, func(a actionStep) bool { return a.id == st.ID })
			if i < 0 {
				t.Errorf("the workflow's step %s of job %s is not run by the demo's %s job", st.ID, job, job)
				continue
			}
			in := map[string]string{}
			for name := range wf.On.Dispatch.Inputs {
				in[name] = "x"
			}
			got := steps[i].with(in, &demo{key: []byte("k")}, "results")
			gotKeys := slices.Sorted(maps.Keys(got))
			wantKeys := slices.Sorted(maps.Keys(st.With))
			if !slices.Equal(gotKeys, wantKeys) {
				t.Errorf("job %s step %s: the demo passes %v, the workflow %v", job, st.ID, gotKeys, wantKeys)
			}
			if (st.If == "inputs.base == ''") != (steps[i].when != nil) || (st.If != "" && st.If != "inputs.base == ''") {
				t.Errorf("job %s step %s: the workflow's if: is %q; the demo runs it %s", job, st.ID, st.If,
					map[bool]string{true: "only without a base (notCompare)", false: "always"}[steps[i].when != nil])
			}
			if got["job"] != st.With["job"] {
				t.Errorf("job %s step %s: job %q, the workflow's %q", job, st.ID, got["job"], st.With["job"])
			}
		}
		if len(ids) != len(steps) {
			t.Errorf("the workflow's job %s has perfbot steps %v, the demo runs %d", job, ids, len(steps))
		}
	}
}
