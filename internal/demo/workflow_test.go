package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

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
	got, err := sample.ReadFile("sample/mlxcel/.github/workflows/" + workflow)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("internal/demo/sample/mlxcel/.github/workflows/%s differs from examples/workflows/%s: copy it again", workflow, workflow)
	}
}

// The demo's runner passes each perfbot step exactly the inputs the workflow's `with:`
// names, so the demo runs what Actions would.
func TestGPUJobStepsMatchTheWorkflow(t *testing.T) {
	t.Parallel()
	b, err := sample.ReadFile("sample/mlxcel/.github/workflows/" + workflow)
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
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, st := range wf.Jobs["profile"].Steps {
		if st.With["job"] == "" {
			continue
		}
		ids = append(ids, st.ID)
		i := slices.IndexFunc(gpuJob, func(a actionStep) bool { return a.id == st.ID })
		if i < 0 {
			t.Errorf("the workflow's step %s is not run by the demo", st.ID)
			continue
		}
		in := map[string]string{}
		for name := range wf.On.Dispatch.Inputs {
			in[name] = "x"
		}
		got := gpuJob[i].with(in, &demo{key: []byte("k")})
		var gotKeys, wantKeys []string
		for k := range got {
			gotKeys = append(gotKeys, k)
		}
		for k := range st.With {
			wantKeys = append(wantKeys, k)
		}
		slices.Sort(gotKeys)
		slices.Sort(wantKeys)
		if !slices.Equal(gotKeys, wantKeys) {
			t.Errorf("step %s: the demo passes %v, the workflow %v", st.ID, gotKeys, wantKeys)
		}
		if got["job"] != st.With["job"] {
			t.Errorf("step %s: job %q, the workflow's %q", st.ID, got["job"], st.With["job"])
		}
	}
	if len(ids) != len(gpuJob) {
		t.Errorf("the workflow's perfbot steps %v, the demo runs %d", ids, len(gpuJob))
	}
}
