package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/lablup/perfbot/action"
	"github.com/lablup/perfbot/internal/fakegithub"
	"github.com/lablup/perfbot/internal/strs"
)

// actionStep is one `uses: lablup/perfbot@...` step of the dispatched workflow's
// profile job (on the GPU runner) or publish job, with its `with:` inputs as the
// workflow computes them from a dispatch's inputs and, for publish, the folder the
// results artifact was downloaded to. A test checks these against the workflow file the
// sample repository carries.
type actionStep struct {
	id   string
	with func(in map[string]string, d *demo, results string) map[string]string
	// when, if set, is the step's `if:`: the step runs only when it holds.
	when func(in map[string]string) bool
}

// notCompare is the `if: inputs.base == ”` of the steps that work on one commit's
// profile.
func notCompare(in map[string]string) bool { return in["base"] == "" }

// gpuJob are the steps that build and run the pinned commit: no token, no key.
var gpuJob = []actionStep{
	{"profile", func(in map[string]string, _ *demo, _ string) map[string]string {
		return map[string]string{"job": "profile", "ref": in["sha"], "base-ref": in["base"], "repeats": in["repeats"], "request-id": in["request_id"], "models": in["models"], "sampling": in["sampling"]}
	}, nil},
	{"tests", func(in map[string]string, _ *demo, _ string) map[string]string {
		return map[string]string{"job": "gemm-tests", "ref": in["sha"]}
	}, notCompare},
	{"patch", func(in map[string]string, _ *demo, _ string) map[string]string {
		return map[string]string{"job": "patch", "ref": in["sha"]}
	}, notCompare},
}

// publishJob holds the App's key and runs none of the repository's code.
var publishJob = []actionStep{
	{"publish", func(in map[string]string, d *demo, results string) map[string]string {
		return map[string]string{"job": "publish", "results": results, "ref": in["sha"], "request-id": in["request_id"], "epic": in["epic"],
			"issue": in["issue"], "trigger-comment-id": in["trigger_comment_id"], "status-comment-id": in["status_comment_id"],
			"check-run-id": in["check_run_id"], "app-id": strconv.Itoa(appID), "app-private-key": string(d.key)}
	}, nil},
}

// runWorkflow plays the runners for a dispatched run of the profile workflow: the GPU
// job (the checkout without credentials, each perfbot step through the Action's own
// entry with the step's inputs and the runtime's files, as Actions runs them, the
// results handed on as an artifact, the workspace emptied), then the publish job in
// fresh folders without a checkout. It moves the run along on the local GitHub and
// delivers its workflow_run events to the server. It returns the publish step's
// outputs.
func (d *demo) runWorkflow(ctx context.Context, dsp fakegithub.Dispatch) (map[string]string, error) {
	runs := d.fake.Runs()
	var run fakegithub.Run
	for _, r := range runs {
		if r.ID == dsp.RunID {
			run = r
		}
	}
	if dsp.Inputs["job"] != "profile" {
		return nil, fmt.Errorf("the server dispatched job %q; the demo runs the profile job", dsp.Inputs["job"])
	}
	d.p.step("Actions: %s dispatched as run %d %q; its profile job goes to the runner [self-hosted, %s]",
		dsp.Workflow, run.ID, run.Title, gpuLabel)
	if err := d.moveRun(ctx, run.ID, "in_progress", ""); err != nil {
		return nil, err
	}
	artifact, jobErr := d.gpuJob(ctx, dsp)
	var outputs map[string]string
	if jobErr == nil {
		outputs, jobErr = d.publishJob(ctx, dsp, artifact)
	}
	conclusion := "success"
	if jobErr != nil {
		conclusion = "failure"
	}
	if err := d.moveRun(ctx, run.ID, "completed", conclusion); err != nil {
		return nil, err
	}
	d.p.step("Actions: run %d completed (%s)", run.ID, conclusion)
	return outputs, jobErr
}

// moveRun sets the run's state on the local GitHub and delivers the event.
func (d *demo) moveRun(ctx context.Context, id int64, status, conclusion string) error {
	run, err := d.fake.SetRun(id, status, conclusion)
	if err != nil {
		return err
	}
	// The demo moves runs only to in_progress and completed, which are also the
	// workflow_run actions' names.
	payload, err := runEvent(owner, repoName, run, status)
	if err != nil {
		return err
	}
	_, err = d.send.post(ctx, "workflow_run", payload)
	return err
}

// jobFolders makes a job's runner folders: its workspace and RUNNER_TEMP.
func (d *demo) jobFolders(name string) (ws, tmp string, err error) {
	runner := filepath.Join(d.work, "runner-"+name)
	ws = filepath.Join(runner, "_work", repoName)
	tmp = filepath.Join(runner, "_temp")
	for _, dir := range []string{ws, tmp} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", err
		}
	}
	return ws, tmp, nil
}

