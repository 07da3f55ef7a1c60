package synth

import (
	"hash/fnv"
	"strings"
)

// kernel is one distinct kernel name of a run with the launch attributes the trace
// repeats on every row of it.
type kernel struct {
	name  string
	class string // the class docs/analysis.md §4 gives the name; tests check the regexes agree
	wg    int64  // workgroup size X (Y and Z are 1)
	lds   int64
	vgpr  int64
	sgpr  int64
}

// catalog interns the kernel names of one run; ops refer to kernels by index.
type catalog struct {
	kernels []kernel
	index   map[string]int32
}

func newCatalog() *catalog { return &catalog{index: map[string]int32{}} }

// k returns the index of name, adding it with its class on first use.
func (c *catalog) k(name, class string) int32 {
	if i, ok := c.index[name]; ok {
		return i
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	s := int64(h.Sum32())
	kn := kernel{name: name, class: class, wg: 256,
		vgpr: 16 + 8*(s%15), sgpr: 32 + 16*((s>>4)%7)}
	switch class {
	case "gemm", "qmm":
		kn.wg = 128
		kn.lds = 34816
		kn.vgpr = 256
	case "sdpa":
		kn.wg = 128
		kn.lds = 16384
	case "qmv", "gather_qmv":
		kn.lds = 2048
	case "sort", "scan", "reduce", "softmax", "logsumexp", "arg_reduce", "rms_norm":
		kn.lds = 1024 * (1 + (s>>8)%8)
	}
	c.index[name] = int32(len(c.kernels))
	c.kernels = append(c.kernels, kn)
	return c.index[name]
}

// sub fills the $T (model dtype) placeholder of a name template.
func sub(tmpl, t string) string { return strings.ReplaceAll(tmpl, "$T", t) }

const (
	f32 = "float"
	u32 = "unsigned int"
)

// Names of MLX's ROCm kernels. The first group (with $T the model dtype), the two SwiGLU
// kernels, the prefill GEMMs and rope variants are verbatim from the published gfx1151
// profile; the others follow the same naming so that they fall in the right class.
const (
	nQMV        = "void mlx::core::rocm::qmv_wide_kernel<$T, $T, 64, 4>($T const*, unsigned char const*, $T const*, $T const*, $T*, int, int, int, bool)"
	nGatherQMV  = "void mlx::core::rocm::gather_qmv_wide_kernel<$T, $T, 64>($T const*, unsigned char const*, $T const*, $T const*, unsigned int const*, unsigned int const*, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, mlx::core::rocm::hip_array<long, 10>, int, $T*, int, int, int, int, int, bool, bool, long)"
	nSDPA       = "void mlx::core::rocm::kernel_sdpav_1pass<$T, false, 128>($T const*, $T const*, $T const*, $T*, $T const*, mlx::core::rocm::AttnParams)"
	nFlash      = "void mlx::core::rocm::kernel_sdpa_flash_wmma<$T, true, 128, 64, 64>($T const*, $T const*, $T const*, $T*, float*, mlx::core::rocm::FAWmmaParams)"
	nRMS        = "void mlx::core::rocm::rms_norm_kernel<$T, 256, 4>($T const*, $T const*, $T*, float, unsigned int, long)"
	nCopyGG     = "void mlx::core::rocm::copy_gg_byval<$T, $T, long>($T const*, $T*, long, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, mlx::core::rocm::hip_array<long, 10>, int)"
	nCopyS      = "void mlx::core::rocm::copy_s<$T, $T, unsigned int, 4>($T const*, $T*, unsigned int)"
	nGatherRows = "void mlx::core::rocm::gather_rows_kernel<$T, int>($T const*, int const*, $T*, long, unsigned int, int)"
	nDequant    = "void mlx::core::rocm::affine_dequantize_packed_kernel<$T, 4>(unsigned char const*, $T const*, $T const*, $T*, unsigned long, int)"
	nArgPartial = "void mlx::core::rocm::arg_reduce_partial<$T, mlx::core::rocm::ArgMax<$T>, 256>($T const*, $T*, unsigned int*, unsigned long, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, int, long, int, int)"
	nArgFinal   = "void mlx::core::rocm::arg_reduce_final<$T, mlx::core::rocm::ArgMax<$T>, 256>($T const*, unsigned int const*, unsigned int*, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, int, unsigned long, int)"
	nGatherAxis = "void mlx::core::rocm::gather_axis_kernel<$T, int, 1, true, true>($T const*, int const*, $T*, long, long, long, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, mlx::core::rocm::hip_array<long, 10>, int, int, long, long)"
	nScatAxis   = "void mlx::core::rocm::scatter_axis_kernel<$T, int, false, 1, true, true>($T const*, int const*, $T*, long, long, long, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, mlx::core::rocm::hip_array<long, 10>, mlx::core::rocm::hip_array<long, 10>, int, int, long, long, long)"
	nSoftmax    = "void mlx::core::rocm::softmax_kernel<$T, $T, 256, 4>($T const*, $T*, int)"
	nBlockSort  = "void mlx::core::rocm::block_sort_kernel<$T, unsigned int, true, 32, 8>($T const*, unsigned int*, int, long, long, long, long)"
	nArange     = "void mlx::core::rocm::arange_kernel<unsigned int>(unsigned int*, unsigned int, unsigned int, unsigned long)"
	nRowReduce  = "void mlx::core::rocm::row_reduce_simple_kernel<float, float, mlx::core::rocm::Sum, 4>(float const*, float*, unsigned long, int)"
	nColReduce  = "void mlx::core::rocm::col_reduce_small<float, float, mlx::core::rocm::Sum, 4>(float const*, float*, mlx::core::rocm::ColReduceArgs, unsigned long)"
	nQMMDense   = "void mlx::core::rocm::qmm_wmma_dense_kernel<$T, $T, 4, 64, true>($T const*, unsigned int const*, $T const*, $T const*, $T*, int, int, int)"
	nFill       = "__amd_rocclr_fillBufferUnAligned"

	// Compiled (JIT-fused) elementwise kernels. The half and bf16 SwiGLU ones are fixture names.
	nSwiGLUHalf = "void mlx::core::rocm::Cf2ISigmoidADf2IBroadcastACEf2IBroadcastCAFf2IMultiplyDEGf2IBroadcastFBHf2IBroadcastBFIf2OMultiplyGH_VV_f2f2_6142509188972423790_contiguous<unsigned int, 16>(__half const*, __half const*, __half*, unsigned int)"
	nSwiGLUBF16 = "void mlx::core::rocm::CV2ISigmoidADV2IBroadcastACEV2IBroadcastCAFV2IMultiplyDEGV2IBroadcastFBHV2IBroadcastBFIV2OMultiplyGH_VV_V2V2_6142509188972423790_contiguous<unsigned int, 16>(hip_bfloat16 const*, hip_bfloat16 const*, hip_bfloat16*, unsigned int)"
	nSiluBF16   = "void mlx::core::rocm::CV2ISigmoidAV2OMultiplyAB_V_V2_1874402619937154853_contiguous<unsigned int, 16>(hip_bfloat16 const*, hip_bfloat16*, unsigned int)"
	nSoftplus   = "void mlx::core::rocm::Cf4IExpAf4OLog1pB_V_f4_3906211598147793326_contiguous<unsigned int, 16>(float const*, float*, unsigned int)"
	nRelu2      = "void mlx::core::rocm::CV2IMaximumAV2OSquareB_V_V2_5526304877916542301_contiguous<unsigned int, 16>(hip_bfloat16 const*, hip_bfloat16*, unsigned int)"
	nRouterSig  = "void mlx::core::rocm::Cf4ISigmoidAf4OAddAB_VV_f4f4_7093415526618236645_contiguous<unsigned int, 16>(float const*, float const*, float*, unsigned int)"

	// Mamba2 depthwise causal conv over the cached window (one step).
	nConv = "void mlx::core::rocm::conv1d_depthwise_update_kernel<hip_bfloat16, 4>(hip_bfloat16 const*, hip_bfloat16 const*, hip_bfloat16 const*, hip_bfloat16*, int, int, int)"

	// Prefill-only kernels of the Llama profile (fixture).
	nRopeFreqs = "void mlx::core::rocm::rope_freqs<__half, false, true>(__half const*, __half*, int const*, float const*, float, float, mlx::core::rocm::hip_array<long, 3>, mlx::core::rocm::hip_array<long, 3>, long, int, HIP_vector_type<unsigned int, 3u>, long)"
	nRopeBF16  = "void mlx::core::rocm::rope<hip_bfloat16, false, true>(hip_bfloat16 const*, hip_bfloat16*, int const*, float, float, mlx::core::rocm::hip_array<long, 3>, mlx::core::rocm::hip_array<long, 3>, long, int, HIP_vector_type<unsigned int, 3u>)"
	nCijk80    = "Cijk_Alik_Bljk_$TS_BH_Bias_HA_S_SAV_UserArgs_MT80x128x64_MI16x16x1_SN_LDSB0_AFC1_AG0_AGGSUA0_AGNTAB0_AFEM1_AFEM1_ASEM1_BL1_BS1_CD1_1_CLR0_CLS0_CADS0_DTLA0_DTLB0_DTLM0_DTVA0_DTVB0_DTVMXSA0_DTVMXSB0_DTVSM0_DPLB0_EPS0_ELFLR0_EMLLn1_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_HPLR0_ISA1151_ICIW0_IU1_K1_LDSTI0_LBSPPA128_LBSPPB128_LBSPPMXSA0_LBSPPMXSB0_LBSPPM0_LPA8_LPB8_LPMXSA0_LPMXSB0_LPM0_LRVW16_LWPMn1_MIAV1_MIWT5_2_MXLIBL_MXSFNS_MO40_MGRIPM1_NTn1_NTA0_NTB0_NTC0_NTD0_NTE0_NTMXSA0_NTMXSB0_NTM0_NTWS0_NVn1_NVA0_NVB0_NVC0_NVD0_NVE0_NVMXSA0_NVMXSB0_NVM0_NVWS0_NEPBS0_NLCA1_NLCB1_ONLL1_PAP0_PGL0_PGR2_PLR0_PKA0_SGROB0_SIA1_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKFTR0_SKFDPO0_SKWS0_SKXCCM0_SNLL0_SIP1_SGRO0_TDMI0_TDMIM0_TDMS0_TIN0_THn1_THA0_THB0_THC0_THD0_THE0_THMXSA0_THMXSB0_THM0_THWS0_TLDS1_TLDSM1_ULSGRO0_USL1_USLMX0_UDFMAC0_UIOFGRO0_UPLRP0_USFGROn1_USI0_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS32_WG16_8_1_WGMXCC1"
	nCijk64    = "Cijk_Alik_Bljk_$TS_BH_Bias_HA_S_SAV_UserArgs_MT64x128x64_MI16x16x1_SN_LDSB0_AFC1_AG0_AGGSUA0_AGNTAB0_AFEM1_AFEM1_ASEM1_BL1_BS1_CD1_1_CLR0_CLS0_CADS0_DTLA0_DTLB0_DTLM0_DTVA0_DTVB0_DTVMXSA0_DTVMXSB0_DTVSM0_DPLB0_EPS0_ELFLR0_EMLLn1_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_HPLR0_ISA1151_ICIW0_IU1_K1_LDSTI0_LBSPPA128_LBSPPB128_LBSPPMXSA0_LBSPPMXSB0_LBSPPM0_LPA8_LPB8_LPMXSA0_LPMXSB0_LPM0_LRVW16_LWPMn1_MIAV1_MIWT4_2_MXLIBL_MXSFNS_MO40_MGRIPM1_NTn1_NTA0_NTB0_NTC0_NTD0_NTE0_NTMXSA0_NTMXSB0_NTM0_NTWS0_NVn1_NVA0_NVB0_NVC0_NVD0_NVE0_NVMXSA0_NVMXSB0_NVM0_NVWS0_NEPBS0_NLCA1_NLCB1_ONLL1_PAP0_PGL0_PGR2_PLR0_PKA0_SGROB0_SIA1_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKFTR0_SKFDPO0_SKWS0_SKXCCM0_SNLL0_SIP1_SGRO0_TDMI0_TDMIM0_TDMS0_TIN0_THn1_THA0_THB0_THC0_THD0_THE0_THMXSA0_THMXSB0_THM0_THWS0_TLDS1_TLDSM1_ULSGRO0_USL1_USLMX0_UDFMAC0_UIOFGRO0_UPLRP0_USFGROn1_USI0_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS32_WG16_8_1_WGMXCC1"

	// Sampling kernels beyond greedy argmax.
	nRbits     = "void mlx::core::rocm::rbits_kernel<false>(unsigned int const*, unsigned int*, unsigned int, unsigned int, unsigned long)"
	nLogSumExp = "void mlx::core::rocm::logsumexp_kernel<float, float, 256, 4>(float const*, float*, int)"
	nSoftmaxF  = "void mlx::core::rocm::softmax_kernel<float, float, 256, 4>(float const*, float*, int)"
	nMBSort    = "void mlx::core::rocm::mb_block_sort_kernel<float, unsigned int, true, 256, 8>(float const*, unsigned int*, float*, unsigned int*, int, int, long, long)"
	nMBPart    = "void mlx::core::rocm::mb_block_partition_kernel<float, unsigned int, true>(float const*, unsigned int const*, int*, int, int, int)"
	nMBMerge   = "void mlx::core::rocm::mb_block_merge_kernel<float, unsigned int, true, 256, 8>(float const*, unsigned int const*, int const*, float*, unsigned int*, int, int, int)"
	nCumSum    = "void mlx::core::rocm::contiguous_scan<float, float, mlx::core::rocm::CumSum<float>, 4, true, false>(float const*, float*, unsigned long)"
	nSelect    = "void mlx::core::rocm::ternary_v<mlx::core::rocm::Select, bool, float, unsigned int, 4>(bool const*, float const*, float const*, float*, unsigned int)"
	nGatherAxF = "void mlx::core::rocm::gather_axis_kernel<float, unsigned int, 1, true, true>(float const*, unsigned int const*, float*, long, long, long, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, mlx::core::rocm::hip_array<long, 10>, int, int, long, long)"
	nScatAxF   = "void mlx::core::rocm::scatter_axis_kernel<float, unsigned int, false, 1, true, true>(float const*, unsigned int const*, float*, long, long, long, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, mlx::core::rocm::hip_array<long, 10>, mlx::core::rocm::hip_array<long, 10>, int, int, long, long, long)"
	nArgPartF  = "void mlx::core::rocm::arg_reduce_partial<float, mlx::core::rocm::ArgMax<float>, 256>(float const*, float*, unsigned int*, unsigned long, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, int, long, int, int)"
	nArgFinalF = "void mlx::core::rocm::arg_reduce_final<float, mlx::core::rocm::ArgMax<float>, 256>(float const*, unsigned int const*, unsigned int*, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, int, unsigned long, int)"
)

// binary returns a binary kernel name: kind is vv, vs, sv, ss or g.
func binary(kind, op, in, out string) string {
	if kind == "g" {
		return "void mlx::core::rocm::binary_g<mlx::core::rocm::" + op + ", " + in + ", " + out + ", long, 1>(" +
			in + " const*, " + in + " const*, " + out + "*, long, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, mlx::core::rocm::hip_array<long, 10>, int)"
	}
	return "void mlx::core::rocm::binary_" + kind + "<mlx::core::rocm::" + op + ", " + in + ", " + out + ", unsigned int, 4>(" +
		in + " const*, " + in + " const*, " + out + "*, unsigned int)"
}

func unary(op, in, out string) string {
	return "void mlx::core::rocm::unary_v<mlx::core::rocm::" + op + ", " + in + ", " + out + ", unsigned int, 4>(" + in + " const*, " + out + "*, unsigned int)"
}

func copyV(in, out string) string {
	return "void mlx::core::rocm::copy_v<" + in + ", " + out + ", unsigned int, 4>(" + in + " const*, " + out + "*, unsigned int)"
}

func copyG(t string) string {
	return "void mlx::core::rocm::copy_g_byval<" + t + ", " + t + ", long>(" + t + " const*, " + t + "*, long, mlx::core::rocm::hip_array<int, 10>, mlx::core::rocm::hip_array<long, 10>, int)"
}

const (
	nRopeSingleFreqs = "void mlx::core::rocm::rope_single_freqs_1d<__half, false, true>(__half const*, __half*, int const*, float const*, float, long, unsigned int, unsigned int, long)"
	nRopeSingle      = "void mlx::core::rocm::rope_single_1d<hip_bfloat16, false, true>(hip_bfloat16 const*, hip_bfloat16*, int const*, float, float, long, unsigned int, unsigned int)"
	nGatherRowsU     = "void mlx::core::rocm::gather_rows_kernel<unsigned int, int>(unsigned int const*, int const*, unsigned int*, long, unsigned int, int)"
)
