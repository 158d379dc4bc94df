#!/usr/bin/python3
"""coretrain's training step against PyTorch's, same shapes, same threads, same run.

For each precision (f32, bf16) runs, as separate processes one after the other:
  coretrain bench step --layers L --hidden H ... [--bf16]
  this script in --torch-worker mode: the scripts/torch_reference.py BertForQuestionAnswering, AdamW
      (no decay on biases/LayerNorm, as HF), clip_grad_norm_(1.0), torch.autocast("cpu", bfloat16) for bf16
and prints both throughputs, their ratio and each process's peak RSS (getrusage ru_maxrss of the process).

  /usr/bin/python3 bench/step_vs_torch.py --coretrain build/release/apps/coretrain           # full size: ~10 s/step
  /usr/bin/python3 bench/step_vs_torch.py --coretrain ... --layers 2 --hidden 256 --heads 4 --intermediate 1024 --seq 128

Threads: OMP_NUM_THREADS if set, else all CPUs; both sides get the same number.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from openblas_core import fix_openblas_core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def torch_worker(a):
    import torch
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import torch_reference as R

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    cfg = dict(model_type="bert", vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
               num_attention_heads=a.heads, intermediate_size=a.intermediate,
               max_position_embeddings=max(512, a.seq), type_vocab_size=2)
    model = R.model_from_config(cfg)
    model.train()
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=3e-5)
    B, T = a.batch, a.seq
    g = torch.Generator().manual_seed(a.seed + 1)
    ids = torch.randint(1, a.vocab, (B, T), generator=g)
    types = (torch.arange(T) >= T // 4).long().expand(B, T).contiguous()
    mask = torch.ones(B, T, dtype=torch.long)
    start = T // 4 + torch.randint(0, max(1, T // 2), (B,), generator=g)
    end = torch.clamp(start + torch.randint(0, 8, (B,), generator=g), max=T - 1)
    times = []
    for s in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            loss, _, _ = model(ids, mask, types, start, end)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        print(f"  step {s}{' (warm-up)' if s < a.warmup else ''}: {dt * 1e3:.1f} ms, loss {float(loss):.4f}",
              flush=True)
        if s >= a.warmup:
            times.append(dt)
    sec = sum(times) / len(times)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("json: " + json.dumps({"samples_per_s": B / sec, "ms_per_step": sec * 1e3, "peak_rss_mb": rss,
                                 "threads": torch.get_num_threads(), "torch": torch.__version__}), flush=True)


def run(cmd, env):
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    result = None
    for line in p.stdout:  # streamed: a full-size step takes many seconds
        line = line.rstrip("\n")
        print("    " + line, flush=True)
        if line.startswith("json: "):
            result = json.loads(line[6:])
    p.wait()
    if p.returncode != 0 or result is None:
        sys.exit(f"step_vs_torch: {cmd[0]} failed (exit {p.returncode})")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coretrain", default=os.path.join(ROOT, "build", "release", "apps", "coretrain"))
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--intermediate", type=int, default=3072)
    ap.add_argument("--seq", type=int, default=384)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))
    ap.add_argument("--precisions", default="f32,bf16")
    ap.add_argument("--bf16", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        return torch_worker(a)
    print(fix_openblas_core(), flush=True)  # before any PyTorch process starts (bench/openblas_core.py)

    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    shape = ["--layers", str(a.layers), "--hidden", str(a.hidden), "--heads", str(a.heads), "--intermediate",
             str(a.intermediate), "--seq", str(a.seq), "--batch", str(a.batch), "--vocab", str(a.vocab),
             "--steps", str(a.steps), "--warmup", str(a.warmup), "--seed", str(a.seed)]
    rows = []
    for prec in a.precisions.split(","):
        flag = ["--bf16"] if prec == "bf16" else []
        ct = run([a.coretrain, "bench", "step"] + shape + flag, env)
        pt = run([sys.executable, os.path.abspath(__file__), "--torch-worker", "--threads", str(a.threads)] + shape
                 + flag, env)
        rows.append((prec, ct, pt))

    print(f"\nBERT QA training step, layers {a.layers} hidden {a.hidden} heads {a.heads} intermediate "
          f"{a.intermediate} seq {a.seq} batch {a.batch}, {a.threads} threads, {a.steps} timed steps")
    print(f"{'precision':9} {'coretrain samples/s':>20} {'PyTorch samples/s':>18} {'ratio':>7} "
          f"{'coretrain MFU':>14} {'coretrain RSS MB':>17} {'PyTorch RSS MB':>15}")
    for prec, ct, pt in rows:
        print(f"{prec:9} {ct['samples_per_s']:20.3f} {pt['samples_per_s']:18.3f} "
              f"{ct['samples_per_s'] / pt['samples_per_s']:6.2f}x {100 * ct['mfu']:13.1f}% "
              f"{ct['peak_rss_mb']:17.0f} {pt['peak_rss_mb']:15.0f}")


if __name__ == "__main__":
    main()