// gpuJob runs the GPU job's steps in a fresh workspace with the pinned commit checked
// out and no credentials kept, hands the results folder on as the artifact (a folder
// the publish job copies from) and empties the job's folders. It returns the
// artifact's folder.
func (d *demo) gpuJob(ctx context.Context, dsp fakegithub.Dispatch) (string, error) {
	ws, tmp, err := d.jobFolders("gpu")
	if err != nil {
		return "", err
	}
	// actions/checkout with ref: the pinned commit and persist-credentials: false; the
	// clone is of a local remote, so no token ever was in it.
	if _, err := runGit(ctx, d.home, filepath.Dir(ws), "clone", "--quiet", "--no-checkout", d.tg.bare, ws); err != nil {
		return "", err
	}
	if _, err := runGit(ctx, d.home, ws, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", dsp.Inputs["sha"]); err != nil {
		return "", err
	}
	head, _ := runGit(ctx, d.home, ws, "rev-parse", "HEAD")
	d.p.step("checkout: the pinned commit %s (the workflow itself from %s)", strs.ShortSHA(head), dsp.Ref)

	outputs, err := d.runSteps(ctx, dsp, gpuJob, 0, ws, tmp, head, "")
	if err != nil {
		return "", err
	}
	src := outputs["profile"]["results-dir"]
	if src == "" {
		return "", errors.New("the profile step gave no results-dir")
	}
	// The staging step and actions/upload-artifact: the artifact holds the
	// <gfx>_<commit8> folder by name. Then the workflow's last step.
	name := "perfbot-results-" + dsp.Inputs["request_id"]
	artifact := filepath.Join(d.work, "artifacts", name)
	d.resultsName = filepath.Base(src)
	if err := os.CopyFS(filepath.Join(artifact, d.resultsName), os.DirFS(src)); err != nil {
		return "", fmt.Errorf("uploading the results artifact: %w", err)
	}
	d.res.Files["results folder"] = filepath.Join(artifact, d.resultsName)
	if err := os.RemoveAll(filepath.Dir(ws)); err != nil {
		return "", err
	}
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	d.p.step("artifact %s: the results folder %s, handed to the publish job; the GPU job's workspace and RUNNER_TEMP emptied", name, d.resultsName)
	return artifact, nil
}

// publishJob runs the publish job: fresh folders, no checkout, the artifact downloaded
// under RUNNER_TEMP and published from there with the App's key.
func (d *demo) publishJob(ctx context.Context, dsp fakegithub.Dispatch, artifact string) (map[string]string, error) {
	ws, tmp, err := d.jobFolders("publish")
	if err != nil {
		return nil, err
	}
	results := filepath.Join(tmp, "perfbot-results")
	if err := os.CopyFS(results, os.DirFS(artifact)); err != nil {
		return nil, fmt.Errorf("downloading the results artifact: %w", err)
	}
	d.p.step("publish job (ubuntu-latest, no checkout): artifact %s downloaded to %s", filepath.Base(artifact), results)
	outputs, err := d.runSteps(ctx, dsp, publishJob, len(gpuJob), ws, tmp, dsp.Inputs["sha"], results)
	if err != nil {
		return nil, err
	}
	return outputs["publish"], nil
}

