package config

import "strings"

// Key is one key of the schema: where it sits, its default and what it means. Keys is
// the one list of them: the configuration reference of README.md and the key tables of
// docs/config.md are generated from it (go test ./cmd/perfbot -run TestGeneratedDocs
// -update), and config's tests hold it to the parser: every key the parser reads is
// listed, in the file's order, and every Default is what the parser really defaults to.
type Key struct {
	// Path is the key's dotted path; <name> stands for a key of a mapping chosen by the
	// file (models.<name>.dir).
	Path string
	// Default is the YAML value that, written in the file, changes nothing: the default
	// spelled as a value ("90", "[greedy]", `""`). Empty when Note says it in words.
	Default string
	// Note is the default in words when no value spells it: "none: required", "see
	// below" (a block whose keys follow), "all models, in file order".
	Note string
	// Meaning is one line of Markdown: what the key does and its valid values. Links
	// are relative to the repository root (docs/inputs.md); docs/config.md gets them
	// relative to docs/.
	Meaning string
}

// Keys lists every key of schema version 1, each block followed by its own keys.
var Keys = []Key{
	{Path: "version", Note: "none: required",
		Meaning: "Schema version. Must be `1`."},
	{Path: "epic", Default: "0",
		Meaning: "Issue number that gets the ranking comment (the porting epic). `0` = no epic comment."},
	{Path: "trigger", Note: "see below",
		Meaning: "Who may start runs."},
	{Path: "trigger.min_permission", Default: "write",
		Meaning: "The commenter's minimum repository permission: `read`, `triage`, `write`, `maintain` or `admin`."},
	{Path: "models", Note: "none: required",
		Meaning: "The models, by name (see below). At least one."},
	{Path: "models.<name>.dir", Note: "none: required",
		Meaning: "The model directory (relative: to the checkout or the runner's working folder). The run name is `<basename of dir>_<tag>`, so two models may not share a directory name, and the basename must make a valid run name (printable, no leading dot; [docs/inputs.md](docs/inputs.md))."},
	{Path: "models.<name>.model_type", Note: "none",
		Meaning: "The model's `model_type` (`llama`, `qwen3_moe`, ...). Give this or `config`."},
	{Path: "models.<name>.config", Note: "none",
		Meaning: "*Repo path* of the model's `config.json`, read on the runner for `model_type` and the rope scaling. Give this or `model_type`, not both."},
	{Path: "models.<name>.weights_gib", Note: "none: required",
		Meaning: "Size of the weights in GiB, > 0 and at most 4096."},
	{Path: "default_models", Note: "all models, in file order",
		Meaning: "Names of the models a plain `/profile rocm` runs (without `models=`). Each must be a configured model, once."},
	{Path: "sampling", Default: "[greedy]",
		Meaning: "Sampling settings, as run tags: `greedy`, `t<T>` or `t<T>-p<P>` with 0 < P <= 1 (`t0.7`, `t0.7-p0.95`). Each setting once (`t0` is `greedy`), at most 32 settings, temperatures up to 100. Stored in canonical form (`t0.70` becomes `t0.7`)."},
	{Path: "shape", Note: "see below",
		Meaning: "The bench workload."},
	{Path: "shape.prompt", Default: "512",
		Meaning: "Prompt tokens (`--prompt-tokens`), >= 1."},
	{Path: "shape.generate", Default: "128",
		Meaning: "Generated tokens (`-n`), >= 1; the per-token divisor of the analysis."},
	{Path: "shape.warmup", Default: "20",
		Meaning: "Warmup tokens (`--warmup-tokens`), >= 0."},
	{Path: "runners", Default: "{rocm: [self-hosted, linux, rocm, gfx1151]}",
		Meaning: "Runner labels per backend."},
	{Path: "guard", Note: "see below",
		Meaning: "The idle-GPU guard."},
	{Path: "guard.idle_secs", Default: "90",
		Meaning: "Seconds of idle GPU (no KFD process, no compiler) required before each run, >= 1."},
	{Path: "guard.sample_hz", Default: "10",
		Meaning: "Samples per second of the in-run contention monitor, 1..100."},
	{Path: "guard.max_attempts", Default: "5",
		Meaning: "Attempts per run before giving up on a contended GPU, >= 1."},
	{Path: "guard.max_wait_secs", Default: "14400",
		Meaning: "The whole wait budget in seconds; not shorter than `idle_secs`."},
	{Path: "guard.max_foreign_cpu_pct", Default: "0",
		Meaning: "CPU use by other processes above which a run counts as contended; `0` = CPU-contention detection off. 0..100000 (percent of one core)."},
	{Path: "guard.lock", Default: "/tmp/mlxcel-rocm-gpu-guard.lock",
		Meaning: "The host-wide lock file, shared with the repository's `scripts/rocm_gpu_guard.sh`. An absolute, clean host path."},
	{Path: "branches", Note: "see below",
		Meaning: "The bot's branches."},
	{Path: "branches.profile", Default: "perfbot/rocm-profile",
		Meaning: "Prefix of the profile PRs' branches: each request has its own, `<profile>-pr-N` or `<profile>-issue-N` for a command on pull request or issue N, `<profile>` itself for a publish without one."},
	{Path: "branches.baseline", Default: "perfbot/rocm-baseline",
		Meaning: "Branch of the nightly baseline PR."},
	{Path: "branches.delete_stale", Default: "true",
		Meaning: "`true`: each profile's publish deletes the bot branches of requests whose issue or pull request is closed or merged (GitHub closes their bot PRs). `false` keeps them."},
	{Path: "results", Note: "see below",
		Meaning: "Where results are committed."},
	{Path: "results.profiles", Default: "benchmarks/rocm_profiles",
		Meaning: "*Repo path* of the results folders (`<gfx>_<commit8>/`)."},
	{Path: "results.reports", Default: "docs/benchmark_results",
		Meaning: "*Repo path* of the report pages."},
	{Path: "results.benchmarks", Default: "benchmarks",
		Meaning: "*Repo path* of the nightly benchmark CSVs."},
	{Path: "rules", Default: "\"\"",
		Meaning: "*Repo path* of the attribution rules file (classes, roles, port units, ranking overrides). `\"\"` = perfbot's shipped default rules."},
	{Path: "verify", Default: "[[python3, scripts/ci/check_kernel_port_dispatch.py]]",
		Meaning: "Commands run on the patched tree before pushing, each an argv list (no shell). `[]` = none."},
	{Path: "limits", Note: "see below",
		Meaning: "Bounds on one request."},
	{Path: "limits.max_models", Default: "8",
		Meaning: "Most models one request may run, 1..256. A plain `/profile rocm` (the `default_models`) must fit."},
	{Path: "limits.run_timeout_mins", Default: "240",
		Meaning: "Minutes one run may take, 1..7200 (GitHub Actions ends a self-hosted job after 5 days)."},
	{Path: "limits.comment_max_bytes", Default: "65536",
		Meaning: "Largest comment perfbot writes, 1..65536 (GitHub's limit). A compare or bisection comment longer than that is cut to fit, with a line in it and a note in the publish summary saying so."},
	{Path: "limits.max_repeats", Default: "10",
		Meaning: "Most repeats per side of one compare (`/bench rocm compare`, `/profile rocm compare`), 5..100: each side starts with 5 and runs up to this cap while the verdict is open. `repeats=N` may ask for fewer."},
	{Path: "limits.max_bisect_commits", Default: "64",
		Meaning: "Most commits in the range of one bisection (`/bench rocm bisect`), both ends included, 2..1024: a longer range is refused when the command is accepted."},
	{Path: "limits.max_bisect_runs", Default: "80",
		Meaning: "Most single-model runs one bisection may make, the ends included, 8..1000 (each end starts with 4 runs): a range that needs more than this at the least is refused when the command is accepted, and the bisection stops when it has spent them."},
	{Path: "trend", Note: "see below",
		Meaning: "Where the nightly publish puts the trend page ([docs/nightly.md](docs/nightly.md))."},
	{Path: "trend.publish", Default: "commit",
		Meaning: "`commit`: the page (Markdown and one SVG chart per host) in the baseline commit; `pages`: one HTML page pushed to `pages_branch` for GitHub Pages; `off`: no trend page."},
	{Path: "trend.path", Default: "docs/benchmark_results/trend",
		Meaning: "*Repo path* of the page's folder, on the baseline branch (`commit`) or on the Pages branch (`pages`, served at `https://OWNER.github.io/REPO/<path>/`). A folder of its own: not one of the `results` folders nor above them; no part may start with `.`."},
	{Path: "trend.pages_branch", Default: "gh-pages",
		Meaning: "The branch GitHub Pages serves (with `pages`): perfbot adds one commit over its head, touching only `<path>/index.html`, and never pushes over a commit it did not see. Not a default branch nor one of `branches`."},
	{Path: "compare", Note: "see below",
		Meaning: "The A/B compares ([docs/ab.md](docs/ab.md))."},
	{Path: "compare.fail_slower_pct", Default: "0",
		Meaning: "The compare's check run fails when a model and metric is called slower by this many percent or more (the change of the medians, after Holm's correction); `0` = the check run stays neutral. 0..1000."},
	{Path: "nightly", Note: "see below",
		Meaning: "The nightly baseline ([docs/nightly.md](docs/nightly.md))."},
	{Path: "nightly.creep_pct", Default: "5",
		Meaning: "Slow creep: the gap, in percent, between a model's current segment and the best segment of the last 90 days that the baseline page reports, 0.5..50."},
	{Path: "nightly.bisect_runs", Default: "80",
		Meaning: "The most single-model runs one nightly spends bisecting the regressions its A/B confirmed (all of them together; [docs/nightly.md](docs/nightly.md)); `0` = no bisection in the nightly. 0..1000."},
}

// Parent is the block a key belongs to: "" for a top-level key, "guard" for
// guard.idle_secs, "models.<name>" for models.<name>.dir.
func (k Key) Parent() string {
	if i := strings.LastIndexByte(k.Path, '.'); i >= 0 {
		return k.Path[:i]
	}
	return ""
}

// KeyTable renders keys as a Markdown table: key, default, meaning.
func KeyTable(keys []Key) string {
	var b strings.Builder
	b.WriteString("| key | default | meaning |\n| --- | --- | --- |\n")
	for _, k := range keys {
		def := k.Note
		if k.Default != "" {
			def = "`" + k.Default + "`"
		}
		b.WriteString("| `" + k.Path + "` | " + cell(def) + " | " + cell(k.Meaning) + " |\n")
	}
	return b.String()
}

// cell keeps a table cell in its column: a pipe would end it.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
