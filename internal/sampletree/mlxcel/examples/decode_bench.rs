//! Decode throughput on whatever GPU backend is present.

fn main() {
    if !mlxcel_core::gpu_backend_available() {
        eprintln!("decode_bench: no GPU backend; nothing to measure");
        std::process::exit(2);
    }
    let tokens = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(128u32);
    println!("decoding {tokens} tokens");
}
