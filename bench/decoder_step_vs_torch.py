#!/usr/bin/env python3
"""Decoder training step (forward + backward with the causal-LM loss) of coretrain against the plain-PyTorch
reference of tests/model/tools/make_decoder_golden.py (transformers' modeling code, eager attention, full
logits), same shape, f32, same thread count, alternating rounds; prints each side's tokens/s and the ratio.

    /usr/bin/python3 bench/decoder_step_vs_torch.py --preset smollm2-135m --block_size 1024 [--layers 4]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "model", "tools"))
import make_decoder_golden as ref  # noqa: E402

PRESETS = {
    "smollm2-135m": {"model_type": "llama", "hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": 30,
                     "num_attention_heads": 9, "num_key_value_heads": 3, "vocab_size": 49152, "rope_theta": 100000.0,
                     "tie_word_embeddings": True, "rms_norm_eps": 1e-5, "max_position_embeddings": 8192},
    "qwen2.5-0.5b": {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
                     "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
                     "rope_theta": 1000000.0, "tie_word_embeddings": True, "rms_norm_eps": 1e-6,
                     "max_position_embeddings": 32768},
    "qwen3-0.6b": {"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
                   "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
                   "rope_theta": 1000000.0, "tie_word_embeddings": True, "rms_norm_eps": 1e-6,
                   "max_position_embeddings": 40960},
}


def torch_step_seconds(cfg, block, steps):
    fam = ref.Family("bench", cfg)
    p = fam.params()
    ids = torch.randint(0, cfg["vocab_size"], (block,))
    pos = torch.arange(block)
    best = 1e30
    for s in range(steps + 1):
        for v in p.values():
            v.grad = None
        t0 = time.perf_counter()
        logits = fam.forward(p, ids, pos)
        loss = torch.nn.functional.cross_entropy(logits[:-1], ids[1:])
        loss.backward()
        dt = time.perf_counter() - t0
        if s > 0:
            best = min(best, dt)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="smollm2-135m", choices=sorted(PRESETS))
    ap.add_argument("--block_size", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=0)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--coretrain", default=os.path.join(HERE, "..", "build", "release", "apps", "coretrain"))
    a = ap.parse_args()
    cfg = dict(PRESETS[a.preset])
    cfg.setdefault("rms_norm_eps", 1e-6)
    if a.layers:
        cfg["num_hidden_layers"] = a.layers
    torch.set_num_threads(os.cpu_count())
    cmd = [a.coretrain, "bench", "decoder-step", "--preset", a.preset, "--block_size", str(a.block_size),
           "--steps", str(a.steps)] + (["--layers", str(a.layers)] if a.layers else [])
    ours, theirs = [], []
    for _ in range(a.rounds):
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        ours.append(out["best_ms"] / 1e3)
        theirs.append(torch_step_seconds(cfg, a.block_size, a.steps))
    o, t = min(ours), min(theirs)
    print(json.dumps({"preset": a.preset, "layers": cfg["num_hidden_layers"], "block_size": a.block_size,
                      "threads": os.cpu_count(), "torch": torch.__version__,
                      "coretrain_tokens_per_s": round(a.block_size / o, 1), "torch_tokens_per_s": round(a.block_size / t, 1),
                      "ratio": round(t / o, 2), "coretrain_mfu": out["mfu"], "peak_gflops": out["peak_gflops"]}))
    # No peak RSS here: Linux keeps ru_maxrss across execve, so a child of this (torch-sized) process reports the
    # parent's high-water mark; `coretrain bench decoder-step` run on its own gives its own.


if __name__ == "__main__":
    main()
