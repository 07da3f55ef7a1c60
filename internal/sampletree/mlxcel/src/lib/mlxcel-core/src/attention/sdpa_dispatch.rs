//! Scaled dot-product attention: the fused kernel where a backend has one.

use crate::array::Array;

pub fn sdpa(q: &Array, k: &Array, v: &Array, scale: f32) -> Array {
    if crate::metal_is_available() || crate::cuda_is_available() {
        return crate::ops::fused_sdpa(q, k, v, scale);
    }
    crate::ops::sdpa_reference(q, k, v, scale)
}
