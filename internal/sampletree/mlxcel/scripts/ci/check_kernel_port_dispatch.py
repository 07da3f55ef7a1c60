#!/usr/bin/env python3
"""Check that ported kernels dispatch through backend predicates.

Rule 4 (the one this copy enforces): a backend gate in `src/**/*.rs` or `examples/*.rs`
must ask a predicate such as `gpu_backend_available()` instead of enumerating Metal and
CUDA (`metal_is_available() && cuda_is_available()`, either order, `||` too), except in
the files listed in BACKEND_ENUMERATION_TODO. Comment lines are ignored.

Run from the repository root: python3 scripts/ci/check_kernel_port_dispatch.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Files that still enumerate Metal and CUDA in a backend gate, because the predicate
# they need does not exist yet or has not been proven on every backend. Rule 4 skips
# them. Each entry names the predicate it waits for; remove the entry in the same change
# that moves the file to that predicate.
# 3 files still enumerate Metal and CUDA:
#   - src/lib/mlxcel-core/src/attention/sdpa_dispatch.rs
#   - src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs
#   - src/lib/mlxcel-models/src/moe/router.rs
BACKEND_ENUMERATION_TODO: set[str] = {
    # waits for fused_sdpa_available() (the ROCm flash-attention port, #1822)
    "src/lib/mlxcel-core/src/attention/sdpa_dispatch.rs",
    # waits for gpu_backend_available() to be proven on ROCm by these numeric tests
    "src/lib/mlxcel-core/src/grouped_gemm_numeric_tests.rs",
    # waits for fused_moe_available() (the ROCm top-k softmax port, #1819)
    "src/lib/mlxcel-models/src/moe/router.rs",
}

_PREFIX = r"(?:crate::|mlxcel_core::)?"
_ENUMERATION = re.compile(
    rf"!?\s*{_PREFIX}(metal|cuda)_is_available\(\)\s*(?:&&|\|\|)\s*!?\s*{_PREFIX}(metal|cuda)_is_available\(\)"
)


def rust_sources() -> list[Path]:
    return sorted(REPO.glob("src/**/*.rs")) + sorted(REPO.glob("examples/*.rs"))


def enumerating_lines(path: Path) -> list[int]:
    hits = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("//"):
            continue
        if any(m.group(1) != m.group(2) for m in _ENUMERATION.finditer(line)):
            hits.append(number)
    return hits


def main() -> int:
    failures = []
    sources = rust_sources()
    for path in sources:
        rel = path.relative_to(REPO).as_posix()
        hits = enumerating_lines(path)
        if rel in BACKEND_ENUMERATION_TODO:
            if not hits:
                failures.append(
                    f"{rel}:1: listed in BACKEND_ENUMERATION_TODO but no longer enumerates"
                    " Metal and CUDA; remove the entry"
                )
            continue
        for number in hits:
            failures.append(
                f"{rel}:{number}: rule 4: gate enumerates Metal and CUDA;"
                " use a backend predicate such as gpu_backend_available()"
            )
    for rel in sorted(BACKEND_ENUMERATION_TODO):
        if not (REPO / rel).is_file():
            failures.append(f"{rel}:0: listed in BACKEND_ENUMERATION_TODO but missing")
    if failures:
        print("Kernel port dispatch check failed:", file=sys.stderr)
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    waiting = len(BACKEND_ENUMERATION_TODO)
    summary = (
        f"Kernel port dispatch check passed: {len(sources)} Rust files scanned,"
        f" {waiting} awaiting a predicate"
    )
    print(summary + ("." if waiting else "; every backend gate asks a predicate."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
