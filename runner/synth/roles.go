package synth

// role is the model op a dispatch belongs to (docs/analysis.md §5). The synthesizer knows it
// because it placed the dispatch; the analysis has to find it from the order of names.
type role uint8

const (
	roleUnattributed role = iota
	roleSamplerTail
	roleSSMStep
	roleSSMConv
	roleSSMSilu
	roleSSMGatedNorm
	roleMoEExpertGEMV
	roleMoEActivation
	roleMoEWeightedSum
	roleMoEGatherIndices
	roleRopeAppend
	roleAddRMSJoinPostAttn
	roleAddRMSJoin
	rolePagedAttention
	numRoles
)

// RoleNames lists every role name in the index order used by Truth.DecodeRoles.
var RoleNames = []string{
	"unattributed",
	"sampler_tail",
	"ssm_step",
	"ssm_conv",
	"ssm_silu",
	"ssm_gated_norm",
	"moe_expert_gemv",
	"moe_activation",
	"moe_weighted_sum",
	"moe_gather_indices",
	"rope_append",
	"add_rms_join_post_attn",
	"add_rms_join",
	"paged_attention",
}

func (r role) String() string { return RoleNames[r] }
