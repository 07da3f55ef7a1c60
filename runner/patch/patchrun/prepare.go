package patchrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/lablup/perfbot/internal/gitrun"
	"github.com/lablup/perfbot/internal/infile"
	"github.com/lablup/perfbot/runner/patch"
	"github.com/lablup/perfbot/runner/sandbox"
)

// ShippedVerify is the verification the shipped configuration names: the checker
// alone. Prepare adds `make verify-kernel-port-dispatch` to it when the tree's
// Makefile has that target.
var ShippedVerify = [][]string{{"python3", patch.CheckerPath}}

// PrepareOptions say what Prepare patches and how it verifies.
type PrepareOptions struct {
	// RepoDir is a git repository holding Commit; its checkout and index are not
	// touched (the patch is applied in a scratch worktree).
	RepoDir string
	// Commit is the pinned commit, a full or abbreviated SHA.
	Commit  string
	Outcome patch.Outcome
	// Verify are the configured verification commands (the configuration's verify:);
	// ShippedVerify also gets the Makefile target, empty runs none.
	Verify [][]string
	// Python runs the repo's checker; default python3.
	Python string
	// VerifyTimeout bounds each verification command; default 10 minutes.
	VerifyTimeout time.Duration
	// ScratchDir holds the scratch worktree; "" means the system's temp folder.
	ScratchDir string
	// Sandbox runs the checker and the verification commands (the repository's code)
	// under runner/sandbox, the worktree their only writable folder, when the settings
	// say on; nil means the host's, read from perfbot's environment (sandbox.FromEnv).
	Sandbox *sandbox.Settings
}

// Prepare applies the grouped_gemm gate patch for o.Outcome to a scratch worktree of
// o.Commit, runs the checker and the verification commands there, and returns the
// outcome as data for the publisher. It runs the repository's own code (the checker
// and the commands): it belongs on the runner that ran the pinned commit, never in a
// job that holds a publishing secret. A patch that was refused is recorded in
// Prepared.Error, not returned; the error is for a worktree that could not be made.
func Prepare(ctx context.Context, o PrepareOptions) (patch.Prepared, error) {
	sha, err := gitrun.Out(ctx, o.RepoDir, "rev-parse", "--verify", "--quiet", "--end-of-options", o.Commit+"^{commit}")
	if err != nil || !patch.IsFullCommit(sha) {
		return patch.Prepared{}, fmt.Errorf("preparing the patch: commit %s is not in %s", o.Commit, o.RepoDir)
	}
	settings := o.Sandbox
	if settings == nil {
		s, err := sandbox.FromEnv(os.Getenv)
		if err != nil {
			return patch.Prepared{}, fmt.Errorf("preparing the patch: %w", err)
		}
		settings = &s
	}
	wt, err := addWorktree(ctx, o.RepoDir, o.ScratchDir, sha)
	if err != nil {
		return patch.Prepared{}, err
	}
	defer wt.remove()
	var wrap func(*exec.Cmd) error
	sb, err := sandbox.New(*settings, wt.dir, wt.dir)
	if err != nil {
		return patch.Prepared{}, fmt.Errorf("preparing the sandbox of the patched tree: %w", err)
	}
	if sb != nil {
		wrap = sb.Wrap
	}

	p := patch.Prepared{Commit: sha, Decision: o.Outcome.Decide(), Verify: []patch.VerifyResult{}}
	r, err := GemmGates(ctx, wt.dir, o.Outcome, Options{Python: o.Python, Wrap: wrap})
	if err != nil {
		p.Error = err.Error()
	} else {
		p.Report, p.Decision = &r, r.Decision
		for _, fr := range r.Files {
			if !fr.Changed {
				continue
			}
			b, err := infile.ReadFile(filepath.Join(wt.dir, filepath.FromSlash(fr.Path)), patch.MaxSourceSize)
			if err != nil {
				p.Error = "reading the patched " + fr.Path + ": " + err.Error()
				continue
			}
			p.Files = append(p.Files, patch.PatchedFile{Path: fr.Path, Content: string(b)})
		}
	}
	cmds := o.Verify
	if slices.EqualFunc(cmds, ShippedVerify, slices.Equal[[]string]) {
		cmds = patch.DefaultVerifyCommands(wt.dir)
	}
	if len(cmds) > 0 {
		p.Verify = VerifyWith(ctx, wt.dir, cmds, VerifyOptions{Timeout: o.VerifyTimeout, Wrap: wrap})
	}
	return p, nil
}

// worktree is a scratch checkout of the pinned commit where the patch is applied and
// verified, so the caller's checkout is never touched and every run starts from the
// same files.
type worktree struct {
	repo string
	dir  string
}

func addWorktree(ctx context.Context, repo, scratch, commit string) (*worktree, error) {
	tmp, err := os.MkdirTemp(scratch, "perfbot-patch-")
	if err == nil {
		tmp, err = filepath.Abs(tmp)
	}
	if err != nil {
		return nil, fmt.Errorf("making a scratch worktree: %w", err)
	}
	dir := filepath.Join(tmp, "tree")
	if _, err := gitrun.Out(ctx, repo, "worktree", "add", "--quiet", "--detach", dir, commit); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("checking out commit %s in a scratch worktree: %w", commit, err)
	}
	return &worktree{repo: repo, dir: dir}, nil
}

// remove deletes the worktree; it runs even after ctx ended.
func (w *worktree) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = gitrun.Out(ctx, w.repo, "worktree", "remove", "--force", w.dir)
	os.RemoveAll(filepath.Dir(w.dir))
	_, _ = gitrun.Out(ctx, w.repo, "worktree", "prune")
}
