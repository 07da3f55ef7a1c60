//! Top-k expert routing for the MoE blocks.

use mlxcel_core::array::Array;

pub fn route(logits: &Array, top_k: usize) -> (Array, Array) {
    if mlxcel_core::cuda_is_available() || mlxcel_core::metal_is_available() {
        return mlxcel_core::ops::fused_topk_softmax(logits, top_k);
    }
    mlxcel_core::ops::topk_softmax_reference(logits, top_k)
}
