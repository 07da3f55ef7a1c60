package attrib

import (
	"slices"
	"strings"
	"testing"
)

// Kernel names in the demangled shape the trace holds.
const (
	kQmv      = "void mlx::core::rocm::qmv_wide_kernel<__half, __half, 64, 4>(__half const*, unsigned char const*, __half const*, __half const*, __half*, int, int, int, bool)"
	kGatherQ  = "void mlx::core::rocm::gather_qmv_wide_kernel<hip_bfloat16, hip_bfloat16, 64>(hip_bfloat16 const*, unsigned char const*)"
	kRms      = "void mlx::core::rocm::rms_norm_kernel<__half, 256, 4>(__half const*, __half const*, __half*, float, unsigned int, long)"
	kSdpa     = "void mlx::core::rocm::kernel_sdpav_1pass<__half, false, 128>(__half const*, mlx::core::rocm::AttnParams)"
	kAdd      = "void mlx::core::rocm::binary_vv<mlx::core::rocm::Add, __half, __half, unsigned int, 4>(__half const*, __half const*, __half*, unsigned int)"
	kMul      = "void mlx::core::rocm::binary_g<mlx::core::rocm::Multiply, __half, __half, long, 1>(__half const*, __half const*, __half*, long)"
	kDiv      = "void mlx::core::rocm::binary_vs<mlx::core::rocm::Divide, __half, __half, unsigned int, 4>(__half const*, __half const*, __half*, unsigned int)"
	kSub      = "void mlx::core::rocm::binary_vv<mlx::core::rocm::Subtract, float, float, unsigned int, 4>(float const*, float const*, float*, unsigned int)"
	kExp      = "void mlx::core::rocm::unary_v<mlx::core::rocm::Exp, float, float, unsigned int, 4>(float const*, float*, unsigned int)"
	kCopyV    = "void mlx::core::rocm::copy_v<__half, float, unsigned int, 4>(__half const*, float*, unsigned int)"
	kCopyGG   = "void mlx::core::rocm::copy_gg_byval<__half, __half, long>(__half const*, __half*, long, mlx::core::rocm::hip_array<int, 10>)"
	kRope     = "void mlx::core::rocm::rope_single_1d<__half, false, true>(__half const*, __half*, int const*, float, float, long, unsigned int, unsigned int)"
	kConv     = "void mlx::core::rocm::depthwise_conv1d_kernel<__half, 4>(__half const*, __half const*, __half*, int, int)"
	kSigmoid  = "void mlx::core::rocm::Cf2ISigmoidADf2OMultiplyAB_VV_f2f2_6142509188972423790_contiguous<unsigned int, 16>(__half const*, __half*, unsigned int)"
	kSwiGLU   = "void mlx::core::rocm::CV2ISigmoidADV2IMultiplyDEGV2OMultiplyGH_VV_V2V2_6142509188972423790_contiguous<unsigned int, 16>(hip_bfloat16 const*, hip_bfloat16*, unsigned int)"
	kArange   = "void mlx::core::rocm::arange_kernel<unsigned int>(unsigned int*, unsigned int, unsigned int, unsigned long)"
	kColRed   = "void mlx::core::rocm::col_reduce_small<float, float, mlx::core::rocm::Sum, 4>(float const*, float*, mlx::core::rocm::ColReduceArgs, unsigned long)"
	kRowRed   = "void mlx::core::rocm::row_reduce_simple_kernel<float, float, mlx::core::rocm::Sum, 4>(float const*, float*, unsigned long, int)"
	kArgRed   = "void mlx::core::rocm::arg_reduce_final<__half, mlx::core::rocm::ArgMax<__half>, 256>(__half const*, unsigned int const*, unsigned int*)"
	kGRows    = "void mlx::core::rocm::gather_rows_kernel<__half, int>(__half const*, int const*, __half*, long, unsigned int, int)"
	kDequant  = "void mlx::core::rocm::affine_dequantize_packed_kernel<__half, 4>(unsigned char const*, __half const*, __half const*, __half*, unsigned long, int)"
	kGemm     = "Cijk_Alik_Bljk_HHS_BH_MT64x64x32_MI16x16x16x1"
	kSort     = "void mlx::core::rocm::block_sort_kernel<__half, unsigned int, true, 32, 8>(__half const*, unsigned int*, int, long, long, long, long)"
	kPaged    = "void vllm::paged_attention_v2_kernel<__half, __half, 128, 16, 128>(float*, float*, __half*)"
	kPagedUp  = "void mlx::core::rocm::PAGED_merge_kernel<__half>(float*, __half*)"
	kSoftmax  = "void mlx::core::rocm::softmax_kernel<__half, __half, 256, 4>(__half const*, __half*, int)"
	kUnknownK = "void my_custom_kernel(float*)"
)

// disp is one hand-written dispatch: a kernel name and its grid (0: not the widest).
type disp struct {
	name string
	grid int64
}

// build turns a dispatch list into an Input with 1 us per dispatch and a 100 ns gap
// before each.
func build(ds []disp, hasGrid bool) Input {
	in := Input{Tokens: 1, HasGrid: hasGrid}
	idx := map[string]uint32{}
	for _, d := range ds {
		id, ok := idx[d.name]
		if !ok {
			id = uint32(len(in.Names))
			idx[d.name] = id
			in.Names = append(in.Names, d.name)
		}
		in.Name = append(in.Name, id)
		g := d.grid
		if !hasGrid {
			g = 0
		}
		in.Grid = append(in.Grid, g)
		in.DurNs = append(in.DurNs, 1000)
		in.GapNs = append(in.GapNs, 100)
		in.GPUSumNs += 1000
	}
	return in
}

// names is a shorthand for dispatches with grid 0.
func names(ns ...string) []disp {
	out := make([]disp, len(ns))
	for i, n := range ns {
		out[i] = disp{name: n}
	}
	return out
}

// rolesOf attributes the input and returns the role name of every dispatch ("-" for
// unattributed, to keep expectations short).
func rolesOf(t *testing.T, r *Rules, in Input) ([]string, *Result) {
	t.Helper()
	res, err := r.Attribute(in)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(res.Roles))
	for i, ro := range res.Roles {
		out[i] = res.RoleNames[ro]
		if out[i] == Unattributed {
			out[i] = "-"
		}
	}
	return out, res
}

func checkRoles(t *testing.T, ds []disp, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		g, w, n := "?", "?", "?"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if i < len(ds) {
			n = short(ds[i].name)
		}
		mark := "  "
		if g != w {
			mark = "!!"
		}
		b.WriteString(mark + " " + n + ": got " + g + ", want " + w + "\n")
	}
	t.Errorf("roles differ:\n%s", b.String())
}

// short cuts a kernel name to its template name for messages.
func short(name string) string {
	if i := strings.IndexByte(name, '<'); i > 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, "::"); i >= 0 {
		name = name[i+2:]
	}
	return name
}

// repeat returns n copies of s.
func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