// runSteps runs a job's perfbot steps in order through the Action's entry, as Actions
// runs them; first numbers the step logs on from the steps of earlier jobs. It returns
// each step's outputs by id.
func (d *demo) runSteps(ctx context.Context, dsp fakegithub.Dispatch, steps []actionStep, first int, ws, tmp, head, results string) (map[string]map[string]string, error) {
	runner := filepath.Dir(tmp)
	event, err := json.Marshal(map[string]any{
		"inputs": dsp.Inputs, "ref": "refs/heads/" + strings.TrimPrefix(dsp.Ref, "refs/heads/"), "workflow": ".github/workflows/" + dsp.Workflow,
		"repository":   map[string]any{"full_name": owner + "/" + repoName, "name": repoName, "owner": map[string]any{"login": owner}, "default_branch": "main"},
		"sender":       map[string]any{"login": appSlug + "[bot]", "type": "Bot"},
		"installation": map[string]any{"id": fakegithub.InstallationID},
	})
	if err != nil {
		return nil, err
	}
	eventPath := filepath.Join(runner, "event.json")
	if err := os.WriteFile(eventPath, event, 0o644); err != nil {
		return nil, err
	}
	logs := filepath.Join(d.o.Out, "actions")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	all := map[string]map[string]string{}
	for i, st := range steps {
		if st.when != nil && !st.when(dsp.Inputs) {
			d.p.step("step %s: skipped (if: inputs.base == '')", st.id)
			continue
		}
		n := first + i + 1
		files := map[string]string{}
		for _, f := range []string{"output", "summary", "env", "path", "state"} {
			files[f] = filepath.Join(runner, fmt.Sprintf("%d-%s", n, f))
			if err := os.WriteFile(files[f], nil, 0o644); err != nil {
				return nil, err
			}
		}
		env := map[string]string{
			"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_EVENT_NAME": "workflow_dispatch", "GITHUB_EVENT_PATH": eventPath,
			"GITHUB_REPOSITORY": owner + "/" + repoName, "GITHUB_WORKSPACE": ws, "RUNNER_TEMP": tmp, "GITHUB_SHA": head,
			"GITHUB_REF": "refs/heads/main", "GITHUB_API_URL": strings.TrimSuffix(d.fake.URL(), "/"), "GITHUB_SERVER_URL": "http://github.invalid",
			"GITHUB_RUN_ID": strconv.FormatInt(dsp.RunID, 10), "GITHUB_WORKFLOW_REF": owner + "/" + repoName + "/.github/workflows/" + dsp.Workflow + "@refs/heads/main",
			"GITHUB_OUTPUT": files["output"], "GITHUB_STEP_SUMMARY": files["summary"], "GITHUB_ENV": files["env"],
			"GITHUB_PATH": files["path"], "GITHUB_STATE": files["state"], action.EnvRoot: d.host.Root,
			// The publish job clones the repository itself: here the local remote.
			action.EnvRepoURL: d.tg.bare,
		}
		for k, v := range st.with(dsp.Inputs, d, results) {
			env["INPUT_"+strings.ToUpper(k)] = v
		}
		logPath := filepath.Join(logs, fmt.Sprintf("%d-%s.log", n, st.id))
		lf, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		w := d.stepLog(lf, st.id)
		runErr := action.Run(ctx, action.Options{Stdout: w, Getenv: func(k string) string { return env[k] }})
		w.Close()
		lf.Close()
		d.res.Files["step log: "+st.id] = logPath
		if runErr != nil {
			d.p.step("step %s failed: see %s", st.id, logPath)
			return nil, fmt.Errorf("the workflow's %s step failed: %w (its log: %s)", st.id, runErr, logPath)
		}
		outputs, err := readOutputs(files["output"])
		if err != nil {
			return nil, err
		}
		all[st.id] = outputs
		summary, _ := os.ReadFile(files["summary"])
		if len(summary) > 0 {
			p := filepath.Join(logs, fmt.Sprintf("%d-%s.summary.md", n, st.id))
			if err := os.WriteFile(p, summary, 0o644); err != nil {
				return nil, err
			}
			d.res.Files["step summary: "+st.id] = p
		}
		d.p.step("step %s: %s", st.id, describeOutputs(st.id, outputs))
		if st.id == "publish" {
			d.res.Files["report page (on the bot branch)"] = outputs["report-path"]
		}
	}
	return all, nil
}

// describeOutputs says in one line what a step's outputs tell.
func describeOutputs(id string, out map[string]string) string {
	switch id {
	case "profile":
		return fmt.Sprintf("verdict %s, results in %s", out["verdict"], out["results-dir"])
	case "tests":
		return fmt.Sprintf("grouped_gemm numeric tests: %s", out["verdict"])
	case "publish":
		return fmt.Sprintf("%s; pull request %s (%s)", out["verdict"], out["pr-url"], out["pr-operation"])
	}
	return out["verdict"]
}

// readOutputs reads a GITHUB_OUTPUT file: name=value lines and name<<DELIM blocks.
func readOutputs(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		if name, val, ok := strings.Cut(line, "="); ok {
			out[name] = val
		}
	}
	return out, sc.Err()
}

// stepLog writes a step's log to w and watches it: the planted GPU tenant arrives when
// the first profiled run starts and leaves once the guard has rejected that attempt.
func (d *demo) stepLog(w io.Writer, step string) io.WriteCloser {
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(w, line)
			if step == "profile" {
				d.watchTenant(line)
			}
		}
		io.Copy(io.Discard, pr) //nolint:errcheck // drain after a too-long line
	}()
	return &waitCloser{PipeWriter: pw, wg: &wg}
}

type waitCloser struct {
	*io.PipeWriter
	wg *sync.WaitGroup
}

func (c *waitCloser) Close() error {
	err := c.PipeWriter.Close()
	c.wg.Wait()
	return err
}

// watchTenant reacts to the profile step's log.
func (d *demo) watchTenant(line string) {
	switch {
	case strings.Contains(line, " profiled: attempt 1/"):
		if started, err := d.tenant.arrive(context.Background()); started && err == nil {
			d.p.step("another GPU tenant (pid %d) starts on the shared host during the first profiled run", d.tenant.pid())
		}
	case d.tenant.pid() != 0 && strings.Contains(line, "REJECTED (contended)"):
		pid := d.tenant.pid()
		d.tenant.leave()
		d.p.step("the guard rejected the contended attempt (tenant pid %d) and reruns it once the GPU is idle again", pid)
	}
}
