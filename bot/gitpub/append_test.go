package gitpub

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/gittest"
)

const pagesBranch = "gh-pages"

func pagesChange(body string) Change {
	return Change{Branch: pagesBranch, Files: map[string][]byte{"trend/index.html": []byte(body)},
		Message: "trend page", Author: bot, Date: time.Date(2026, 10, 1, 3, 0, 0, 0, time.UTC)}
}

// sitePusher is a second clone that commits to the Pages branch on its own, as a
// maintainer or another workflow would.
func (r *remote) sitePusher(t *testing.T) func(file, body string) string {
	dir := filepath.Join(t.TempDir(), "site")
	gittest.Git(t, filepath.Dir(dir), "init", "--quiet", "--initial-branch="+pagesBranch, dir)
	gittest.Git(t, dir, "remote", "add", "origin", r.url)
	return func(file, body string) string {
		gittest.Run(gittest.Command(dir, "pull", "--quiet", "origin", pagesBranch))
		writeFile(t, filepath.Join(dir, file), body)
		gittest.Git(t, dir, "add", file)
		gittest.Git(t, dir, "commit", "--quiet", "-m", "site: "+file)
		gittest.Git(t, dir, "push", "--quiet", "origin", "HEAD:refs/heads/"+pagesBranch)
		return gittest.Git(t, dir, "rev-parse", "HEAD")
	}
}

// Append starts the branch with a parentless commit, builds on whatever the branch
// holds without touching its other files, changes nothing when the page is the same,
// and after losing a race builds on the other pusher's commit instead of replacing it.
func TestAppendAddsOneCommitOverTheBranchHead(t *testing.T) {
	ctx := context.Background()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	p.Branches = []string{pagesBranch}

	res, err := p.Append(ctx, pagesChange("<p>night 1</p>"))
	if err != nil || res.Action != ActionCreated || !res.Pushed {
		t.Fatalf("first page: %+v, %v", res, err)
	}
	if got := r.ref(t, "refs/heads/"+pagesBranch); got != res.Commit {
		t.Fatalf("the branch holds %s, want %s", got, res.Commit)
	}
	if parents := gittest.Git(t, r.dir, "rev-list", "--parents", "-n1", res.Commit); parents != res.Commit {
		t.Errorf("the first commit has parents: %s", parents)
	}
	if files := sortedKeys(treeFiles(t, r.dir, res.Commit)); strings.Join(files, ",") != "trend/index.html" {
		t.Errorf("the first commit holds %v", files)
	}

	// Someone else's commit on the branch stays, with its files.
	other := r.sitePusher(t)
	theirs := other("index.html", "<p>project site</p>")
	res, err = p.Append(ctx, pagesChange("<p>night 2</p>"))
	if err != nil || res.Action != ActionUpdated || res.Previous != theirs {
		t.Fatalf("second page: %+v, %v", res, err)
	}
	if parent := gittest.Git(t, r.dir, "rev-parse", res.Commit+"^"); parent != theirs {
		t.Errorf("the page's parent is %s, want the other commit %s", parent, theirs)
	}
	files := treeFiles(t, r.dir, res.Commit)
	if len(files) != 2 || files["index.html"] == "" || gittest.Git(t, r.dir, "show", res.Commit+":trend/index.html") != "<p>night 2</p>" {
		t.Errorf("the branch after the page: %v", sortedKeys(files))
	}

	// The same page again: nothing new.
	again, err := p.Append(ctx, pagesChange("<p>night 2</p>"))
	if err != nil || again.Action != ActionUnchanged || again.Commit != res.Commit || again.Pushed {
		t.Errorf("the same page again: %+v, %v", again, err)
	}

	// A race: the other pusher commits between our look and our push.
	var raced string
	p.beforePush = func(attempt int) {
		if attempt == 0 {
			raced = other("CNAME", "perf.example.org\n")
		}
	}
	res, err = p.Append(ctx, pagesChange("<p>night 3</p>"))
	if err != nil || res.Retries != 1 || res.Previous != raced {
		t.Fatalf("after a race: %+v, %v", res, err)
	}
	if parent := gittest.Git(t, r.dir, "rev-parse", res.Commit+"^"); parent != raced {
		t.Errorf("the page went over %s, not on top of the commit pushed meanwhile %s", parent, raced)
	}
	if got := sortedKeys(treeFiles(t, r.dir, res.Commit)); strings.Join(got, ",") != "CNAME,index.html,trend/index.html" {
		t.Errorf("the branch after the race holds %v", got)
	}
}

// Append refuses what Publish refuses, before anything is written, and a change that
// names a base or removes files.
func TestAppendRefuses(t *testing.T) {
	ctx := context.Background()
	r := newRemote(t)
	p, _ := newPublisher(t, r)
	p.Branches = []string{pagesBranch}
	before := refs(t, r.dir)
	for name, c := range map[string]Change{
		"the default branch": func() Change { c := pagesChange("x"); c.Branch = "main"; return c }(),
		"a branch not named": func() Change { c := pagesChange("x"); c.Branch = "site"; return c }(),
		"a base":             func() Change { c := pagesChange("x"); c.Base = r.base; return c }(),
		"a removal":          func() Change { c := pagesChange("x"); c.Remove = []string{"index.html"}; return c }(),
		"a path into .git": func() Change {
			c := pagesChange("x")
			c.Files = map[string][]byte{".git/config": []byte("x")}
			return c
		}(),
		"a path out of the top": func() Change { c := pagesChange("x"); c.Files = map[string][]byte{"../x": []byte("x")}; return c }(),
		"an oversized page": func() Change {
			c := pagesChange("x")
			c.Files = map[string][]byte{"trend/index.html": make([]byte, DefaultMaxFileSize+1)}
			return c
		}(),
	} {
		if _, err := p.Append(ctx, c); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if after := refs(t, r.dir); after != before {
		t.Errorf("a refused change moved refs on the remote:\n%s\n%s", before, after)
	}
}
