#!/usr/bin/python3
"""Goldens of core/numpy_rng (tests/core/numpy_rng_test.cpp) from NumPy itself (Debian's python3-numpy).

usage: /usr/bin/python3 scripts/numpy_rng_golden.py  -> tests/core/data/numpy_rng_golden.json

For several seeds (one 32-bit word, two, the edges): np.random.default_rng(seed)'s first raw 64-bit draws, its
first 32-bit draws (Generator.integers(0, 2**32, dtype=uint32) takes next_uint32 whole), and
permutation(n) for several n, whole for the small ones and, for the large ones, the first 32 entries and
sum(i * p[i]).
"""

import json
import os

import numpy as np

SEEDS = [0, 1, 42, 2**32 - 1, 2**32, 1234567890123, 2**63 + 5, 2**64 - 1]
SMALL = [0, 1, 2, 3, 10, 100, 1000]
LARGE = [65537, 200003]


def main():
    out = {"numpy": np.__version__, "cases": []}
    for seed in SEEDS:
        case = {"seed": str(seed)}  # as a string: JSON readers may not keep 64-bit integers exact
        case["u64"] = [str(v) for v in np.random.default_rng(seed).bit_generator.random_raw(6)]
        case["u32"] = [int(v) for v in np.random.default_rng(seed).integers(0, 2**32, size=7, dtype=np.uint32)]
        case["permutations"] = {str(n): [int(v) for v in np.random.default_rng(seed).permutation(n)] for n in SMALL}
        case["large"] = {}
        for n in LARGE:
            p = np.random.default_rng(seed).permutation(n).astype(np.int64)
            case["large"][str(n)] = {"head": [int(v) for v in p[:32]],
                                     "weighted_sum": str(int((np.arange(n, dtype=object) * p.astype(object)).sum()))}
        out["cases"].append(case)
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "core", "data",
                        "numpy_rng_golden.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
