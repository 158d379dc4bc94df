"""compare_step.py INIT NEW GOLDEN LR RTOL [WD]: one SGD step against a golden gradient.

The step is torch.optim.SGD's with the Trainer's parameter groups: p -= lr * (g + WD * p) where HF decays (names
without "bias" outside LayerNorm modules: transformers' get_decay_parameter_names), p -= lr * g elsewhere.

INIT and NEW are model.safetensors before and after coretrain's step; GOLDEN holds the reference gradient of
every parameter (scripts/task_step_golden.py; its metadata's init_sha256 names the INIT it was computed
from). For every tensor, g = (INIT - NEW) / LR (less WD * INIT where decayed) must be within RTOL * max|golden| of the golden (the tensor's, but no
less than FLOOR of the largest anywhere), plus NOISE_FACTOR times how far PyTorch's own float32 gradient of the
tensor is from the float64 golden (GOLDEN's float32_noise: where a gradient is a small difference of large
terms, float32 in any summation order is off by about that much), plus what rounding INIT - LR * g to float32
costs (an ulp of the larger of INIT and NEW, over LR). Every golden
tensor must be in NEW and every NEW tensor in the golden. Standard library only (the tests need no torch).
"""

import array
import hashlib
import json
import struct
import sys

FLOOR = 1e-3
NOISE_FACTOR = 10


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    tensors = {}
    for name, h in header.items():
        if h["dtype"] != "F32":
            sys.exit(f"{path}: {name} is {h['dtype']}, expected F32")
        a = array.array("f")
        a.frombytes(data[base + h["data_offsets"][0]:base + h["data_offsets"][1]])
        if sys.byteorder != "little":
            a.byteswap()
        tensors[name] = a
    return tensors, meta, data


def half_ulp(x):
    """Half the float32 spacing at |x| (an upper bound of the rounding error of a result of that size)."""
    x = abs(x)
    if x < 1.1754944e-38:
        return 7e-46
    (bits,) = struct.unpack("<I", struct.pack("<f", x))
    return 2.0 ** (((bits >> 23) & 0xFF) - 127 - 24)


def main():
    init_path, new_path, golden_path, lr, rtol = sys.argv[1:6]
    lr, rtol = float(lr), float(rtol)
    wd = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
    init, _, init_bytes = read_safetensors(init_path)
    new, _, _ = read_safetensors(new_path)
    golden, meta, _ = read_safetensors(golden_path)
    sha = hashlib.sha256(init_bytes).hexdigest()
    if meta.get("init_sha256") != sha:
        sys.exit(f"{init_path} (sha256 {sha}) is not the checkpoint {golden_path} was computed from "
                 f"({meta.get('init_sha256')}): ct_checkpoint_tool init changed; regenerate the goldens with "
                 "scripts/task_step_golden.py")
    missing = sorted(set(golden) - set(new))
    extra = sorted(set(new) - set(golden))
    if missing or extra:
        sys.exit(f"tensor names differ: not saved {missing}, not in the golden {extra}")
    failed = 0
    worst = (0.0, "")
    margin = (0.0, "")  # the largest error / tolerance
    # A tensor whose true gradient is 0 (the attention key bias: softmax does not see a shift common to all
    # keys) gets float32 noise from the terms that cancel: those are of the model's gradient size, so no
    # tensor's scale is taken below FLOOR of the largest |g| anywhere.
    top = max(max((abs(v) for v in g), default=0.0) for g in golden.values())
    noise = json.loads(meta.get("float32_noise", "{}"))
    for name, g in golden.items():
        a, b = init[name], new[name]
        decay = wd if "bias" not in name and "LayerNorm" not in name else 0.0
        scale = max(max(abs(v) for v in g), FLOOR * top)
        bad = None
        for i, ref in enumerate(g):
            got = (a[i] - b[i]) / lr - decay * a[i]
            err = abs(got - ref)
            tol = rtol * scale + NOISE_FACTOR * noise.get(name, 0.0) + 2 * half_ulp(max(abs(a[i]), abs(b[i]))) / lr
            if scale > 0 and err / scale > worst[0]:
                worst = (err / scale, name)
            if err / tol > margin[0]:
                margin = (err / tol, name)
            if err > tol and bad is None:
                bad = (i, got, ref, tol)
        if bad:
            failed += 1
            i, got, ref, tol = bad
            print(f"{name}[{i}]: coretrain's gradient {got:.9g}, torch's {ref:.9g} (tolerance {tol:.3g}, "
                  f"tensor max |g| {scale:.3g})")
    print(f"{len(golden)} tensors, worst error {worst[0]:.3g} of the tensor's max |g| ({worst[1]}), at most "
          f"{margin[0]:.3g} of the tolerance ({margin[1]}), loss {meta.get('loss')}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
