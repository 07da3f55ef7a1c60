//! Numeric checks for the grouped GEMM (`gather_mm`) behind the MoE expert layers.
//!
//! Each test builds a small problem with known expert assignments, runs `gather_mm` on
//! the device and compares the result with a dense per-expert reference computed on the
//! host from the same inputs.
//!
//! GPU-only (Metal or CUDA); these skip on a CPU-only build.

use crate::array::Array;
use crate::ops::{gather_mm, matmul, take};
use crate::Dtype;

const ATOL_F32: f32 = 1e-4;
const ATOL_F16: f32 = 2e-2;

/// A deterministic, sign-alternating ramp, so a wrong expert shows up as a large error.
fn ramp(len: usize, scale: f32) -> Vec<f32> {
    (0..len).map(|i| ((i % 17) as f32 - 8.0) * scale).collect()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "length mismatch");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn dense_reference(x: &Array, w: &Array, experts: &[u32]) -> Vec<f32> {
    // Not `metal_is_available() || cuda_is_available()`: the reference runs on the host.
    let mut out = Vec::new();
    for (row, &e) in experts.iter().enumerate() {
        let xr = take(x, &[row as u32], 0).to_host();
        let we = take(w, &[e], 0).to_host();
        out.extend(matmul(&xr, &we).to_vec::<f32>());
    }
    out
}

#[test]
fn gather_mm_matches_dense_per_expert_reference() {
    if !crate::metal_is_available() && !crate::cuda_is_available() {
        return;
    }
    let (num_experts, rows, k, n) = (4, 6, 64, 32);
    let x = Array::from_slice(&ramp(rows * k, 0.01), &[rows, 1, k], Dtype::F32);
    let w = Array::from_slice(&ramp(num_experts * k * n, 0.02), &[num_experts, k, n], Dtype::F32);
    let experts: Vec<u32> = (0..rows as u32).map(|r| r % num_experts as u32).collect();
    let idx = Array::from_slice(&experts, &[rows], Dtype::U32);

    let got = gather_mm(&x, &w, None, Some(&idx)).to_vec::<f32>();
    let want = dense_reference(&x, &w, &experts);
    let err = max_abs_diff(&got, &want);
    assert!(err <= ATOL_F32, "gather_mm differs from the dense reference by {err}");
}

#[test]
fn gather_mm_selects_the_indexed_expert() {
    if !crate::metal_is_available() && !crate::cuda_is_available() {
        return;
    }
    // Every expert is the identity scaled by its index, so the output names the expert.
    let (num_experts, k) = (8, 16);
    let mut w = vec![0.0f32; num_experts * k * k];
    for e in 0..num_experts {
        for i in 0..k {
            w[e * k * k + i * k + i] = e as f32 + 1.0;
        }
    }
    let w = Array::from_slice(&w, &[num_experts, k, k], Dtype::F32);
    let x = Array::from_slice(&vec![1.0f32; k], &[1, 1, k], Dtype::F32);
    for e in 0..num_experts as u32 {
        let idx = Array::from_slice(&[e], &[1], Dtype::U32);
        let got = gather_mm(&x, &w, None, Some(&idx)).to_vec::<f32>();
        assert!(
            got.iter().all(|&v| v == e as f32 + 1.0),
            "expert {e} was not selected: got {:?}",
            &got[..4]
        );
    }
}

#[test]
fn gather_mm_half_precision_matches_reference() {
    if !crate::metal_is_available() && !crate::cuda_is_available() {
        return;
    }
    let (num_experts, rows, k, n) = (4, 5, 128, 64);
    let x = Array::from_slice(&ramp(rows * k, 0.01), &[rows, 1, k], Dtype::F32);
    let w = Array::from_slice(&ramp(num_experts * k * n, 0.02), &[num_experts, k, n], Dtype::F32);
    let experts: Vec<u32> = vec![3, 0, 2, 2, 1];
    let idx = Array::from_slice(&experts, &[rows], Dtype::U32);

    let got = gather_mm(&x.astype(Dtype::F16), &w.astype(Dtype::F16), None, Some(&idx))
        .astype(Dtype::F32)
        .to_vec::<f32>();
    let want = dense_reference(&x, &w, &experts);
    let err = max_abs_diff(&got, &want);
    assert!(err <= ATOL_F16, "f16 gather_mm differs from the reference by {err}");
}

#[test]
fn ramp_is_deterministic_and_signed() {
    let r = ramp(34, 1.0);
    assert_eq!(r[0], -8.0);
    assert_eq!(r[16], 8.0);
    assert_eq!(r[..17], r[17..]);
}
