package results

// The commands the runner's jobs run and record in their manifests; the publisher names
// them to the reader (docs/runner.md, docs/nightly.md).
var (
	// BuildCommand builds the bench of a profile session.
	BuildCommand = []string{"cargo", "build", "--release", "--features", "rocm", "--bin", "mlxcel-bench-decode"}
	// BenchBuildCommand builds the nightly's binaries; HarnessCommand and
	// BaselineCommand are the mlxcel sweep and the mlx-lm baseline's sweep on that build.
	BenchBuildCommand = []string{"cargo", "build", "--release", "--features", "rocm", "--bin", "mlxcel", "--bin", "mlxcel-bench-decode"}
	HarnessCommand    = []string{"scripts/bench_decode.sh", "all", "--cooldown", "30", "--big-cooldown", "30"}
	BaselineCommand   = []string{"scripts/bench_mlxlm.py", "all", "--cooldown", "30", "--big-cooldown", "30"}
)

// RemeasureCommand is the harness's single-model mode for one model folder
// (docs/formats.md §6).
func RemeasureCommand(modelDir string) []string {
	return []string{"scripts/bench_decode.sh", "single", modelDir}
}

// TestModule is the Rust module of the grouped_gemm numeric tests (docs/formats.md §7).
const TestModule = "grouped_gemm_numeric_tests"
