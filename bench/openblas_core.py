"""Makes the PyTorch peer of a benchmark use the BLAS kernels its CPU has.

Debian's torch does its f32 matmuls in OpenBLAS, and Debian 12's OpenBLAS (0.3.21) does not know every newer CPU:
on a Sapphire Rapids VM it picks its "Prescott" (SSE3) kernels, so PyTorch ran a [1536, 768] x [768, 3072] matmul at
35 GFLOP/s on 2 threads, where OPENBLAS_CORETYPE=SkylakeX gives 247 (and a BERT-base f32 step took 24 s instead of
about 7). A peer slowed by a misdetection is not a fair peer, so the benchmarks that run PyTorch ask OpenBLAS which
core it detected and, when that core has no AVX2 kernels but the CPU has AVX-512 (or AVX2), set OPENBLAS_CORETYPE to
SkylakeX (or Haswell) for the PyTorch processes and say so. A user's own OPENBLAS_CORETYPE is left alone.
"""

import os
import re
import subprocess
import sys

# OpenBLAS cores whose kernels use AVX2 or better (x86-64).
_MODERN = ("haswell", "zen", "skylakex", "cooperlake", "sapphirerapids")


def detected_core(python=sys.executable):
    """The core OpenBLAS picks under torch here, e.g. 'Prescott', or None if it does not say."""
    env = dict(os.environ, OPENBLAS_VERBOSE="2")
    env.pop("OPENBLAS_CORETYPE", None)
    p = subprocess.run([python, "-c", "import torch; (torch.ones(8, 8) @ torch.ones(8, 8)).sum()"], env=env,
                       capture_output=True, text=True)
    m = re.search(r"Core:\s*(\S+)", p.stdout + p.stderr)
    return m.group(1) if m else None


def fix_openblas_core(python=sys.executable):
    """Sets os.environ['OPENBLAS_CORETYPE'] where OpenBLAS misdetects this CPU; returns a line saying what it did."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return f"OpenBLAS core: OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} (yours)"
    core = detected_core(python)
    if core is None or core.lower().startswith(_MODERN):
        return f"OpenBLAS core: {core or 'not reported'} (as detected)"
    try:
        flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "").split()
    except OSError:
        flags = []
    want = "SkylakeX" if "avx512f" in flags else "Haswell" if "avx2" in flags else None
    if want is None:
        return f"OpenBLAS core: {core} (as detected)"
    os.environ["OPENBLAS_CORETYPE"] = want
    return (f"OpenBLAS core: detected {core}, which has no AVX2 kernels, on a CPU with "
            f"{'AVX-512' if want == 'SkylakeX' else 'AVX2'}: PyTorch runs with OPENBLAS_CORETYPE={want}")
