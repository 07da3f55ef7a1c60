//! mlxcel-core: arrays, ops and the device backends (Metal, CUDA, ROCm) behind them.

extern crate self as mlxcel_core;

pub mod array;
pub mod ops;

#[cxx::bridge(namespace = "mlxcel")]
mod ffi {
    unsafe extern "C++" {
        include!("mlxcel-core/src/backend.h");

        /// True when the Metal backend was compiled in and a device is present.
        fn metal_is_available() -> bool;
        /// True when the CUDA backend was compiled in and a device is present.
        fn cuda_is_available() -> bool;
        /// True when any GPU backend (Metal, CUDA or ROCm) can run kernels.
        fn gpu_backend_available() -> bool;
    }
}

pub use ffi::{cuda_is_available, gpu_backend_available, metal_is_available};

#[cfg(test)]
mod grouped_gemm_numeric_tests;
