package gitpub

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/perfbot/internal/gittest"
	"github.com/lablup/perfbot/internal/testfix"
)

// TestMain gives every git process a home without user config and no system config,
// as on a fresh runner, so nothing here depends on the machine's git setup.
func TestMain(m *testing.M) {
	gittest.Main(m, droppedEnv...)
}

const (
	botBranch = "perfbot/rocm-profile"
	resultsIn = "benchmarks/rocm_profiles/gfx1151_929c80ab/"
	reportAt  = "docs/benchmark_results/rocm-decode-profile-gfx1151-2026-09-30.md"
)

var bot = Identity{Name: "perfbot[bot]", Email: "perfbot[bot]@users.noreply.github.com"}

// remote is a bare repository standing in for GitHub, with a default branch holding a
// small source tree.
type remote struct {
	dir  string // bare repository
	url  string // file:// URL, so git uses a real transport
	base string // the default branch's commit
	seed string // a working clone used to make more commits
}

// newRemote makes the bare remote and registers the check that its default branch
// never moves during the test.
func newRemote(t testing.TB) *remote {
	t.Helper()
	root := t.TempDir()
	seed := filepath.Join(root, "seed")
	gittest.Git(t, root, "init", "--quiet", "--initial-branch=main", seed)
	files := map[string]string{
		"README.md":             "# mlxcel\n",
		"src/lib.rs":            "pub fn gate() -> bool { false }\n",
		"scripts/bench.sh":      "#!/bin/sh\necho bench\n",
		"docs/old/notes.md":     "old notes\n",
		"docs/old/more/deep.md": "deep\n",
		"benchmarks/keep.csv":   "a,b\r\n1,2\r\n",
	}
	for p, body := range files {
		writeFile(t, filepath.Join(seed, p), body)
	}
	gittest.Git(t, seed, "add", "-A")
	gittest.Git(t, seed, "update-index", "--chmod=+x", "scripts/bench.sh")
	gittest.Git(t, seed, "commit", "--quiet", "-m", "base")
	bare := filepath.Join(root, "remote.git")
	gittest.Git(t, root, "clone", "--quiet", "--bare", seed, bare)
	gittest.Git(t, seed, "remote", "add", "hub", bare)
	r := &remote{dir: bare, url: "file://" + bare, base: gittest.Git(t, seed, "rev-parse", "HEAD"), seed: seed}
	t.Cleanup(func() {
		if got := r.ref(t, "refs/heads/main"); got != r.base {
			t.Errorf("the remote's default branch moved: %s -> %s", r.base, got)
		}
	})
	return r
}

func writeFile(t testing.TB, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ref returns what the remote holds at ref, or "" when absent.
func (r *remote) ref(t testing.TB, ref string) string {
	t.Helper()
	out, err := gittest.Run(gittest.Command(r.dir, "rev-parse", "--verify", "--quiet", ref))
	if err != nil {
		return ""
	}
	return out
}

// objects lists every object in a repository, to prove nothing was written.
func objects(t testing.TB, dir string) string {
	t.Helper()
	return gittest.Git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
}

// refs lists every ref in a repository with its value.
func refs(t testing.TB, dir string) string {
	t.Helper()
	return gittest.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)")
}

// pusher is a second clone of the remote that pushes to the bot branch on its own, as
// a concurrent run would.
func (r *remote) pusher(t testing.TB) func(note string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, filepath.Dir(dir), "clone", "--quiet", r.url, dir)
	return func(note string) string {
		writeFile(t, filepath.Join(dir, "other.txt"), note)
		gittest.Git(t, dir, "add", "other.txt")
		gittest.Git(t, dir, "commit", "--quiet", "-m", "other: "+note)
		gittest.Git(t, dir, "push", "--quiet", "--force", "origin", "HEAD:refs/heads/"+botBranch)
		return gittest.Git(t, dir, "rev-parse", "HEAD")
	}
}

// argvLog records the git command lines a Publisher runs.
type argvLog struct {
	mu   sync.Mutex
	cmds [][]string
}

func (l *argvLog) record(argv []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cmds = append(l.cmds, argv)
}

// subcommands returns the git subcommands run so far (the word after the global options).
func (l *argvLog) subcommands() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var subs []string
	for _, argv := range l.cmds {
		// git -C dir -c core.hooksPath=/dev/null <sub> ...
		if len(argv) > 5 {
			subs = append(subs, argv[5])
		}
	}
	return subs
}

func (l *argvLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cmds = nil
}

func (l *argvLog) joined() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, argv := range l.cmds {
		b.WriteString(strings.Join(argv, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// newPublisher clones the remote for publishing and records its git command lines.
func newPublisher(t testing.TB, r *remote) (*Publisher, *argvLog) {
	t.Helper()
	log := &argvLog{}
	p, err := Clone(context.Background(), r.url, filepath.Join(t.TempDir(), "pub.git"),
		CloneOptions{Branches: []string{botBranch}, trace: log.record})
	if err != nil {
		t.Fatalf("Clone: %v", err)
	}
	return p, log
}

// resultsChange is a publication of the real 2026-09-30 results folder and a report page.
func resultsChange(t testing.TB, base string) Change {
	t.Helper()
	dir := testfix.Path(t, "mlxcel-gfx1151", "rocm_profiles", "gfx1151_929c80ab")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[resultsIn+e.Name()] = b
	}
	files[reportAt] = []byte("# ROCm decode profile, gfx1151, 2026-09-30\n\nLlama and Qwen3, greedy.\n")
	return Change{
		Base:    base,
		Branch:  botBranch,
		Files:   files,
		Message: "rocm: decode profile of gfx1151 at 929c80ab\n\nTwo models, greedy sampling, 128 decode tokens.",
		Author:  bot,
		Date:    time.Date(2026, 9, 30, 21, 4, 5, 0, time.FixedZone("CEST", 2*3600)),
	}
}

// treeFiles lists a commit's files as path -> mode.
func treeFiles(t testing.TB, dir, commit string) map[string]string {
	t.Helper()
	out := gittest.Git(t, dir, "ls-tree", "-r", "-z", commit)
	files := map[string]string{}
	for _, rec := range strings.Split(out, "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if ok {
			files[p] = strings.Fields(meta)[0]
		}
	}
	return files
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
