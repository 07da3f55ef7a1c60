// Package synth writes synthetic profile runs that speak the real formats: a rocprofv3
// kernel trace (any of the supported header layouts), its kernel_stats and agent_info,
// the bench's profiled and plain logs with phase marks, the model's config.json and a
// ground-truth file. No GPU or profiler is needed, so the analysis, the attribution, the
// runner and the demo are tested on runs whose every number is known.
//
// synth owns the shapes of the synthetic decode steps: kernel names, calls and durations
// taken from the published gfx1151 profile (Llama-3.1-8B, Qwen3-30B-A3B) and invented,
// class-correct names for the hybrid Mamba2 models, ordered so that the role rules of
// docs/analysis.md §5 give exactly the roles recorded in the truth. It must not import the
// analysis (the truth has to stay an independent oracle for it), run processes or talk
// to GitHub.
package synth
