#!/usr/bin/env python3
"""Regenerates tests/model/data/rope_golden.json: RoPE inv_freq and attention scaling per rope type, computed
with torch (Debian's python3-torch) after transformers' modeling_rope_utils (_compute_default_rope_parameters,
_compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters, _compute_yarn_parameters,
_compute_llama3_parameters), in the dtypes those functions use. Not run by the tests.

    /usr/bin/python3 tests/model/tools/make_rope_golden.py tests/model/data/rope_golden.json
"""
import json
import math
import sys

import torch


def base_inv(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim))


def default(p, head_dim, max_pos, seq_len):
    dim = int(head_dim * p.get("partial_rotary_factor", 1.0))
    return base_inv(p["rope_theta"], dim), 1.0


def linear(p, head_dim, max_pos, seq_len):
    inv, s = default(p, head_dim, max_pos, seq_len)
    return inv / p["factor"], s


def dynamic(p, head_dim, max_pos, seq_len):
    dim = int(head_dim * p.get("partial_rotary_factor", 1.0))
    factor = p["factor"]
    seq_len = seq_len if seq_len is not None and seq_len > max_pos else max_pos
    base = p["rope_theta"] * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
    return base_inv(base, dim), 1.0


def yarn(p, head_dim, max_pos, seq_len):
    base = p["rope_theta"]
    dim = int(head_dim * p.get("partial_rotary_factor", 1.0))
    omax = p.get("original_max_position_embeddings", max_pos)
    factor = p.get("factor", max_pos / omax)
    attention_factor = p.get("attention_factor")
    mscale, mscale_all_dim = p.get("mscale"), p.get("mscale_all_dim")

    def get_mscale(scale, m=1):
        if scale <= 1:
            return 1.0
        return 0.1 * m * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast, beta_slow = p.get("beta_fast") or 32, p.get("beta_slow") or 1

    def find_correction_dim(num_rotations):
        return (dim * math.log(omax / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = find_correction_dim(beta_fast), find_correction_dim(beta_slow)
    if p.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2).to(dtype=torch.float) / dim)
    inv_extrapolation = 1.0 / pos_freqs
    inv_interpolation = 1.0 / (factor * pos_freqs)
    extrapolation_factor = 1 - ramp
    inv = inv_interpolation * (1 - extrapolation_factor) + inv_extrapolation * extrapolation_factor
    return inv, attention_factor


def llama3(p, head_dim, max_pos, seq_len):
    inv, s = default(p, head_dim, max_pos, seq_len)
    factor, lf, hf = p["factor"], p["low_freq_factor"], p["high_freq_factor"]
    old = p["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / lf, old / hf
    wavelen = 2 * math.pi / inv
    inv_llama = torch.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - lf) / (hf - lf)
    smoothed = (1 - smooth) * inv_llama / factor + smooth * inv_llama
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, inv_llama), s


FUNCS = {"default": default, "linear": linear, "dynamic": dynamic, "yarn": yarn, "llama3": llama3}

CASES = [
    ("smollm2_default", {"rope_type": "default", "rope_theta": 100000.0}, 64, 8192, None),
    ("qwen_default_128", {"rope_type": "default", "rope_theta": 1000000.0}, 128, 32768, None),
    ("llama32_llama3", {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0,
                        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}, 64, 131072, None),
    ("gemma_linear_8", {"rope_type": "linear", "rope_theta": 1000000.0, "factor": 8.0}, 256, 131072, None),
    ("gemma_local", {"rope_type": "default", "rope_theta": 10000.0}, 256, 32768, None),
    ("yarn_4", {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
                "original_max_position_embeddings": 32768}, 128, 131072, None),
    ("yarn_mscale", {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0, "mscale": 1.0,
                     "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096, "beta_fast": 32,
                     "beta_slow": 1}, 64, 163840, None),
    ("dynamic_2_at_4096", {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}, 64, 2048, 4096),
    ("dynamic_below_max", {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}, 64, 2048, 100),
    ("partial_half", {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}, 64, 2048, None),
]


def main():
    out = {"generator": f"torch {torch.__version__} after transformers' modeling_rope_utils", "cases": []}
    for name, p, head_dim, max_pos, seq_len in CASES:
        inv, scaling = FUNCS[p["rope_type"]](p, head_dim, max_pos, seq_len)
        assert inv.dtype == torch.float32, name
        out["cases"].append({"name": name, "params": p, "head_dim": head_dim, "max_positions": max_pos,
                             "seq_len": seq_len or 0, "inv_freq": [float(x) for x in inv],
                             "attention_scaling": float(scaling)})
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
