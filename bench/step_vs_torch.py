#!/usr/bin/python3
"""coretrain's training step against PyTorch's, same shapes, same threads, same run.

For each precision (f32, bf16) runs, as separate processes one after the other:
  coretrain bench step --layers L --hidden H ... [--bf16]
  this script in --torch-worker mode: the scripts/torch_reference.py BertForQuestionAnswering, AdamW
      (no decay on biases/LayerNorm, as HF), clip_grad_norm_(1.0), torch.autocast("cpu", bfloat16) for bf16
and prints both throughputs, their ratio and each process's peak RSS (getrusage ru_maxrss of the process).

  /usr/bin/python3 bench/step_vs_torch.py --coretrain build/release/apps/coretrain           # full size: ~10 s/step
  /usr/bin/python3 bench/step_vs_torch.py --coretrain ... --layers 2 --hidden 256 --heads 4 --intermediate 1024 --seq 128

--model_type F --head H times another family or head instead (coretrain bench step --model_type F --head H) against
transformers' <Family>For<Head> as scripts/torch_reference.py writes it (the masked LM projecting every position,
as HF does), or, for deberta-v2 / modernbert (seq-cls only; deberta-v3-base's / ModernBERT-base's attention options),
against scripts/golden_deberta.py / golden_modernbert.py (eager, padded, as transformers runs them on CPU; dropout off
on that side only); --bert-mfu adds coretrain's BERT QA step at the same shape for the MFU comparison:

  /usr/bin/python3 bench/step_vs_torch.py --model_type deberta-v2 --vocab 128100 --seq 512 --batch 2 --bert-mfu
  /usr/bin/python3 bench/step_vs_torch.py --model_type modernbert --layers 22 --intermediate 1152 --vocab 50368 \
      --seq 1024 --batch 2 --bert-mfu

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


def reference_model(a):
    """The plain-PyTorch model of --model_type at the flags' shape, and a function running one loss on it."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    B, T = a.batch, a.seq
    g = torch.Generator().manual_seed(a.seed + 1)
    ids = torch.randint(4, a.vocab, (B, T), generator=g)
    mask = torch.ones(B, T, dtype=torch.long)
    sizes = dict(vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
                 num_attention_heads=a.heads, intermediate_size=a.intermediate)
    if a.model_type == "deberta-v2":  # deberta-v3-base's attention and embeddings, as `bench step` sets them
        import golden_deberta as D
        cfg = D.tiny(**sizes, max_position_embeddings=max(512, T), position_buckets=256, max_relative_positions=-1,
                     pooler_hidden_size=a.hidden, num_labels=2)
        model = D.TaskModel(cfg, "seq-cls")
        labels = torch.randint(0, 2, (B,), generator=g)
        return model, lambda: model(ids, mask, None, labels)[0]
    if a.model_type == "modernbert":  # ModernBERT-base's pattern: a global layer every 3rd, a 128-token window
        import golden_modernbert as M
        cfg = M.tiny(**sizes, max_position_embeddings=max(8192, T), global_attn_every_n_layers=3,
                     local_attention=128, **M.labels_n(2))
        model = M.Task(cfg, "seq-cls")
        M.hf_init(model, torch.Generator().manual_seed(a.seed))
        labels = torch.randint(0, 2, (B,), generator=g)
        return model, lambda: model(ids, mask, labels)[0]
    import torch_reference as R
    if a.model_type != "bert" or a.head != "qa":  # transformers' <Family>For<Head> (scripts/torch_reference.py)
        if a.model_type == "distilbert":
            cfg = dict(model_type="distilbert", vocab_size=a.vocab, dim=a.hidden, n_layers=a.layers,
                       n_heads=a.heads, hidden_dim=a.intermediate, max_position_embeddings=max(512, T))
        else:
            cfg = dict(model_type=a.model_type, **sizes, max_position_embeddings=max(512, T + 2),
                       type_vocab_size=2 if a.model_type in ("bert", "electra") else 1)
            if a.model_type == "electra":
                cfg["embedding_size"] = a.hidden
        cfg["num_labels"] = 9 if a.head == "token-cls" else 2  # as `bench step`
        model = R.TaskModel(cfg, a.head)
        types = None if a.model_type == "distilbert" else torch.zeros(B, T, dtype=torch.long)
        if a.head == "multiple-choice":  # rows are examples x 4 choices, as `bench step` forms them
            E = B // 4
            labels = torch.randint(0, 4, (E,), generator=g)
            v = lambda t: None if t is None else t.view(E, 4, T)  # noqa: E731
            return model, lambda: model(v(ids), v(mask), v(types), labels)[0]
        if a.head == "seq-cls":
            labels = torch.randint(0, 2, (B,), generator=g)
        else:  # token-cls: every token labelled; mlm: 15% of the tokens, every position projected (as HF)
            labels = torch.randint(0, 9 if a.head == "token-cls" else a.vocab, (B, T), generator=g)
            if a.head == "mlm":
                labels[torch.rand(B, T, generator=g) >= 0.15] = -100
        return model, lambda: model(ids, mask, types, labels)[0]
    cfg = dict(model_type="bert", vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
               num_attention_heads=a.heads, intermediate_size=a.intermediate,
               max_position_embeddings=max(512, a.seq), type_vocab_size=2)
    model = R.model_from_config(cfg)
    types = (torch.arange(T) >= T // 4).long().expand(B, T).contiguous()
    start = T // 4 + torch.randint(0, max(1, T // 2), (B,), generator=g)
    end = torch.clamp(start + torch.randint(0, 8, (B,), generator=g), max=T - 1)
    return model, lambda: model(ids, mask, types, start, end)[0]


def torch_worker(a):
    import torch

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    model, step_loss = reference_model(a)
    model.train()
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n or "norm" in n)]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n or "norm" in n]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=3e-5)
    B = a.batch
    times = []
    for s in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            loss = step_loss()
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
    ap.add_argument("--model_type", default="bert", choices=["bert", "distilbert", "roberta", "xlm-roberta", "electra",
                                                              "deberta-v2", "modernbert"],
                    help="the family; deberta-v2 / modernbert against scripts/golden_deberta.py / golden_modernbert.py "
                         "(eager, padded, dropout off, --head seq-cls only), the others against "
                         "scripts/torch_reference.py")
    ap.add_argument("--head", default=None, choices=["qa", "seq-cls", "token-cls", "mlm", "multiple-choice"],
                    help="default: qa for bert, seq-cls for the others")
    ap.add_argument("--bert-mfu", action="store_true",
                    help="also run coretrain's BERT QA model at the same shape and print its MFU beside the family's")
    ap.add_argument("--bf16", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.head is None:
        a.head = "qa" if a.model_type == "bert" else "seq-cls"
    if a.model_type in ("deberta-v2", "modernbert") and a.head != "seq-cls":
        sys.exit(f"step_vs_torch: --model_type {a.model_type} is compared with --head seq-cls only")
    if a.torch_worker:
        return torch_worker(a)
    try:  # the PyTorch side needs torch in this interpreter; without it there is nothing to compare
        import torch  # noqa: F401
    except ImportError as e:
        print(f"step_vs_torch: skipped: {sys.executable} cannot import torch ({e})")
        return 77  # CTest's SKIP_RETURN_CODE for the smoke test
    print(fix_openblas_core(), flush=True)  # before any PyTorch process starts (bench/openblas_core.py)

    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    shape = ["--layers", str(a.layers), "--hidden", str(a.hidden), "--heads", str(a.heads), "--intermediate",
             str(a.intermediate), "--seq", str(a.seq), "--batch", str(a.batch), "--vocab", str(a.vocab),
             "--steps", str(a.steps), "--warmup", str(a.warmup), "--seed", str(a.seed)]
    family = [] if (a.model_type, a.head) == ("bert", "qa") else ["--model_type", a.model_type, "--head", a.head]
    rows = []
    for prec in a.precisions.split(","):
        flag = ["--bf16"] if prec == "bf16" else []
        ct = run([a.coretrain, "bench", "step"] + shape + family + flag, env)
        pt = run([sys.executable, os.path.abspath(__file__), "--torch-worker", "--threads", str(a.threads),
                  "--model_type", a.model_type, "--head", a.head] + shape + flag, env)
        bert = run([a.coretrain, "bench", "step"] + shape + flag, env) if a.bert_mfu and family else None
        rows.append((prec, ct, pt, bert))

    what = "BERT QA" if not family else f"{a.model_type} {a.head}"
    print(f"\n{what} training step, layers {a.layers} hidden {a.hidden} heads {a.heads} intermediate "
          f"{a.intermediate} seq {a.seq} batch {a.batch}, {a.threads} threads, {a.steps} timed steps")
    print(f"{'precision':9} {'coretrain samples/s':>20} {'PyTorch samples/s':>18} {'ratio':>7} "
          f"{'coretrain MFU':>14} {'coretrain RSS MB':>17} {'PyTorch RSS MB':>15}"
          + (f" {'BERT QA MFU':>12}" if any(r[3] for r in rows) else ""))
    for prec, ct, pt, bert in rows:
        print(f"{prec:9} {ct['samples_per_s']:20.3f} {pt['samples_per_s']:18.3f} "
              f"{ct['samples_per_s'] / pt['samples_per_s']:6.2f}x {100 * ct['mfu']:13.1f}% "
              f"{ct['peak_rss_mb']:17.0f} {pt['peak_rss_mb']:15.0f}"
              + (f" {100 * bert['mfu']:11.1f}%" if bert else ""))


if __name__ == "__main__":
    sys.exit(main())
